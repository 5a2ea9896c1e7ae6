// Drives a tool set with generated hostile arguments over a workspace holding hostile files, and
// checks each call against the host bounds.
import fc from 'fast-check';
import { ZipWorkspace } from '../../lib/index.js';
import type { ToolSet } from '../../lib/tools/index.js';
import {
  argsFor,
  expectBounded,
  expectToolResult,
  hostileText,
  inputSize,
  MiB,
  measure,
  PARAMS,
  PATHOLOGICAL,
} from './bounds.js';

/** A file name that makes a backtracking glob matcher take seconds. */
const LONG_NAME = `${'a'.repeat(40)}.txt`;

/** Files that make naive text algorithms slow: many short lines, one long line, repeats, deep and wide folders. */
export function hostileWorkspace(): { ws: ZipWorkspace; bytes: number; paths: string[] } {
  const ws = new ZipWorkspace();
  const files: Record<string, string> = {
    'big.txt': 'a\n'.repeat(MiB / 2),
    'long.txt': 'a'.repeat(256 * 1024),
    'repeat.txt': 'abc abc abc abc\n'.repeat(16 * 1024),
    [LONG_NAME]: 'a',
    [`${'d/'.repeat(30)}deep.txt`]: 'deep\n',
    'src/main.js': "console.log('hi');\n",
  };
  for (let i = 0; i < 300; i++) files[`wide/f${i}.txt`] = `file ${i}\n`;
  let bytes = 0;
  for (const [path, text] of Object.entries(files)) {
    ws.writeFile(path, text);
    bytes += text.length;
  }
  const paths = [...Object.keys(files).slice(0, 6), 'wide', 'wide/f7.txt', 'd', '.', '/', '~/', 'missing.txt'];
  return { ws, bytes, paths };
}

/** Path-like strings: the workspace's own paths most of the time, hostile text otherwise. */
export function pathLike(paths: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...paths, ...paths.map((p) => `/tmp/root/${p}`)) },
    { weight: 2, arbitrary: fc.constantFrom(...PATHOLOGICAL) },
    { weight: 1, arbitrary: hostileText(MiB) },
  );
}

/**
 * One property per tool of the set `make` builds: each run gets a fresh hostile workspace and
 * one call with generated arguments (as an object or as JSON text), which must come back as a
 * ToolResult within the bounds.
 */
export async function checkEveryTool(
  label: string,
  make: (ws: ZipWorkspace) => ToolSet,
  toolName: string,
): Promise<void> {
  const probe = hostileWorkspace();
  const tool = make(probe.ws).tools.find((t) => t.name === toolName);
  if (!tool) throw new Error(`${label} has no tool ${toolName}`);
  const args = argsFor(tool.inputSchema as Record<string, unknown>, pathLike(probe.paths));
  await fc.assert(
    fc.asyncProperty(args, fc.boolean(), async (a, asText) => {
      const { ws, bytes } = hostileWorkspace();
      const set = make(ws);
      const sent = asText ? JSON.stringify(a) : a;
      const cost = await measure(() => set.dispatch(toolName, sent));
      const what = `${label} ${toolName}(${JSON.stringify(a).slice(0, 200)})`;
      expectToolResult(what, cost.value);
      expectBounded(what, cost, bytes + inputSize(a));
    }),
    PARAMS,
  );
}
