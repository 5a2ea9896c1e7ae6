// `quickrealm chat` as a person uses it: a tmux pane, keys typed, the screen read back, against
// a scripted OpenAI-compatible endpoint on 127.0.0.1.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { ZipWorkspace } from '../../lib/index.js';
import { type Answer, answersTool, type FakeOpenAI, lastUserText, startFakeOpenAI } from './fake-openai.js';
import { BIN, EXIT_MARK, occurrences, type Screen, startChat, stopTmuxServer } from './tmux.js';

let api: FakeOpenAI | undefined;
let screens: Screen[] = [];
let dir: string | undefined;
let child: ChildProcess | undefined;

afterEach(async () => {
  child?.kill();
  child = undefined;
  for (const s of screens) s.kill();
  screens = [];
  await api?.close();
  api = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});
afterAll(() => stopTmuxServer());
// Each wait allows 20 s on a loaded machine; a test makes several.
vi.setConfig({ testTimeout: 90_000 });

// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for colour codes is the point
const SGR = /\u001b\[[0-9;]*m/;
const READY = /Ctrl-D or :quit leaves/;
/** The status line printed after each turn. */
const TURN_DONE = /tokens: .* this turn · /;

function workdir() {
  dir = mkdtempSync(join(tmpdir(), 'quickrealm-chat-'));
  return dir;
}

function open(args: string[], env: Record<string, string>) {
  const screen = startChat(args, { cwd: dir!, env });
  screens.push(screen);
  return screen;
}

/** Types a message and waits for the turn's status line. */
async function send(screen: Screen, text: string) {
  const before = occurrences(screen.text(), TURN_DONE);
  screen.type(text);
  return screen.waitFor((s) => occurrences(s, TURN_DONE) > before);
}

/** A model that writes a file when asked to, and otherwise echoes. */
const writer = (body: any): Answer => {
  if (answersTool(body)) {
    const result = body.messages[body.messages.length - 1].content;
    return { kind: 'stream', parts: ['The tool said: ', result] };
  }
  const text = lastUserText(body);
  if (text.includes('write the greeting')) {
    return {
      kind: 'stream',
      parts: ['Writing it now.'],
      toolCalls: [
        {
          id: 'call_1',
          name: 'fs_write',
          arguments: JSON.stringify({ path: 'greeting.txt', content: 'hello, zip\n' }),
        },
      ],
    };
  }
  return { kind: 'stream', parts: ['You ', 'said: ', text] };
};

describe('quickrealm chat', () => {
  it('streams the answer as it comes, runs a tool call that writes the zip, lists, undoes and quits', async () => {
    let open_ = () => {};
    const gate = new Promise<void>((resolve) => {
      open_ = resolve;
    });
    const cwd = workdir();
    const zip = join(cwd, 'work.zip');
    /** Whether the zip on disk held the greeting when the model got the tool's result. */
    let savedBeforeAnswer: boolean | undefined;
    api = await startFakeOpenAI((body) => {
      if (answersTool(body)) savedBeforeAnswer = existsSync(zip) && ZipWorkspace.open(zip).exists('greeting.txt');
      return lastUserText(body) === 'stream please'
        ? {
            kind: 'stream',
            reasoning: ['Pondering', ' the question.'],
            parts: ['First half', ' of the answer;', ' second half arrives later.'],
            gate: { after: 1, open: gate },
            usage: { prompt_tokens: 1234, completion_tokens: 56 },
          }
        : writer(body);
    });
    const screen = open(['--zip', zip, '--model', 'test-model'], { OPENAI_BASE_URL: api.baseURL });
    await screen.waitFor(READY);
    expect(screen.text()).toMatch(/test-model/);

    // Streaming: the first parts are on screen while the endpoint still holds the rest back.
    screen.type('stream please');
    let shown = await screen.waitFor(/First half of the answer;/);
    expect(shown).not.toMatch(/second half/);
    open_();
    shown = await screen.waitFor(TURN_DONE);
    expect(shown).toMatch(/thinking: Pondering the question\.\nFirst half of the answer; second half arrives later\./);
    expect(shown).toMatch(/tokens: 1,234 in, 56 out this turn/);
    expect(api.requests[0]).toMatchObject({
      model: 'test-model',
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(api.requests[0].tools.map((t: any) => t.function.name)).toContain('fs_write');

    // A tool call: the file is written and the zip on disk holds it before the final answer.
    expect(existsSync(zip)).toBe(false);
    shown = await send(screen, 'write the greeting');
    expect(shown).toMatch(/fs_write .*greeting\.txt.* → ok .*saved work\.zip/);
    expect(shown).toMatch(/The tool said: wrote 11 bytes to ~\/greeting\.txt \(history #1\)/);
    expect(savedBeforeAnswer).toBe(true);
    expect(ZipWorkspace.open(zip).readText('greeting.txt')).toBe('hello, zip\n');
    const answered = api.requests[api.requests.length - 1];
    expect(answered.messages.at(-2).tool_calls[0]).toMatchObject({ id: 'call_1', function: { name: 'fs_write' } });
    expect(answered.messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'call_1',
      content: 'wrote 11 bytes to ~/greeting.txt (history #1)',
    });

    // The chat log is written after the turn.
    const log = JSON.parse(readFileSync(`${zip}.chat.json`, 'utf8'));
    expect(log.messages.map((m: any) => m.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);

    screen.type(':history');
    await screen.waitFor(/#1 +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d +write ~\/greeting\.txt/);

    screen.type(':diff 1');
    await screen.waitFor(/\+hello, zip/);
    screen.type(':diff 99');
    await screen.waitFor(/HISTORY: no history entry #99/);
    screen.type(':undo two');
    await screen.waitFor(/usage: :undo \[n\]/);

    // :undo reverts and saves at once.
    screen.type(':undo');
    await screen.waitFor(/undid #1 · saved work\.zip/);
    expect(ZipWorkspace.open(zip).exists('greeting.txt')).toBe(false);

    screen.type(':redo');
    await screen.waitFor(/redid #1 · saved work\.zip/);
    expect(ZipWorkspace.open(zip).readText('greeting.txt')).toBe('hello, zip\n');

    screen.type(':restore 1');
    await screen.waitFor(/already as they were after #1/);

    // The model hears of the changes made outside the chat with the next message.
    await send(screen, 'what changed?');
    expect(lastUserText(api.requests[api.requests.length - 1])).toMatch(
      /^\[The user undid workspace history #1; .* The user redid workspace history #1; .*\]\n\nwhat changed\?$/,
    );

    screen.type(':quit');
    await screen.waitFor(new RegExp(`bye[^\\n]*\\n(.|\\n)*\\${EXIT_MARK} 0\\]`));
  });
});

describe('quickrealm chat: the chat log, .env and leaving', () => {
  it('resumes the chat log on the next start; reads .env without overriding the environment; Ctrl-D quits', async () => {
    api = await startFakeOpenAI(writer);
    const cwd = workdir();
    const zip = join(cwd, 'notes.zip');
    // The endpoint comes from .env; the key from the real environment wins over the file's.
    writeFileSync(
      join(cwd, '.env'),
      `# settings\nOPENAI_BASE_URL="${api.baseURL}"\nexport OPENAI_API_KEY=from-dotenv\n`,
    );
    const first = open(['--zip', zip], { OPENAI_API_KEY: 'from-environment' });
    await first.waitFor(READY);
    expect(first.text()).toMatch(/chat log .*notes\.zip\.chat\.json \(new\)/);
    expect(first.text()).toMatch(/gpt-oss:20b/);
    await send(first, 'remember the word pelican');
    expect(first.text()).toMatch(/You said: remember the word pelican/);
    expect(api.authorizations[0]).toBe('Bearer from-environment');
    expect(api.requests[0].model).toBe('gpt-oss:20b');
    first.type(':quit');
    await first.waitFor(new RegExp(`\\${EXIT_MARK} 0\\]`));

    const second = open(['--zip', zip], { OPENAI_API_KEY: 'from-environment' });
    await second.waitFor(READY);
    expect(second.text()).toMatch(/chat log .*notes\.zip\.chat\.json \(resumed 2 messages\)/);
    // Up recalls the resumed chat's last message; Ctrl-C clears the line again.
    second.keys('Up');
    await second.waitFor(/› remember the word pelican$/m);
    second.keys('Left', 'Left', 'C-c');
    await second.waitFor((s) => /› $/m.test(s) && !/› remember the word pelican$/m.test(s));
    await send(second, 'what was the word?');
    const last = api.requests[api.requests.length - 1];
    expect(last.messages.map((m: any) => [m.role, m.content])).toEqual([
      ['system', expect.any(String)],
      ['user', 'remember the word pelican'],
      ['assistant', 'You said: remember the word pelican'],
      ['user', 'what was the word?'],
    ]);
    second.keys('C-d');
    await second.waitFor(new RegExp(`bye(.|\\n)*\\${EXIT_MARK} 0\\]`));
    expect(JSON.parse(readFileSync(`${zip}.chat.json`, 'utf8')).messages).toHaveLength(4);

    // --chat names another log, which starts empty.
    const third = open(['--zip', zip, '--chat', join(cwd, 'other.json')], {});
    await third.waitFor(READY);
    expect(third.text()).toMatch(/other\.json \(new\)/);
  });
});

describe('quickrealm chat without a terminal', () => {
  it('reads piped lines, shows each after its prompt, and writes no escape codes', async () => {
    api = await startFakeOpenAI(writer);
    const cwd = workdir();
    const zip = join(cwd, 'piped.zip');
    child = spawn(process.execPath, [BIN, 'chat', '--zip', zip], {
      cwd,
      env: { PATH: process.env.PATH ?? '', OPENAI_BASE_URL: api.baseURL },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString('utf8');
    });
    child.stdin!.end('hello there\nwrite the greeting\n:history\n');
    const code = await new Promise<number | null>((resolve) => child!.on('close', resolve));
    expect(code).toBe(0);
    expect(out).toMatch(/› hello there\nYou said: hello there\n/);
    expect(out).toMatch(/› write the greeting\nWriting it now\.\n⚙ fs_write .* → ok/);
    expect(out).toMatch(/› :history\n#1 .*write ~\/greeting\.txt/);
    expect(out).toMatch(/bye · chat log /);
    expect(out).not.toContain('\u001b');
    expect(ZipWorkspace.open(zip).readText('greeting.txt')).toBe('hello, zip\n');
  });
});

describe('quickrealm chat: colour', () => {
  it('colours the screen, and writes no colour codes at all with NO_COLOR=1', async () => {
    api = await startFakeOpenAI(writer);
    const cwd = workdir();
    const zip = join(cwd, 'work.zip');
    const run = async (env: Record<string, string>) => {
      const screen = open(['--zip', zip], { OPENAI_BASE_URL: api!.baseURL, ...env });
      await screen.waitFor(READY);
      await send(screen, 'write the greeting');
      screen.type(':history');
      await screen.waitFor(/#\d+ .*write ~\/greeting\.txt/);
      screen.type(':bogus');
      await screen.waitFor(/unknown command :bogus/);
      return screen.text({ escapes: true });
    };
    expect(await run({})).toMatch(SGR);
    const plain = await run({ NO_COLOR: '1' });
    expect(plain).toMatch(/fs_write .* → ok/);
    expect(plain).not.toMatch(SGR);
    expect(plain).not.toContain('\u001b');
  });
});

describe('quickrealm chat: failures', () => {
  it('shows endpoint errors clearly and goes on; takes answers that are not streamed', async () => {
    api = await startFakeOpenAI((body) => {
      const text = lastUserText(body);
      if (text.endsWith('break please')) return { kind: 'error', status: 500, message: 'the model crashed' };
      if (text.endsWith('deny me')) return { kind: 'error', status: 401, message: 'invalid api key' };
      if (text.endsWith('no streaming')) return { kind: 'json', text: 'A whole answer at once.' };
      return writer(body);
    });
    const cwd = workdir();
    const zip = join(cwd, 'work.zip');
    const screen = open(['--zip', zip], { OPENAI_BASE_URL: api.baseURL, NO_COLOR: '1' });
    await screen.waitFor(READY);

    let shown = await send(screen, 'break please');
    expect(shown).toMatch(/error: the endpoint answered 500 the model crashed/);
    shown = await send(screen, 'deny me');
    expect(shown).toMatch(/error: the endpoint answered 401 invalid api key \(check OPENAI_API_KEY\)/);

    // The chat goes on, with nothing lost: the failed messages are still in the conversation.
    shown = await send(screen, 'no streaming');
    expect(shown).toMatch(/^A whole answer at once\.$/m);
    const last = api.requests[api.requests.length - 1];
    expect(last.messages.filter((m: any) => m.role === 'user').map((m: any) => m.content)).toEqual([
      'break please',
      'deny me',
      'no streaming',
    ]);
    await send(screen, 'write the greeting');
    expect(ZipWorkspace.open(zip).readText('greeting.txt')).toBe('hello, zip\n');
  });

  it('says when the endpoint cannot be reached (--base-url wins over the environment)', async () => {
    api = await startFakeOpenAI(writer);
    const closed = await startFakeOpenAI(writer);
    const deadURL = closed.baseURL;
    await closed.close();
    workdir();
    const screen = open(['--zip', join(dir!, 'w.zip'), '--base-url', deadURL], { OPENAI_BASE_URL: api.baseURL });
    await screen.waitFor(READY);
    const shown = await send(screen, 'hello?');
    expect(shown).toContain(`error: cannot reach ${deadURL}`);
    expect(shown).toMatch(/\(ECONNREFUSED\): is the server running\?/);
    expect(api.requests).toHaveLength(0);
    screen.type(':help');
    await screen.waitFor(/:restore <id> /);
  });

  it('stops a turn after the round cap and says so', async () => {
    api = await startFakeOpenAI(() => ({
      kind: 'stream',
      toolCalls: [{ id: `call_${Math.random().toString(36).slice(2)}`, name: 'fs_list', arguments: '{}' }],
    }));
    workdir();
    const screen = open(['--zip', join(dir!, 'w.zip')], { OPENAI_BASE_URL: api.baseURL, NO_COLOR: '1' });
    await screen.waitFor(READY);
    const shown = await send(screen, 'loop forever');
    expect(shown).toMatch(/stopped after 24 rounds of tool calls in one turn/);
    expect(api.requests).toHaveLength(24);
  });
});

describe('quickrealm chat: interrupting', () => {
  it('Ctrl-C stops an answer that is still coming; the chat goes on', async () => {
    const never = new Promise<void>(() => {});
    api = await startFakeOpenAI((body) =>
      lastUserText(body) === 'talk forever'
        ? { kind: 'stream', parts: ['Once upon a time', ' and then'], gate: { after: 0, open: never } }
        : writer(body),
    );
    workdir();
    const screen = open(['--zip', join(dir!, 'w.zip')], { OPENAI_BASE_URL: api.baseURL, NO_COLOR: '1' });
    await screen.waitFor(READY);
    const before = occurrences(screen.text(), TURN_DONE);
    screen.type('talk forever');
    await screen.waitFor(/Once upon a time/);
    screen.keys('C-c');
    const shown = await screen.waitFor((s) => occurrences(s, TURN_DONE) > before);
    // The terminal may echo the key as ^C.
    expect(shown).toMatch(/Once upon a time(\^C)?\n\(stopped\)/);
    expect(shown).toMatch(/· 1 message$/m);
    expect(shown).not.toMatch(/and then/);
    await send(screen, 'still there?');
    expect(screen.text()).toMatch(/You said: still there\?/);
    // Ctrl-C at the prompt does not leave at once; twice does.
    screen.keys('C-c');
    await screen.waitFor(/Ctrl-C again, Ctrl-D or :quit leaves/);
    screen.keys('C-c');
    await screen.waitFor(new RegExp(`\\${EXIT_MARK} 0\\]`));
  });
});

describe('quickrealm chat: untrusted output', () => {
  it('shows guest console output and model text with control characters escaped', async () => {
    const program = 'console.log("\\u001b[2J\\u001b[H\\u001b]0;pwned\\u0007\\u001b[31mred alert");\n';
    api = await startFakeOpenAI((body) => {
      const messages = body.messages;
      const toolResults = messages.filter((m: any) => m.role === 'tool').length;
      if (toolResults === 0) {
        return {
          kind: 'json',
          toolCalls: [
            { id: 'call_w', name: 'fs_write', arguments: JSON.stringify({ path: 'main.js', content: program }) },
          ],
        };
      }
      if (toolResults === 1) {
        return { kind: 'stream', toolCalls: [{ id: 'call_x', name: 'js_exec', arguments: '{"path":"main.js"}' }] };
      }
      return { kind: 'stream', parts: ['Ran it.\u001b[2J Still here.'] };
    });
    workdir();
    const zip = join(dir!, 'w.zip');
    const screen = open(['--zip', zip, '--verbose-tools'], { OPENAI_BASE_URL: api.baseURL });
    await screen.waitFor(READY);
    const shown = await send(screen, 'run a program');
    // Verbose: the arguments and the whole result, with the escapes as visible text.
    expect(shown).toMatch(/"path": "main\.js"/);
    expect(shown).toContain('exit code 0');
    expect(shown).toContain('\\u001b[2J\\u001b[H\\u001b]0;pwned\\u0007\\u001b[31mred alert');
    expect(shown).toContain('Ran it.\\u001b[2J Still here.');
    // Nothing was cleared or retitled: the banner is still on screen, the title untouched.
    expect(shown).toMatch(READY);
    expect(screen.title()).not.toMatch(/pwned/);
    expect(screen.text({ escapes: true })).not.toContain('\u001b[31m');
    expect(ZipWorkspace.open(zip).readText('main.js')).toBe(program);
  });
});
