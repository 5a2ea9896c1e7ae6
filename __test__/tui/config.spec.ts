// Where quickrealm chat connects: flags, then the environment with .env filling in, then Ollama.
// And the command line refusing what it cannot use before the screen starts.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { environmentWithDotEnv, ollamaBaseURL, parseDotEnv, resolveEndpoint } from '../../lib/tui/config.js';
import { BIN } from './tmux.js';

// The command line tests start node several times; a loaded machine makes that slow.
vi.setConfig({ testTimeout: 90_000 });

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('quickrealm chat settings', () => {
  it('parses .env files as shells and dotenv write them', () => {
    const text = [
      '# a comment',
      'PLAIN=value # trailing comment',
      'export EXPORTED=yes',
      "SINGLE='kept # as is'",
      'DOUBLE="line\\nbreak \\"quoted\\""',
      'EMPTY=',
      'not an assignment',
      '  SPACED = around  ',
    ].join('\n');
    expect(parseDotEnv(text)).toEqual({
      PLAIN: 'value',
      EXPORTED: 'yes',
      SINGLE: 'kept # as is',
      DOUBLE: 'line\nbreak "quoted"',
      EMPTY: '',
      SPACED: 'around',
    });
  });

  it('lets the real environment win over .env, and works without one', () => {
    dir = mkdtempSync(join(tmpdir(), 'quickrealm-chat-env-'));
    expect(environmentWithDotEnv(dir, { A: '1' })).toEqual({ env: { A: '1' }, dotEnvFile: null });
    writeFileSync(join(dir, '.env'), 'A=from-file\nB=from-file\n');
    const { env, dotEnvFile } = environmentWithDotEnv(dir, { A: 'real', C: undefined });
    expect(env).toEqual({ A: 'real', B: 'from-file' });
    expect(dotEnvFile).toBe(join(dir, '.env'));
  });

  it('picks the endpoint: --base-url, OPENAI_BASE_URL, OLLAMA_HOST, then Ollama on 127.0.0.1', () => {
    expect(resolveEndpoint({}, {})).toEqual({
      baseURL: 'http://127.0.0.1:11434/v1',
      apiKey: 'ollama',
      model: 'gpt-oss:20b',
    });
    const env = { OPENAI_BASE_URL: 'https://api.example.com/v1/', OLLAMA_HOST: 'gpu:11434', OPENAI_API_KEY: 'sk-1' };
    expect(resolveEndpoint({}, env)).toEqual({
      baseURL: 'https://api.example.com/v1',
      apiKey: 'sk-1',
      model: 'gpt-oss:20b',
    });
    expect(resolveEndpoint({ baseURL: 'http://flag/v1', model: 'm' }, env)).toMatchObject({
      baseURL: 'http://flag/v1',
      model: 'm',
    });
    expect(resolveEndpoint({}, { OLLAMA_HOST: 'gpu' }).baseURL).toBe('http://gpu:11434/v1');
    expect(resolveEndpoint({}, { OPENAI_BASE_URL: ' ', OLLAMA_HOST: '' }).baseURL).toBe('http://127.0.0.1:11434/v1');
  });

  it('reads OLLAMA_HOST as Ollama does', () => {
    expect(ollamaBaseURL('127.0.0.1:11434')).toBe('http://127.0.0.1:11434/v1');
    expect(ollamaBaseURL('0.0.0.0')).toBe('http://127.0.0.1:11434/v1');
    expect(ollamaBaseURL('http://gpu-box:8080')).toBe('http://gpu-box:8080/v1');
    expect(ollamaBaseURL('https://ollama.example.com')).toBe('https://ollama.example.com/v1');
    expect(ollamaBaseURL('http://gpu-box:11434/v1/')).toBe('http://gpu-box:11434/v1');
  });
});

describe('quickrealm chat on the command line', () => {
  const cli = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', input: '' });

  it('refuses a missing --zip, chat options on other commands, and a chat log that is not one', () => {
    dir = mkdtempSync(join(tmpdir(), 'quickrealm-chat-cli-'));
    const missing = cli(['chat']);
    expect(missing.status).toBe(2);
    expect(JSON.parse(missing.stderr)).toMatchObject({
      code: 'INVALID_INPUT',
      message: 'quickrealm chat needs --zip <file>',
    });

    const elsewhere = cli(['mcp', '--zip', join(dir, 'w.zip'), '--model', 'x']);
    expect(elsewhere.status).toBe(2);
    expect(JSON.parse(elsewhere.stderr).message).toMatch(/^--model belongs to quickrealm chat\./);
    expect(JSON.parse(cli(['chat', '--zip', 'w.zip', '--dialect', 'x']).stderr).message).toMatch(
      /^--dialect belongs to quickrealm mcp\./,
    );

    const log = join(dir, 'w.zip.chat.json');
    writeFileSync(log, '{"not": "a chat log"}');
    const bad = cli(['chat', '--zip', join(dir, 'w.zip')]);
    expect(bad.status).toBe(2);
    expect(bad.stdout).toBe('');
    expect(JSON.parse(bad.stderr)).toMatchObject({ code: 'CHAT_LOG_INVALID' });
    expect(readFileSync(log, 'utf8')).toBe('{"not": "a chat log"}');

    const help = cli(['--help']);
    expect(help.stdout).toMatch(/quickrealm chat --zip <file> \[--base-url <url>\] \[--model <name>\]/);
    expect(help.stdout).toMatch(/:history \[n\], :diff <id>, :undo \[n\], :redo \[n\], :restore <id>/);
  });
});
