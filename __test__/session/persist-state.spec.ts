// Sessions with persistState (DESIGN §10): each turn is a REPL cell whose top-level bindings are
// kept for the next turn, in the session's snapshot and stores; a failed turn keeps nothing; a
// turn paused for approval re-runs from the state before it.
import { execFileSync } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createConsole } from '../../lib/console/index.js';
import { inspectSnapshot } from '../../lib/session/index.js';
import { sessionManagerTools } from '../../lib/tools/mcp-sessions.js';
import {
  Session,
  type SessionOptions,
  SessionManager,
  type SessionPolicy,
  sessionTools,
  type TurnResult,
  ZipWorkspace,
} from '../../lib/index.js';

const OPEN: SessionPolicy = { worldRules: { readOnly: false } };
const KEY = 'a snapshot key of enough bytes';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'quickrealm-persist-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function persistent(options: SessionOptions = {}) {
  return new Session({ persistState: true, policy: OPEN, ...options });
}

function valueOf(turn: TurnResult | null): unknown {
  if (turn?.outcome.tag !== 'ok') throw new Error(`expected ok, got ${JSON.stringify(turn?.outcome)}`);
  return turn.outcome.value;
}

/** The snapshot's parts, to read or change one (the archive is rebuilt with the same parts). */
function parts(bytes: Uint8Array) {
  return ZipWorkspace.fromZip(bytes);
}

describe('persistState: bindings kept between turns', () => {
  it('a function and a closure defined in turn 1 are callable in turn 2; the value is the completion value', async () => {
    const s = persistent();
    expect(s.persistState).toBe(true);
    const one = await s.executeTurn(
      'const double = (x) => x * 2;\nfunction counter() { let n = 0; return () => ++n }\nconst next = counter();\nnext();',
    );
    expect(one.outcome).toEqual({ tag: 'ok', value: 1 });
    expect(valueOf(await s.executeTurn('[double(21), next(), next()]'))).toEqual([42, 2, 3]);
    expect(valueOf(await s.executeTurn('next()'))).toBe(4);
    // A declaration as the last statement has no value.
    expect(valueOf(await s.executeTurn('let later = 1;'))).toBe(undefined);
  });

  it('a Map filled over turns keeps every entry, and identity between bindings', async () => {
    const s = persistent();
    await s.executeTurn('const seen = new Map(); const alias = seen;');
    for (let i = 0; i < 5; i++) await s.executeTurn(`seen.set('k${i}', { i: ${i}, at: seen.size })`);
    expect(
      valueOf(await s.executeTurn('[seen.size, [...seen.keys()].join(), alias === seen, seen.get("k3").at]')),
    ).toEqual([5, 'k0,k1,k2,k3,k4', true, 3]);
  });

  it('top-level await works; return outside a function is an error that says how to give the value', async () => {
    const s = persistent({ operations: { fetchNumber: () => 7 } });
    expect(valueOf(await s.executeTurn('const got = await fetchNumber(); got * 6'))).toBe(42);
    const t = await s.executeTurn('return got');
    expect(t.outcome).toMatchObject({ tag: 'error', code: 'EVAL_ERROR', name: 'SyntaxError', line: 1 });
    if (t.outcome.tag !== 'error') throw new Error('unreachable');
    expect(t.outcome.message).toMatch(/^return not in a function \(turns of this session are scripts/);
    expect(t.outcome.message).toContain('last expression statement');
    expect(valueOf(await s.executeTurn('got'))).toBe(7);
  });

  it('env works as before beside the bindings; the result carries no state bytes', async () => {
    const s = persistent({ env: { items: [1, 2] } });
    const t = await s.executeTurn('const copy = JSON.parse(JSON.stringify(env.items)); env.n = copy.length; copy');
    expect(valueOf(t)).toEqual([1, 2]);
    expect(Object.keys(t.result)).not.toContain('state');
    expect(valueOf(await s.executeTurn('copy.push(env.n); copy'))).toEqual([1, 2, 2]);
    expect(s.env).toEqual({ items: [1, 2], n: 2 });
  });

  it('without persistState nothing is kept and turns are function bodies, as before', async () => {
    const s = new Session({ policy: OPEN });
    expect(s.persistState).toBe(false);
    expect(valueOf(await s.executeTurn('let a = 1; return a'))).toBe(1);
    expect(valueOf(await s.executeTurn('return typeof a'))).toBe('undefined');
    const meta = JSON.parse(parts(s.snapshot()).readText('session.json'));
    expect(meta.version).toBe(1);
    expect(meta.persistState).toBeUndefined();
    expect(parts(s.snapshot()).exists('state.bin')).toBe(false);
    expect(sessionTools(s).tools[0].description).toMatch(/^Run JavaScript \(the body of an async function\)/);
    expect(inspectSnapshot(s.snapshot()).state).toBe(null);
  });

  it('a session without persistState is signed and versioned as before, so older readers still read it', async () => {
    const s = new Session({ policy: OPEN, snapshotKey: KEY });
    await s.executeTurn("world.write('a.txt', 'a'); return 1");
    const archive = parts(s.snapshot());
    // The signature scheme of version 1 snapshots, which names exactly these six parts.
    const mac = createHmac('sha256', KEY);
    mac.update('quickrealm-session-signature/2\n');
    for (const name of [
      'binding.json',
      'session.json',
      'ledger.json',
      'world.zip',
      'staged.zip',
      'staged-origin.zip',
    ]) {
      const digest = archive.exists(name) ? createHash('sha256').update(archive.readFile(name)).digest('hex') : '-';
      mac.update(`${name}\n${digest}\n`);
    }
    expect(archive.readText('signature')).toBe(mac.digest('hex'));
    expect(JSON.parse(archive.readText('session.json')).version).toBe(1);
  });

  it('refuses a persistState that is not a boolean', () => {
    expect(() => new Session({ persistState: 'yes' as unknown as boolean })).toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT', message: expect.stringContaining('persistState') }),
    );
  });
});

describe('persistState: a failed turn changes nothing', () => {
  const setup = 'let n = 1; const m = new Map([["a", 1]]); function f() { return n }';
  const probe = '[n, m.size, f(), typeof extra, typeof g]';

  it('a throw after changing and declaring leaves bindings, env and world as they were', async () => {
    const s = persistent({ env: { k: 0 } });
    await s.executeTurn(setup);
    const t = await s.executeTurn(
      "n = 2; m.set('b', 2); let extra = 1; function g() {} env.k = 1; world.write('x.txt', 'x'); throw new Error('no')",
    );
    expect(t.outcome).toMatchObject({ tag: 'error', code: 'EVAL_ERROR', message: 'no', line: 1 });
    // Lines are those of the turn's code.
    expect((await s.executeTurn('const x = 1;\n\nnull.y;')).outcome).toMatchObject({ code: 'EVAL_ERROR', line: 3 });
    expect(valueOf(await s.executeTurn(probe))).toEqual([1, 1, 1, 'undefined', 'undefined']);
    expect(s.env).toEqual({ k: 0 });
    expect(s.workspace.exists('x.txt')).toBe(false);
  });

  it('a timeout leaves the state as it was', async () => {
    const s = persistent({ limits: { timeoutMs: 200 } });
    await s.executeTurn(setup);
    const t = await s.executeTurn('n = 5; m.clear(); let extra = 1; while (true) {}');
    expect(t.outcome).toMatchObject({ tag: 'error', code: 'TIMEOUT' });
    expect(valueOf(await s.executeTurn(probe))).toEqual([1, 1, 1, 'undefined', 'undefined']);
  });

  it('a turn stopped by the policy leaves the state as it was', async () => {
    const s = persistent({ policy: { worldRules: { readOnly: true } } });
    await s.executeTurn(setup);
    const t = await s.executeTurn("n = 3; let extra = 1; world.write('x.txt', 'x')");
    expect(t.outcome).toMatchObject({ tag: 'error', code: 'POLICY_VIOLATION' });
    expect(valueOf(await s.executeTurn(probe))).toEqual([1, 1, 1, 'undefined', 'undefined']);
  });

  it('a binding holding a live host value fails with INVALID_INPUT naming it; the state stays', async () => {
    const s = persistent({ operations: { 'pay.send': () => 'paid' }, env: { o: { a: [1] } } });
    await s.executeTurn(setup);
    for (const [code, name] of [
      ['n = 9; const send = pay.send; 1', 'send'],
      ['const w = world; 1', 'w'],
      ['const held = { inner: env.o }; 1', 'held'],
      ['const p = Promise.resolve(1); 1', 'p'],
    ]) {
      const t = await s.executeTurn(code);
      expect(t.outcome).toMatchObject({ tag: 'error', code: 'INVALID_INPUT' });
      if (t.outcome.tag !== 'error') throw new Error('unreachable');
      expect(t.outcome.message).toContain(`binding \`${name}\``);
      expect(t.outcome.message).toMatch(/not state/);
    }
    expect(valueOf(await s.executeTurn(`${probe}.concat([typeof send, typeof w, typeof held])`))).toEqual([
      1,
      1,
      1,
      'undefined',
      'undefined',
      'undefined',
      'undefined',
      'undefined',
    ]);
    // The live values themselves are there in every turn.
    expect(valueOf(await s.executeTurn('await pay.send()'))).toBe('paid');
  });

  it('a turn that ends with needs() keeps its env and world changes but not its bindings', async () => {
    const s = persistent({ env: { k: 0 } });
    await s.executeTurn(setup);
    const t = await s.executeTurn("n = 7; let extra = 1; env.k = 1; world.write('x.txt', 'x'); needs('which one?')");
    expect(t.outcome).toEqual({ tag: 'needs', question: 'which one?' });
    expect(s.env).toEqual({ k: 1 });
    expect(s.workspace.readText('x.txt')).toBe('x');
    expect(valueOf(await s.executeTurn(probe))).toEqual([1, 1, 1, 'undefined', 'undefined']);
  });
});

describe('persistState: approvals', () => {
  const code = "add('a'); const r = await pay.send(50); add(r); const rnd = Math.random(); [log.slice(), r, rnd]";

  function session(needsApproval: boolean, effects: string[]) {
    return persistent({
      id: 'pay-session',
      operations: {
        'pay.send': {
          handler: (amount: number) => {
            effects.push(`pay ${amount}`);
            return `paid ${amount}`;
          },
          needsApproval,
        },
      },
    });
  }

  it('a resumed turn re-runs from the state before it: the same value as without pausing, and the same state after', async () => {
    const straightEffects: string[] = [];
    const straight = session(false, straightEffects);
    await straight.executeTurn('const log = []; function add(x) { log.push(x); return log.length }');
    const expected = valueOf(await straight.executeTurn(code));
    expect((expected as unknown[])[0]).toEqual(['a', 'paid 50']);

    const effects: string[] = [];
    const paused = session(true, effects);
    await paused.executeTurn('const log = []; function add(x) { log.push(x); return log.length }');
    const t = await paused.executeTurn(code);
    if (t.outcome.tag !== 'needs-approval') throw new Error(`expected a pause, got ${JSON.stringify(t.outcome)}`);
    // The paused run's add('a') is not kept.
    paused.approve(t.outcome.requests[0].id);
    const done = await paused.resume();
    expect(valueOf(done)).toEqual(expected);
    expect(effects).toEqual(['pay 50']);
    expect(valueOf(await paused.executeTurn('[log, r]'))).toEqual([['a', 'paid 50'], 'paid 50']);
    expect(valueOf(await straight.executeTurn('[log, r]'))).toEqual([['a', 'paid 50'], 'paid 50']);
  });

  it('a paused turn survives snapshot and restore; the restored session resumes from the state before it', async () => {
    const effects: string[] = [];
    const s = session(true, effects);
    await s.executeTurn('const log = []; function add(x) { log.push(x); return log.length }');
    const t = await s.executeTurn(code);
    if (t.outcome.tag !== 'needs-approval') throw new Error('expected a pause');
    const operations = {
      'pay.send': {
        handler: (amount: number) => {
          effects.push(`pay ${amount}`);
          return `paid ${amount}`;
        },
        needsApproval: true,
      },
    };
    const restored = Session.restore(s.snapshot(), { operations });
    expect(restored.status).toBe('paused');
    restored.approve(t.outcome.requests[0].id);
    const done = await restored.resume();
    expect((valueOf(done) as unknown[]).slice(0, 2)).toEqual([['a', 'paid 50'], 'paid 50']);
    expect(effects).toEqual(['pay 50']);
    expect(valueOf(await restored.executeTurn('log.length'))).toBe(2);
  });
});

describe('persistState: snapshots and stores', () => {
  it('the state survives snapshot() and Session.restore (with and without snapshotKey), as version 2 with state.bin', async () => {
    for (const snapshotKey of [KEY, undefined]) {
      const s = persistent({ snapshotKey });
      await s.executeTurn('const table = new Map(); class Row { constructor(k) { this.k = k } }');
      await s.executeTurn('table.set("x", new Row("x")); let total = 10;');
      const bytes = s.snapshot();
      const meta = JSON.parse(parts(bytes).readText('session.json'));
      expect(meta).toMatchObject({
        version: 2,
        persistState: true,
        stateSeal: snapshotKey ? 'snapshotKey' : 'process',
      });
      expect(parts(bytes).exists('state.bin')).toBe(true);
      const restored = Session.restore(bytes, { snapshotKey });
      expect(restored.persistState).toBe(true);
      expect(
        valueOf(await restored.executeTurn('[table.get("x") instanceof Row, table.get("x").k, total += 1]')),
      ).toEqual([true, 'x', 11]);
      // The original goes on from its own state.
      expect(valueOf(await s.executeTurn('total'))).toBe(10);
      // A restored session's snapshot restores too.
      expect(valueOf(await Session.restore(restored.snapshot(), { snapshotKey }).executeTurn('total'))).toBe(11);
    }
  });

  it('a persistState session that never kept a state restores, and keeps persistState', async () => {
    const s = persistent({ snapshotKey: KEY });
    const restored = Session.restore(s.snapshot(), { snapshotKey: KEY });
    expect(restored.persistState).toBe(true);
    await restored.executeTurn('let kept = 5;');
    expect(valueOf(await restored.executeTurn('kept'))).toBe(5);
  });

  it('a state sealed with snapshotKey needs that key to be restored', async () => {
    const s = persistent({ snapshotKey: KEY });
    await s.executeTurn('let a = 1;');
    expect(() => Session.restore(s.snapshot())).toThrow(
      expect.objectContaining({
        code: 'INVALID_INPUT',
        message: expect.stringContaining('restore it with that snapshotKey'),
      }),
    );
    expect(() => Session.restore(s.snapshot(), { snapshotKey: 'another key of enough bytes' })).toThrow(
      expect.objectContaining({ code: 'SNAPSHOT_TAMPERED' }),
    );
  });

  it('a changed state is refused with SNAPSHOT_TAMPERED, by the signature or by the state seal', async () => {
    for (const snapshotKey of [KEY, undefined]) {
      const s = persistent({ snapshotKey });
      await s.executeTurn('const secret = { level: 1 };');
      const archive = parts(s.snapshot());
      const state = archive.readFile('state.bin');
      state[state.length >> 1] ^= 1;
      archive.writeFile('state.bin', state);
      const changed = archive.toZip({ history: false, compress: false });
      expect(() => Session.restore(changed, { snapshotKey })).toThrow(
        expect.objectContaining({
          code: 'SNAPSHOT_TAMPERED',
          message: snapshotKey
            ? expect.stringMatching(/changed after it was signed/)
            : expect.stringMatching(/state does not verify/),
        }),
      );
      // The same archive rebuilt without the change restores.
      const intact = parts(s.snapshot()).toZip({ history: false, compress: false });
      expect(valueOf(await Session.restore(intact, { snapshotKey }).executeTurn('secret.level'))).toBe(1);
    }
  });

  it('a signed snapshot whose state part was removed is refused', async () => {
    const s = persistent({ snapshotKey: KEY });
    await s.executeTurn('let a = 1;');
    const archive = parts(s.snapshot());
    archive.delete('state.bin');
    expect(() => Session.restore(archive.toZip({ history: false, compress: false }), { snapshotKey: KEY })).toThrow(
      expect.objectContaining({ code: 'SNAPSHOT_TAMPERED' }),
    );
  });

  it('the state travels through a SessionManager and its FolderStore, and a fresh manager goes on from it', async () => {
    const dir = tempDir();
    const operations = { lookup: (k: string) => `value of ${k}` };
    const manager = new SessionManager({ dir, operations, snapshotKey: KEY });
    const s = await manager.create({ id: 'kept', persistState: true, policy: OPEN });
    await s.executeTurn(
      'const cache = new Map(); async function get(k) { if (!cache.has(k)) cache.set(k, await lookup(k)); return cache.get(k) }',
    );
    expect(valueOf(await s.executeTurn('await get("a")'))).toBe('value of a');
    // Another process opening the folder: nothing in memory.
    const other = new SessionManager({ dir, operations, snapshotKey: KEY });
    const loaded = await other.get('kept');
    expect(loaded?.persistState).toBe(true);
    expect(valueOf(await loaded!.executeTurn('await get("b"); [...cache.keys()]'))).toEqual(['a', 'b']);
    const stored = await other.store.get('kept');
    const view = inspectSnapshot(stored!.bytes, {
      snapshotKey: KEY,
      expected: { id: 'kept', version: stored!.version, purpose: 'store' },
    });
    expect(view.integrity).toBe(null);
    expect(view.state?.bytes).toBeGreaterThan(0);
  });

  it('the review console shows a session with state (its pages and JSON do not break)', async () => {
    const manager = new SessionManager({ dir: tempDir(), snapshotKey: KEY });
    const s = await manager.create({ id: 'stateful', persistState: true, policy: OPEN });
    // The value is built, so only the state holds it whole (the turn's code is shown).
    await s.executeTurn('const secretTable = new Map([["k", ["hidden", "value"].join(" ")]]);');
    const handler = createConsole({ manager });
    const page = await handler(new Request('http://console.test/sessions/stateful'));
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('stateful');
    expect(html).toMatch(/class="kept-state">\d+ bytes of top-level bindings/);
    expect(html).not.toContain('hidden value');
    const json = await handler(new Request('http://console.test/api/sessions/stateful'));
    expect(json.status).toBe(200);
    const body = await json.text();
    expect(JSON.parse(body)).toMatchObject({ id: 'stateful', turnNumber: 1 });
    expect(body).not.toContain('hidden value');
  });

  it('inspectSnapshot shows the state by its size only', async () => {
    const s = persistent();
    expect(inspectSnapshot(s.snapshot()).state).toEqual({ bytes: 0 });
    await s.executeTurn('const big = "x".repeat(5000);');
    const view = inspectSnapshot(s.snapshot());
    expect(view.state?.bytes).toBeGreaterThan(5000);
    expect(JSON.stringify(view)).not.toContain('xxxxxxxx');
  });

  it('a snapshot made in another process restores here with its snapshotKey; without one its state is refused', async () => {
    const lib = join(__dirname, '../../lib/index.js');
    const child = (withKey: boolean) =>
      execFileSync(
        process.execPath,
        [
          '-e',
          `const { Session } = require(${JSON.stringify(lib)});
           (async () => {
             const s = new Session({ persistState: true, ${withKey ? `snapshotKey: ${JSON.stringify(KEY)}` : ''} });
             await s.executeTurn('const inc = ((n) => () => ++n)(40); inc();');
             process.stdout.write(s.snapshot().toString('base64'));
           })();`,
        ],
        { encoding: 'utf8', maxBuffer: 64 << 20 },
      );
    const signed = Session.restore(Buffer.from(child(true), 'base64'), { snapshotKey: KEY });
    expect(valueOf(await signed.executeTurn('inc()'))).toBe(42);
    expect(() => Session.restore(Buffer.from(child(false), 'base64'))).toThrow(
      expect.objectContaining({
        code: 'SNAPSHOT_TAMPERED',
        message: expect.stringMatching(/sealed in another process/),
      }),
    );
  });
});

describe('persistState: the turn tool', () => {
  it('tells the model what persists, that turns are scripts, and what is not kept', () => {
    const s = persistent({ operations: { 'llm.complete': () => '' } });
    const [tool] = sessionTools(s).tools;
    expect(tool.description).toMatch(/^Run JavaScript as the next turn of the session: a script with top-level await/);
    expect(tool.description).toContain('return works only inside functions');
    expect(tool.description).toMatch(/functions and closures with their variables\) is still there in later turns/);
    expect(tool.description).toMatch(/Live host values are not kept/);
    expect(tool.description).toMatch(/A turn that fails changes nothing/);
    expect(tool.description).toContain('env');
  });

  it('the MCP session tools say so when the sessions they create persist their state', async () => {
    const manager = new SessionManager({ dir: tempDir() });
    const [plain] = sessionManagerTools(manager, { create: { policy: OPEN } }).tools;
    expect(plain.description).toMatch(/the body of an async function/);
    const [stateful] = sessionManagerTools(manager, { create: { policy: OPEN, persistState: true } }).tools;
    expect(stateful.description).toMatch(/a script with top-level await/);
    expect(stateful.description).toMatch(/still there in later turns/);
    const set = sessionManagerTools(manager, { create: { policy: OPEN, persistState: true } });
    await set.dispatch('execute_turn', { sessionId: 'mcp', code: 'const kept = [1, 2];' });
    const r = await set.dispatch('execute_turn', { sessionId: 'mcp', code: 'kept.length' });
    expect(r.content).toContain('Value: 2');
  });

  it('answers through the tool with the cell value', async () => {
    const s = persistent();
    const set = sessionTools(s);
    await set.dispatch('execute_turn', { code: 'const xs = [3, 1, 2];' });
    const r = await set.dispatch('execute_turn', { code: 'xs.sort().join("-")' });
    expect(r.ok).toBe(true);
    expect(r.content).toBe('Turn 2 finished. Value: "1-2-3"');
  });
});
