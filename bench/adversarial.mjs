#!/usr/bin/env node
// Worst-case host cost per tool call, per input byte (DESIGN §4.4).
//
//   node --expose-gc bench/adversarial.mjs [--quick] [--sizes=16k,256k,1m,4m] [--only=a,b] [--timeout=60]
//
// Every tool a model drives (each workspace tool, each editor dialect command, a component's
// executeScript, a session turn's world.* calls, codeTool's run_js) gets the input that is worst
// for its host-side work at several sizes: many short lines for searches and diffs, one long
// line, long repeated context for patches, many files for listings and globs, pathological glob
// patterns, large write logs. Each call runs alone in a fresh `node --expose-gc` child (a hang
// is reported as a timeout instead of stopping the table) and is measured as:
//   - µs/B: wall time of the call over its input bytes (the arguments plus the files it works on);
//   - B/B: peak resident memory growth while it ran over its input bytes (Linux's VmHWM, reset
//     before the call, so native buffers freed before the call returns still count);
//   - answer: bytes of what the call returns (a ToolResult's content, a script's result, a turn's
//     outcome), which is capped however large the input.
// A linear tool has µs/B and B/B about constant across sizes: the `growth` column is the ratio of
// µs/B at the largest size to µs/B at the smallest size of 256 KiB or more (small inputs are
// dominated by fixed costs); near 1 is linear, about the size ratio is quadratic.
// Uses the addon in lib/native/ as built (`npm run build` or `npm run build:debug`).

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const KiB = 1024;
const MiB = 1024 * KiB;

/** `16k` → 16384. */
function parseSize(text) {
  const m = /^(\d+)([km]?)$/i.exec(text.trim());
  if (!m) throw new Error(`not a size: ${text}`);
  return Number(m[1]) * ({ k: KiB, m: MiB }[m[2].toLowerCase()] ?? 1);
}

/** `n` bytes of `line\n` repeated. */
const lines = (n, line) => `${line}\n`.repeat(Math.max(1, Math.floor(n / (line.length + 1))));
/** A file of `n` bytes, many short lines that all match a one-letter search. */
const manyLines = (n) => lines(n, 'a');

/**
 * The cases: `make(n, lib)` returns `{ call: () => Promise<answer>, bytes }` after setting up
 * the files the call works on (not timed). `answer` is measured by `answerBytes`.
 */
const CASES = {
  // Workspace tools
  fs_read: (n, q) => wsTool(q, { 'f.txt': manyLines(n) }, 'fs_read', { path: 'f.txt' }),
  fs_read_lines: (n, q) => wsTool(q, { 'f.txt': manyLines(n) }, 'fs_read_lines', { path: 'f.txt', start: 1, end: n }),
  fs_write: (n, q) => wsTool(q, {}, 'fs_write', { path: 'f.txt', content: manyLines(n) }),
  fs_patch_lines: (n, q) =>
    wsTool(q, { 'f.txt': manyLines(n) }, 'fs_patch_lines', {
      path: 'f.txt',
      start: 1,
      end: Math.floor(n / 2),
      replacement: lines(n, 'b'),
      expected: manyLines(n).slice(0, Math.floor(n / 2) * 2 - 1),
    }),
  fs_list: (n, q) => wsTool(q, manyFiles(n), 'fs_list', { path: 'd', recursive: true }),
  fs_stat: (n, q) => wsTool(q, { 'f.txt': manyLines(n) }, 'fs_stat', { path: 'f.txt' }),
  fs_mkdir: (n, q) => wsTool(q, {}, 'fs_mkdir', { path: 'a/'.repeat(Math.floor(n / 2)) }),
  fs_delete: (n, q) => wsTool(q, manyFiles(n), 'fs_delete', { path: 'd', recursive: true }),
  fs_search: (n, q) =>
    wsTool(q, { 'f.txt': manyLines(n) }, 'fs_search', { query: 'a', context: 20, maxResults: 1000 }),
  js_exec: (n, q) =>
    wsTool(q, { 'main.js': `${lines(n - 40, 'x = x + 1;')}console.log(x);`.replace(/^/, 'let x = 0;\n') }, 'js_exec', {
      path: 'main.js',
    }),
  // Anthropic text editor
  'text-editor view': (n, q) =>
    dialectTool(q, 'anthropic-text-editor', { 'f.txt': manyLines(n) }, 'str_replace_based_edit_tool', {
      command: 'view',
      path: '/f.txt',
    }),
  'text-editor create': (n, q) =>
    dialectTool(q, 'anthropic-text-editor', {}, 'str_replace_based_edit_tool', {
      command: 'create',
      path: '/f.txt',
      file_text: manyLines(n),
    }),
  'text-editor str_replace': (n, q) =>
    dialectTool(q, 'anthropic-text-editor', { 'f.txt': `${lines(n / 2, 'x y')}end\n` }, 'str_replace_based_edit_tool', {
      command: 'str_replace',
      path: '/f.txt',
      old_str: lines(n / 2, 'x y'),
      new_str: lines(n / 2, 'y x'),
    }),
  'text-editor insert': (n, q) =>
    dialectTool(q, 'anthropic-text-editor', { 'f.txt': manyLines(n / 2) }, 'str_replace_based_edit_tool', {
      command: 'insert',
      path: '/f.txt',
      insert_line: 1,
      new_str: lines(n / 2, 'b'),
    }),
  // Anthropic memory
  'memory view': (n, q) =>
    dialectTool(q, 'anthropic-memory', { 'memories/f.txt': manyLines(n) }, 'memory', {
      command: 'view',
      path: '/memories/f.txt',
    }),
  'memory str_replace': (n, q) =>
    dialectTool(q, 'anthropic-memory', { 'memories/f.txt': `${lines(n / 2, 'x y')}end\n` }, 'memory', {
      command: 'str_replace',
      path: '/memories/f.txt',
      old_str: lines(n / 2, 'x y'),
      new_str: lines(n / 2, 'y x'),
    }),
  // OpenAI apply_patch: one hunk whose context is the whole file of identical lines.
  'apply_patch update': (n, q) => {
    const file = lines(n / 2, 'same line');
    const context = file.replace(/^/gm, ' ').replace(/ $/, '');
    return dialectTool(q, 'openai-apply-patch', { 'f.txt': `${file}last\n` }, 'apply_patch', {
      operation: { type: 'update_file', path: 'f.txt', diff: `@@\n${context}-last\n+changed\n` },
    });
  },
  'apply_patch create': (n, q) =>
    dialectTool(q, 'openai-apply-patch', {}, 'apply_patch', {
      operation: { type: 'create_file', path: 'f.txt', diff: lines(n, '+a') },
    }),
  // MCP filesystem
  'mcp read_text_file': (n, q) =>
    dialectTool(q, 'mcp-filesystem', { 'f.txt': manyLines(n) }, 'read_text_file', { path: '/f.txt' }),
  'mcp write_file': (n, q) =>
    dialectTool(q, 'mcp-filesystem', {}, 'write_file', { path: '/f.txt', content: manyLines(n) }),
  'mcp edit_file': (n, q) =>
    dialectTool(q, 'mcp-filesystem', { 'f.txt': lines(n / 2, 'old') }, 'edit_file', {
      path: '/f.txt',
      edits: [{ oldText: lines(n / 2, 'old'), newText: lines(n / 2, 'new') }],
    }),
  'mcp search_files': (n, q) =>
    dialectTool(q, 'mcp-filesystem', manyFiles(n, 'a'.repeat(40)), 'search_files', {
      path: '/',
      pattern: '*a*a*a*a*a*a*a*b',
    }),
  'mcp directory_tree': (n, q) =>
    dialectTool(q, 'mcp-filesystem', manyFiles(n, 'a'.repeat(40)), 'directory_tree', {
      path: '/',
      excludePatterns: ['**/*a*a*a*a*a*a*a*b'],
    }),
  'mcp list_directory_with_sizes': (n, q) =>
    dialectTool(q, 'mcp-filesystem', manyFiles(n), 'list_directory_with_sizes', { path: '/d' }),
  'mcp read_multiple_files': (n, q) => {
    const files = manyFiles(n);
    return dialectTool(q, 'mcp-filesystem', files, 'read_multiple_files', {
      paths: Object.keys(files).map((p) => `/${p}`),
    });
  },
  // Components: a large literal written to a state, and a write log of many entries.
  'component big write': (n, q) => component(q, `table_state.big = ${JSON.stringify('x'.repeat(n))};`, n),
  'component write log': (n, q) =>
    component(q, `for (let i = 0; i < ${Math.floor(n / 16)}; i++) list_state[i] = i;`, n),
  'component sparse write': (n, q) => component(q, `list_state[${n}] = 1; list_state.length = 0;`, n),
  // Sessions: world.* from a turn.
  'world.search': (n, q) =>
    turn(q, { 'f.txt': manyLines(n) }, "return world.search('a', { context: 100, maxResults: 10000 }).matches.length;"),
  'world.read': (n, q) => turn(q, { 'f.txt': manyLines(n) }, "return world.read('f.txt').length;"),
  'world.write': (n, q) => turn(q, {}, `return world.write('f.txt', 'a\\n'.repeat(${Math.floor(n / 2)}));`, n),
  'world.list': (n, q) => turn(q, manyFiles(n), "return world.list('**/*a*a*a*b').length;"),
  // Code mode
  run_js: (n, q) => {
    const tool = q.codeTool();
    const code = `let x = 0;\n${lines(n - 40, 'x = x + 1;')}return x;`;
    return { call: () => tool.dispatch('run_js', { code }), bytes: code.length };
  },
};

/** The most files a case makes: a workspace holds at most 9,000 entries. */
const MAX_FILES = 8000;

/**
 * Files named `name` + index under d/, about `n` bytes of names and contents together: more
 * files up to MAX_FILES, then longer names (up to 200 characters).
 */
function manyFiles(n, name = 'file') {
  const files = {};
  const count = Math.max(1, Math.min(MAX_FILES, Math.floor(n / (name.length + 16))));
  const padded = name.padEnd(Math.min(200, Math.max(name.length, Math.floor(n / count) - 16)), name.at(-1));
  for (let i = 0; i < count; i++) files[`d/${padded}${i}.txt`] = `${i}\n`;
  return files;
}

function workspace(q, files) {
  const ws = new q.ZipWorkspace();
  let bytes = 0;
  for (const [p, text] of Object.entries(files)) {
    ws.writeFile(p, text);
    bytes += p.length + text.length;
  }
  return { ws, bytes };
}

function wsTool(q, files, name, args) {
  const { ws, bytes } = workspace(q, files);
  const set = q.workspaceTools(ws);
  return { call: () => set.dispatch(name, args), bytes: bytes + JSON.stringify(args).length };
}

function dialectTool(q, dialect, files, name, args) {
  const { ws, bytes } = workspace(q, files);
  const set = q.editorTools(ws, { dialect });
  return { call: () => set.dispatch(name, args), bytes: bytes + JSON.stringify(args).length };
}

function component(q, script, n) {
  const { StatefulComponent, StateType, Permission } = q;
  const anything = { '~standard': { version: 1, vendor: 'bench', validate: (value) => ({ value }) } };
  class Lists extends StatefulComponent {
    list = [];
    table = {};
    publicStates = {
      list_state: { type: StateType.public, permission: Permission.w, schema: anything, state: this.list },
      table_state: { type: StateType.public, permission: Permission.rw, schema: anything, state: this.table },
    };
  }
  const c = new Lists();
  c.securityConfig = { maxExecutionTime: 30_000, maxIterations: 1e9, maxMemoryUsage: 1024 };
  return { call: () => c.executeScript(script), bytes: Math.max(n, script.length) };
}

/** A turn running `code`; `made` counts bytes the code makes and hands to the host (world.write). */
function turn(q, files, code, made = 0) {
  const { ws, bytes } = workspace(q, files);
  const session = new q.Session({ workspace: ws, policy: { worldRules: { readOnly: false } } });
  return { call: () => session.executeTurn(code), bytes: bytes + code.length + made };
}

/** Bytes of an answer as the caller would hand it on. */
function answerBytes(answer) {
  if (answer && typeof answer.content === 'string') return Buffer.byteLength(answer.content);
  try {
    return Buffer.byteLength(JSON.stringify(answer) ?? '');
  } catch {
    return Number.NaN;
  }
}

function peakRss() {
  const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) * 1024 : process.memoryUsage().rss;
}

/** In the child: one call of one case at one size, printed as JSON. */
async function child(name, n) {
  const q = require(path.join(here, '..', 'lib', 'index.js'));
  const made = CASES[name](n, q);
  globalThis.gc?.();
  let canPeak = true;
  try {
    fs.writeFileSync('/proc/self/clear_refs', '5');
  } catch {
    canPeak = false;
  }
  const before = process.memoryUsage().rss;
  const started = process.hrtime.bigint();
  const answer = await made.call();
  const us = Number(process.hrtime.bigint() - started) / 1000;
  const after = canPeak ? peakRss() : process.memoryUsage().rss;
  const ok = answer?.ok ?? answer?.success ?? (answer?.outcome ? answer.outcome.tag : undefined);
  const code = answer?.code ?? answer?.outcome?.code ?? answer?.error?.code;
  process.stdout.write(
    JSON.stringify({ us, grow: Math.max(0, after - before), answer: answerBytes(answer), bytes: made.bytes, ok, code }),
  );
}

function fmt(x, digits = 3) {
  if (!Number.isFinite(x)) return '—';
  if (x === 0) return '0';
  return x >= 100 ? Math.round(x).toLocaleString('en-US') : x.toPrecision(digits);
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv[0] === '--child') return child(argv[1], Number(argv[2]));
  const option = (key) => argv.find((a) => a.startsWith(`--${key}=`))?.split('=')[1];
  const sizes = (option('sizes') ?? (argv.includes('--quick') ? '16k,256k' : '16k,256k,1m,4m')).split(',').map(parseSize);
  const only = option('only')?.split(',');
  const timeoutS = Number(option('timeout') ?? 60);
  const names = Object.keys(CASES).filter((n) => !only || only.some((o) => n.includes(o)));
  const header = sizes.map((s) => (s >= MiB ? `${s / MiB} MiB` : `${s / KiB} KiB`));
  console.log(`| tool call | ${header.map((h) => `µs/B ${h}`).join(' | ')} | growth | ${header.map((h) => `B/B ${h}`).join(' | ')} | answer (B) at ${header.at(-1)} | result |`);
  console.log(`| --- | ${header.map(() => '---:').join(' | ')} | ---: | ${header.map(() => '---:').join(' | ')} | ---: | --- |`);
  for (const name of names) {
    const rows = [];
    for (const n of sizes) {
      const r = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--child', name, String(n)], {
        encoding: 'utf8',
        timeout: timeoutS * 1000,
        maxBuffer: 1 << 20,
      });
      if (r.error?.code === 'ETIMEDOUT' || r.signal) rows.push({ timeout: true, signal: r.signal });
      else if (r.status !== 0) rows.push({ failed: (r.stderr || '').trim().split('\n').at(-1)?.slice(0, 80) });
      else rows.push(JSON.parse(r.stdout));
    }
    const perByte = rows.map((r) => (r.us !== undefined ? r.us / r.bytes : Number.NaN));
    const memPerByte = rows.map((r) => (r.grow !== undefined ? r.grow / r.bytes : Number.NaN));
    const firstLarge = sizes.findIndex((s) => s >= 256 * KiB);
    const base = perByte[firstLarge >= 0 && firstLarge < sizes.length - 1 ? firstLarge : 0];
    const growth = perByte.at(-1) / base;
    const last = rows.at(-1);
    const result = rows
      .map((r, i) =>
        r.timeout
          ? `${header[i]}: over ${timeoutS} s`
          : r.failed
            ? `${header[i]}: crashed (${r.failed})`
            : null,
      )
      .filter(Boolean);
    if (last.us !== undefined) result.unshift(`${last.ok === true ? 'ok' : last.ok === false ? 'failed' : last.ok}${last.code ? ` ${last.code}` : ''}`);
    console.log(
      `| ${name} | ${perByte.map((x) => fmt(x)).join(' | ')} | ${fmt(growth, 2)}× | ${memPerByte.map((x) => fmt(x, 2)).join(' | ')} | ${fmt(last.answer)} | ${result.join('; ')} |`,
    );
  }
}

await main();
