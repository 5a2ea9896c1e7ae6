// The memory dialect against the vendor itself: Anthropic's SDK ships a memory tool backed by a
// real folder (BetaLocalFilesystemMemoryTool). The same commands go to both, and the answers
// must be the same text; a thrown SDK error counts as `Error: <message>`, as the SDK's tool
// runner reports it. The files here have no final newline and no folders are listed, the two
// places where the dialect differs on purpose (see anthropic-memory.js).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BetaLocalFilesystemMemoryTool } from '@anthropic-ai/sdk/tools/memory/node';
import { afterAll, describe, expect, it } from 'vitest';
import { ZipWorkspace } from '../../../lib/index.js';
import { editorTools } from '../../../lib/tools/dialects/index.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function pair() {
  const dir = mkdtempSync(join(tmpdir(), 'quickrealm-memory-'));
  dirs.push(dir);
  const sdk = await BetaLocalFilesystemMemoryTool.init(dir);
  const { dispatch } = editorTools(new ZipWorkspace(), { dialect: 'anthropic-memory' });
  return async (command: Record<string, unknown>) => {
    let expected: string;
    try {
      const handler = (sdk as unknown as Record<string, (c: unknown) => Promise<unknown>>)[command.command as string]!;
      expected = String(await handler.call(sdk, command));
    } catch (e) {
      expected = `Error: ${(e as Error).message}`;
    }
    const actual = await dispatch('memory', command);
    return { expected, actual: actual.content, ok: actual.ok };
  };
}

const SCRIPT: Record<string, unknown>[] = [
  { command: 'create', path: '/memories/notes.md', file_text: 'Alice likes tea\nBob likes coffee\nCarol likes juice' },
  { command: 'create', path: '/memories/notes.md', file_text: 'again' },
  { command: 'create', path: '/memories/projects/q3.md', file_text: 'Ship it' },
  { command: 'view', path: '/memories/notes.md' },
  { command: 'view', path: '/memories/notes.md', view_range: [2, -1] },
  { command: 'view', path: '/memories/notes.md', view_range: [1, 2] },
  { command: 'view', path: '/memories/missing.md' },
  { command: 'str_replace', path: '/memories/notes.md', old_str: 'coffee', new_str: 'espresso' },
  { command: 'str_replace', path: '/memories/notes.md', old_str: 'milk', new_str: 'x' },
  { command: 'str_replace', path: '/memories/notes.md', old_str: 'likes', new_str: 'x' },
  { command: 'str_replace', path: '/memories/missing.md', old_str: 'a', new_str: 'b' },
  { command: 'str_replace', path: '/memories/projects', old_str: 'a', new_str: 'b' },
  { command: 'insert', path: '/memories/notes.md', insert_line: 1, insert_text: 'Dave likes water\n' },
  { command: 'insert', path: '/memories/notes.md', insert_line: 0, insert_text: '# People' },
  { command: 'insert', path: '/memories/notes.md', insert_line: 9, insert_text: 'x' },
  { command: 'view', path: '/memories/notes.md' },
  { command: 'rename', old_path: '/memories/notes.md', new_path: '/memories/projects/q3.md' },
  { command: 'rename', old_path: '/memories/gone.md', new_path: '/memories/here.md' },
  { command: 'rename', old_path: '/memories/notes.md', new_path: '/memories/people/notes.md' },
  { command: 'view', path: '/memories/people/notes.md' },
  { command: 'rename', old_path: '/memories', new_path: '/memories/x' },
  { command: 'delete', path: '/memories/projects' },
  { command: 'delete', path: '/memories/projects' },
  { command: 'delete', path: '/memories' },
  { command: 'view', path: '/etc/passwd' },
  { command: 'create', path: '/etc/passwd', file_text: 'x' },
];

describe("anthropic-memory: the same answers as Anthropic's SDK", () => {
  it('answers a run of commands word for word', async () => {
    const both = await pair();
    for (const command of SCRIPT) {
      const { expected, actual } = await both(command);
      expect(actual, JSON.stringify(command)).toBe(expected);
    }
  });
});
