// `quickrealm mcp --http` as the MCP SDK's own client sees it over HTTP: the workspace tools of a
// zip, sessions as tools with an approval pause the client acts on, the bearer token, the Host
// and Origin checks, the body cap, stateless answers, SIGTERM, and the round trip per call.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { ZipWorkspace } from '../../lib/index.js';
import { textOf } from '../tools/mcp-client.js';
import { BIN, ROOT, type Served, serve } from './server.js';

const OPERATIONS = join(__dirname, 'fixtures', 'operations.mjs');
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'qr-mcp-http-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function start(args: string[], env?: NodeJS.ProcessEnv): Promise<Served> {
  const served = await serve(args, { env });
  cleanup.push(() => served.stop());
  return served;
}

async function connect(url: string, headers?: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  cleanup.push(() => client.close());
  return client;
}

/** A raw POST with the headers given (Host included, which fetch does not let a caller set). */
function post(
  url: string,
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => {
          text += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

type Structured = Record<string, any>;

describe('quickrealm mcp --http', () => {
  it('serves the workspace tools of a zip, saving each change', async () => {
    const dir = tempDir();
    const zip = join(dir, 'work.zip');
    const { url } = await start(['--zip', zip]);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const client = await connect(url);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('fs_write');
    expect(tools.map((t) => t.name)).toContain('run_js');
    expect(tools.map((t) => t.name)).not.toContain('execute_turn');

    const written = await client.callTool({ name: 'fs_write', arguments: { path: 'a.txt', content: 'over http' } });
    expect(written.isError).toBe(false);
    expect(ZipWorkspace.open(zip).readText('a.txt')).toBe('over http');
    const ran = await client.callTool({
      name: 'run_js',
      arguments: { code: 'return fs.readFileSync("a.txt", "utf8")' },
    });
    expect(textOf(ran)).toBe("value: 'over http'");
    expect(ran.structuredContent).toMatchObject({ ok: true, value: 'over http' });
    // A failure is a tool error carrying the stable code.
    const missing = await client.callTool({ name: 'fs_read', arguments: { path: 'nope.txt' } });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/^ERROR NOT_FOUND: /);
    expect(missing.structuredContent).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('runs session turns; a turn waiting for approval is a result the client approves and resumes', async () => {
    const dir = tempDir();
    const payments = join(dir, 'payments.log');
    const { url } = await start(['--sessions', dir, '--create-sessions', '--operations', OPERATIONS], {
      ...process.env,
      PAYMENTS_LOG: payments,
    });
    const client = await connect(url);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
      'execute_turn',
      'list_proposals',
      'approve',
      'reject',
      'resume',
    ]);

    const code =
      'await world.write("src/note.txt", "hello\\n"); const rate = await rates.get("EUR");' +
      'const paid = await pay.send({ amount: 42 }); return { rate, paid }';
    const paused = await client.callTool({ name: 'execute_turn', arguments: { sessionId: 'pay-1', code } });
    expect(paused.isError).toBe(false);
    expect(textOf(paused)).toMatch(/waiting for a person to approve: pay\.send/);
    const structured = paused.structuredContent as Structured;
    expect(structured.outcome.tag).toBe('needs-approval');
    expect(structured.approval.requests).toEqual([
      { id: expect.any(String), operation: 'pay.send', args: [{ amount: 42 }] },
    ]);
    expect(structured.approval.next).toEqual({ tool: 'resume', arguments: { sessionId: 'pay-1' } });
    const requestId = structured.approval.requests[0].id as string;

    // Each request is its own HTTP request to a new server: the state is the session folder's.
    const listed = await client.callTool({ name: 'list_proposals', arguments: { sessionId: 'pay-1' } });
    expect(listed.structuredContent).toMatchObject({
      status: 'paused',
      pending: [{ id: requestId, operation: 'pay.send' }],
    });
    expect(() => readFileSync(payments, 'utf8')).toThrow();

    const approved = await client.callTool({
      name: 'approve',
      arguments: { sessionId: 'pay-1', requestId },
    });
    expect(approved.structuredContent).toMatchObject({ decision: 'approved', next: { tool: 'resume' } });
    const resumed = await client.callTool({ name: 'resume', arguments: { sessionId: 'pay-1' } });
    expect(resumed.isError).toBe(false);
    expect((resumed.structuredContent as Structured).outcome).toEqual({
      tag: 'proposed',
      value: { rate: { currency: 'EUR', rate: 2 }, paid: { paid: 42, receipt: 'R-1' } },
    });
    expect(readFileSync(payments, 'utf8').trim().split('\n')).toEqual(['{"amount":42}']);
    const after = await client.callTool({ name: 'list_proposals', arguments: { sessionId: 'pay-1' } });
    expect(after.structuredContent).toMatchObject({
      status: 'active',
      pending: [],
    });
    expect((after.structuredContent as Structured).proposals).toContainEqual(
      expect.objectContaining({ path: 'src/note.txt', kind: 'create', dir: false }),
    );
    expect(textOf(after)).toContain('+hello');

    // Rejected: the operation is not run and the turn sees the refusal.
    const second = await client.callTool({
      name: 'execute_turn',
      arguments: { sessionId: 'pay-1', code: 'try { await pay.send({ amount: 7 }) } catch (e) { return e.message }' },
    });
    const [request2] = (second.structuredContent as Structured).approval.requests;
    await client.callTool({
      name: 'reject',
      arguments: { sessionId: 'pay-1', requestId: request2.id, reason: 'too small' },
    });
    const refused = await client.callTool({ name: 'resume', arguments: { sessionId: 'pay-1' } });
    expect(JSON.stringify((refused.structuredContent as Structured).outcome.value)).toContain('too small');
    expect(readFileSync(payments, 'utf8').trim().split('\n')).toHaveLength(1);

    // A bad request id: a tool error with the session's code, and nothing changed.
    const wrong = await client.callTool({ name: 'approve', arguments: { sessionId: 'pay-1', requestId: 'nope' } });
    expect(wrong.isError).toBe(true);
    expect((wrong.structuredContent as Structured).code).toMatch(/^[A-Z_]+$/);
  });

  it('without --create-sessions an unknown session is NOT_FOUND; a failed turn carries its code', async () => {
    const dir = tempDir();
    const { url } = await start(['--sessions', dir]);
    const client = await connect(url);
    const unknown = await client.callTool({
      name: 'execute_turn',
      arguments: { sessionId: 'ghost', code: 'return 1' },
    });
    expect(unknown.isError).toBe(true);
    expect(unknown.structuredContent).toEqual({ code: 'NOT_FOUND' });
    expect(textOf(unknown)).toMatch(/^ERROR NOT_FOUND: no session ghost/);
    const bad = await client.callTool({ name: 'list_proposals', arguments: { sessionId: '../etc' } });
    expect(bad.isError).toBe(true);
    expect((bad.structuredContent as Structured).code).toBe('INVALID_INPUT');

    const created = await start(['--sessions', dir, '--create-sessions']);
    const other = await connect(created.url);
    const failed = await other.callTool({
      name: 'execute_turn',
      arguments: { sessionId: 's', code: 'throw new TypeError("boom")' },
    });
    expect(failed.isError).toBe(true);
    expect(failed.structuredContent).toMatchObject({
      code: 'EVAL_ERROR',
      outcome: { tag: 'error', code: 'EVAL_ERROR' },
    });
  });

  it('with --token-env, refuses requests without the bearer token (401, WWW-Authenticate: Bearer)', async () => {
    const dir = tempDir();
    const token = 'a-long-secret-token-1234';
    const { url } = await start(['--zip', join(dir, 'w.zip'), '--token-env', 'QR_TEST_TOKEN'], {
      ...process.env,
      QR_TEST_TOKEN: token,
    });
    for (const authorization of [undefined, 'Bearer wrong', `Basic ${token}`, `Bearer ${token}x`]) {
      const r = await post(url, JSON.stringify(INITIALIZE), authorization ? { authorization } : {});
      expect(r.status, String(authorization)).toBe(401);
      expect(String(r.headers['www-authenticate'])).toMatch(/^Bearer /);
    }
    await expect(connect(url)).rejects.toThrow();
    const client = await connect(url, { Authorization: `Bearer ${token}` });
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);

    // The variable must be set: a server that would accept any token does not start.
    const r = spawnSync(
      process.execPath,
      [BIN, 'mcp', '--http', '0', '--zip', join(dir, 'w.zip'), '--token-env', 'QR_UNSET_VAR'],
      {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, QR_UNSET_VAR: '' },
      },
    );
    expect(r.status).toBe(2);
    expect(JSON.parse(r.stderr)).toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringMatching(/QR_UNSET_VAR/),
    });
  });

  it('refuses a foreign Origin or Host (DNS rebinding), an oversized body, and GET', async () => {
    const dir = tempDir();
    const { url } = await start(['--zip', join(dir, 'w.zip')]);
    const port = new URL(url).port;
    const body = JSON.stringify(INITIALIZE);
    expect((await post(url, body, { origin: 'http://evil.example' })).status).toBe(403);
    expect((await post(url, body, { host: `evil.example:${port}` })).status).toBe(403);
    expect((await post(url, body, { origin: `http://localhost:${port}`, host: `localhost:${port}` })).status).toBe(200);
    expect((await post(url, body, { host: `127.0.0.1:${port}` })).status).toBe(200);
    const huge = JSON.stringify({ ...INITIALIZE, params: { ...INITIALIZE.params, pad: 'x'.repeat(5 * 1024 * 1024) } });
    expect((await post(url, huge, {})).status).toBe(413);
    const get = await fetch(url, { headers: { accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
    expect((await fetch(url.replace(/\/mcp$/, '/other'), { method: 'POST', body })).status).toBe(404);
  });

  it('checks how its options go together', () => {
    for (const [args, message] of [
      [['mcp', '--http', '0'], /needs --zip <file> or --sessions/],
      [['mcp', '--zip', 'w.zip', '--host', '127.0.0.1'], /--host needs --http/],
      [['mcp', '--zip', 'w.zip', '--http', 'eighty'], /--http takes a port number/],
      [['mcp', '--zip', 'w.zip', '--http', '0', '--host', '0.0.0.0'], /every address: give --token-env/],
      [['mcp', '--zip', 'w.zip', '--create-sessions'], /--create-sessions needs --sessions/],
      [['mcp', '--sessions', '/no/such/folder', '--http', '0'], /is not a folder/],
      [
        ['mcp', '--sessions', __dirname, '--operations', 'no/such/module.mjs'],
        /^cannot load --operations no\/such\/module\.mjs: /,
      ],
      [
        ['mcp', '--sessions', __dirname, '--operations', join(__dirname, 'fixtures', 'no-operations.mjs')],
        /must export `operations`/,
      ],
      [['mcp', '--zip', 'w.zip', '--operations', OPERATIONS], /--operations needs --sessions/],
      [['run', '--http', '80'], /--http belongs to quickrealm mcp/],
    ] as const) {
      const r = spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(2);
      expect(JSON.parse(r.stderr).message).toMatch(message);
    }
  });

  it('offers the session tools over stdio too', async () => {
    const dir = tempDir();
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'mcp', '--sessions', dir, '--create-sessions', '--operations', OPERATIONS],
        cwd: ROOT,
        stderr: 'pipe',
      }),
    );
    cleanup.push(() => client.close());
    const turn = await client.callTool({
      name: 'execute_turn',
      arguments: { sessionId: 'io', code: 'return await rates.get("CHF")' },
    });
    expect(turn.structuredContent).toMatchObject({ outcome: { tag: 'ok', value: { currency: 'CHF', rate: 2 } } });
  });

  it('on SIGTERM finishes the request in flight, then exits 0', async () => {
    const dir = tempDir();
    const served = await start(['--zip', join(dir, 'w.zip')]);
    const client = await connect(served.url);
    const slow = client.callTool({
      name: 'run_js',
      arguments: { code: 'const end = Date.now() + 400; while (Date.now() < end) {} return "done"' },
    });
    await new Promise((r) => setTimeout(r, 150));
    served.child.kill('SIGTERM');
    expect(textOf(await slow)).toBe("value: 'done'");
    expect(await served.exited).toBe(0);
  });

  it('answers a cheap tool call in a round trip of a few milliseconds (median of 200, keep-alive)', async () => {
    const dir = tempDir();
    const zip = join(dir, 'w.zip');
    const ws = new ZipWorkspace();
    ws.writeFile('a.txt', 'x');
    ws.save(zip);
    const { url } = await start(['--zip', zip]);
    const client = await connect(url);
    for (let i = 0; i < 20; i++) await client.callTool({ name: 'fs_stat', arguments: { path: 'a.txt' } });
    const times: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t = performance.now();
      const r = await client.callTool({ name: 'fs_stat', arguments: { path: 'a.txt' } });
      times.push(performance.now() - t);
      expect(r.isError).toBe(false);
    }
    times.sort((a, b) => a - b);
    const median = times[100] ?? 0;
    console.log(
      `MCP over HTTP: fs_stat round trip median ${median.toFixed(2)} ms, p90 ${(times[180] ?? 0).toFixed(2)} ms (200 calls)`,
    );
    // Generous for a loaded machine; a server that reconnected or blocked per call would exceed it.
    expect(median).toBeLessThan(50);
  });
});
