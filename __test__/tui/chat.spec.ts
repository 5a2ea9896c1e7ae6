// `quickrealm chat` as a person uses it: a tmux pane, keys typed, the screen read back, against
// a scripted OpenAI-compatible endpoint on 127.0.0.1.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ZipWorkspace } from '../../lib/index.js';
import { type Answer, answersTool, type FakeOpenAI, lastUserText, startFakeOpenAI } from './fake-openai.js';
import { EXIT_MARK, occurrences, type Screen, startChat, stopTmuxServer } from './tmux.js';

let api: FakeOpenAI | undefined;
let screens: Screen[] = [];
let dir: string | undefined;

afterEach(async () => {
  for (const s of screens) s.kill();
  screens = [];
  await api?.close();
  api = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});
afterAll(() => stopTmuxServer());

// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for colour codes is the point
const SGR = /\u001b\[[0-9;]*m/;
const READY = /Ctrl-D or :quit leaves/;
/** The status line printed after each turn. */
const TURN_DONE = /tokens: .* this turn/;

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
    api = await startFakeOpenAI((body) =>
      lastUserText(body) === 'stream please'
        ? {
            kind: 'stream',
            parts: ['First half', ' of the answer;', ' second half arrives later.'],
            gate: { after: 1, open: gate },
            usage: { prompt_tokens: 1234, completion_tokens: 56 },
          }
        : writer(body),
    );
    const cwd = workdir();
    const zip = join(cwd, 'work.zip');
    const screen = open(['--zip', zip, '--model', 'test-model'], { OPENAI_BASE_URL: api.baseURL });
    await screen.waitFor(READY);
    expect(screen.text()).toMatch(/test-model/);

    // Streaming: the first parts are on screen while the endpoint still holds the rest back.
    screen.type('stream please');
    let shown = await screen.waitFor(/First half of the answer;/);
    expect(shown).not.toMatch(/second half/);
    open_();
    shown = await screen.waitFor(TURN_DONE);
    expect(shown).toMatch(/First half of the answer; second half arrives later\./);
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

    // :undo reverts and saves at once.
    screen.type(':undo');
    await screen.waitFor(/undid #1 · saved work\.zip/);
    expect(ZipWorkspace.open(zip).exists('greeting.txt')).toBe(false);

    screen.type(':redo');
    await screen.waitFor(/redid #1 · saved work\.zip/);
    expect(ZipWorkspace.open(zip).readText('greeting.txt')).toBe('hello, zip\n');

    screen.type(':restore 1');
    await screen.waitFor(/already as they were after #1/);

    screen.type(':quit');
    await screen.waitFor(new RegExp(`bye[^\\n]*\\n(.|\\n)*\\${EXIT_MARK} 0\\]`));
  });
});
