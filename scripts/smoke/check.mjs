// What the smoke suite checks in a project that installed quickrealm from its tarballs, under
// the Node running this file: a `run` (the CLI), a live run with globals, a workspace exec, a
// session turn, and the MCP server over stdio and over HTTP, each through the installed copy.
// Prints one line of JSON: the Node version and each check's milliseconds; throws on a failure.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createRepl, restoreRepl, run, Session, ZipWorkspace } from 'quickrealm';

const require = createRequire(import.meta.url);
const BIN = require.resolve('quickrealm/package.json').replace(/package\.json$/, 'bin/quickrealm.js');
const work = mkdtempSync(join(tmpdir(), 'quickrealm-smoke-'));
const times = {};

function same(actual, expected, what) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${what}: expected ${e}, got ${a}`);
}

async function check(name, body) {
  const start = performance.now();
  try {
    await body();
  } catch (e) {
    throw new Error(`smoke check '${name}' failed on Node ${process.version}: ${e?.stack ?? e}`);
  }
  times[name] = Math.round(performance.now() - start);
}

const textOf = (r) => r.content.map((c) => c.text).join('');

try {
  await check('cli run', () => {
    const r = spawnSync(process.execPath, [BIN, 'run'], {
      input: JSON.stringify({ source: 'emit(String(6 * 7))' }),
      encoding: 'utf8',
    });
    same([r.status, r.stderr], [0, ''], 'exit and stderr');
    same(JSON.parse(r.stdout), { output: '42' }, 'output');
  });

  await check('live run with globals', async () => {
    const seen = [];
    const r = await run('const s = stat("x"); s.tags.push("c"); note(s.tags.length); return s.tags', {
      globals: { stat: () => ({ tags: ['a', 'b'] }), note: (n) => seen.push(n) },
    });
    same([r.ok, r.value, seen], [true, ['a', 'b', 'c'], [3]], 'live run');
  });

  await check('workspace exec', async () => {
    const ws = new ZipWorkspace();
    ws.writeFile('lib.mjs', 'export const twice = (n) => n * 2;\n');
    ws.writeFile('main.mjs', 'import { twice } from "./lib.mjs"; console.log(twice(21));\n');
    const r = await ws.exec('main.mjs');
    same([r.ok, r.exitCode, r.stdout], [true, 0, '42\n'], 'exec');
  });

  await check('session turn', async () => {
    const session = new Session({ policy: { worldRules: { readOnly: false } } });
    const turn = await session.executeTurn(
      'await world.write("a.txt", "hi"); env.n = 1; return await world.read("a.txt")',
    );
    same([turn.outcome.tag, turn.outcome.value, session.env], ['ok', 'hi', { n: 1 }], 'turn');
  });

  await check('persistent realm', async () => {
    const repl = createRepl();
    await repl.eval('const seen = new Map(); const note = (k) => seen.set(k, seen.size).size');
    const key = 'a smoke test key of 16+ bytes';
    const again = restoreRepl(repl.snapshot({ key }), { key });
    const r = await again.eval('note("a"); note("b")');
    same(r.value, 2, 'bindings kept through a snapshot');
  });

  await check('mcp stdio', async () => {
    const client = new Client({ name: 'smoke', version: '1' });
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '--zip', join(work, 'w.zip')] }),
    );
    try {
      await client.callTool({ name: 'fs_write', arguments: { path: 'f.txt', content: 'saved' } });
      const r = await client.callTool({
        name: 'run_js',
        arguments: { code: 'return fs.readFileSync("f.txt", "utf8")' },
      });
      same([r.isError, textOf(r)], [false, "value: 'saved'"], 'run_js over stdio');
    } finally {
      await client.close();
    }
    same(ZipWorkspace.open(join(work, 'w.zip')).readText('f.txt'), 'saved', 'saved zip');
  });

  await check('mcp http', async () => {
    const child = spawn(
      process.execPath,
      [BIN, 'mcp', '--http', '0', '--sessions', work, '--create-sessions', '--zip', join(work, 'h.zip')],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const url = await new Promise((resolve, reject) => {
        let err = '';
        child.stderr.setEncoding('utf8');
        child.stderr.on('data', (chunk) => {
          err += chunk;
          const line = err.split('\n').find((l) => l.startsWith('{"mcp":"listening"'));
          if (line) resolve(JSON.parse(line).url);
        });
        child.once('exit', (code) => reject(new Error(`the server exited with ${code}: ${err}`)));
      });
      const client = new Client({ name: 'smoke', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      const r = await client.callTool({
        name: 'execute_turn',
        arguments: { sessionId: 'smoke', code: 'env.k = (env.k ?? 0) + 1; return env.k' },
      });
      const again = await client.callTool({
        name: 'execute_turn',
        arguments: { sessionId: 'smoke', code: 'return env.k' },
      });
      same(
        [r.isError, r.structuredContent.outcome, again.structuredContent.outcome],
        [false, { tag: 'ok', value: 1 }, { tag: 'ok', value: 1 }],
        'turns over http',
      );
      await client.close();
    } finally {
      child.kill('SIGTERM');
    }
    same(await exited, 0, 'exit on SIGTERM');
  });
} finally {
  rmSync(work, { recursive: true, force: true });
}
console.log(JSON.stringify({ node: process.version, ms: times }));
