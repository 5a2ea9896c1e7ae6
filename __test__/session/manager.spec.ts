// SessionManager and FolderStore (DESIGN §4.1, §4.1.1): sessions kept in a folder, saved after
// every turn and every change of state, compare-and-set between processes, a crash losing at
// most the turn in flight, and approvals resumed in another process without repeating the side
// effects that already ran.

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import {
  FolderStore,
  type OperationDefinition,
  type OperationHandler,
  policies,
  type Session,
  SessionManager,
  type SessionPolicy,
  ZipWorkspace,
} from '../../lib/index.js';

const CHILD = join(__dirname, 'fixtures', 'session-child.cjs');

/** Everything allowed, writes anywhere, applied at once (no proposals). */
const OPEN: SessionPolicy = { worldRules: { readOnly: false } };

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'quickrealm-sessions-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

type Operations = Record<string, OperationHandler | OperationDefinition>;

/** A manager over `dir` as another process would open it: nothing in memory. */
function fresh(dir: string, operations?: Operations): SessionManager {
  return new SessionManager({ dir, operations });
}

/** The session as a fresh manager loads it from the store (fails the test when it is missing). */
async function stored(dir: string, id: string, operations?: Operations): Promise<Session> {
  const session = await fresh(dir, operations).get(id);
  expect(session, `session ${id} in ${dir}`).not.toBeNull();
  return session as Session;
}

/** The header line of a stored session file: version and metadata. */
function header(dir: string, id: string): { version: number; meta: Record<string, unknown> } {
  const data = readFileSync(join(dir, `${id}.session`));
  const [magic, version, ...rest] = data.subarray(0, data.indexOf(10)).toString('utf8').split(' ');
  expect(magic).toBe('quickrealm-session-store/1');
  return { version: Number(version), meta: JSON.parse(rest.join(' ')) };
}

async function rejection(p: Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await p;
  } catch (e) {
    return e as { code?: string; message: string };
  }
  throw new Error('expected the promise to reject');
}

/** Files in the store's folder that are not session files or their version records (temporary files, locks). */
function leftovers(dir: string): string[] {
  return readdirSync(dir).filter((n) => !n.endsWith('.session') && !n.endsWith('.version'));
}

const bytes = (text: string) => new TextEncoder().encode(text);

describe('FolderStore', () => {
  it('keeps bytes by id with a version that grows by one per put', async () => {
    const dir = tempDir();
    const store = new FolderStore(dir);
    expect(await store.get('a')).toBeNull();
    expect(await store.version('a')).toBeNull();
    expect(await store.put('a', bytes('first'), { expectedVersion: null, meta: { turnNumber: 0 } })).toBe(1);
    expect(await store.put('b', bytes('other'), { expectedVersion: null })).toBe(1);
    expect(await store.put('a', bytes('second'), { expectedVersion: 1, meta: { turnNumber: 1 } })).toBe(2);
    const a = await store.get('a');
    expect(a?.version).toBe(2);
    expect(Buffer.from(a?.bytes ?? []).toString()).toBe('second');
    expect(await store.version('a')).toBe(2);
    expect(header(dir, 'a')).toEqual({ version: 2, meta: { turnNumber: 1 } });
    expect(await store.list()).toEqual(['a', 'b']);
    expect(leftovers(dir)).toEqual([]);
    await store.delete('a');
    expect(await store.get('a')).toBeNull();
    expect(existsSync(join(dir, 'a.session'))).toBe(false);
    expect(await store.list()).toEqual(['b']);
  });

  it('refuses a put whose expected version is not the stored one (SESSION_CONFLICT), writing nothing', async () => {
    const dir = tempDir();
    const store = new FolderStore(dir);
    await store.put('s', bytes('v1'), { expectedVersion: null });
    await store.put('s', bytes('v2'), { expectedVersion: 1 });
    const before = readFileSync(join(dir, 's.session'));

    const stale = await rejection(store.put('s', bytes('stale'), { expectedVersion: 1 }));
    expect(stale.code).toBe('SESSION_CONFLICT');
    expect(stale.message).toMatch(/version 2/);
    const ahead = await rejection(store.put('s', bytes('ahead'), { expectedVersion: 7 }));
    expect(ahead.code).toBe('SESSION_CONFLICT');
    const exists = await rejection(store.put('s', bytes('again'), { expectedVersion: null }));
    expect(exists.code).toBe('SESSION_CONFLICT');
    const gone = await rejection(store.put('missing', bytes('x'), { expectedVersion: 1 }));
    expect(gone.code).toBe('SESSION_CONFLICT');

    expect(readFileSync(join(dir, 's.session')).equals(before)).toBe(true);
    expect(await store.version('s')).toBe(2);
    expect(await store.list()).toEqual(['s']);
    expect(leftovers(dir)).toEqual([]);
  });

  it('refuses ids that cannot name a file in its folder', async () => {
    const store = new FolderStore(tempDir());
    for (const id of ['../escape', 'a/b', '.hidden', '', 'x'.repeat(129)]) {
      const e = await rejection(store.put(id, bytes('x'), { expectedVersion: null }));
      expect(e.code, id).toBe('INVALID_INPUT');
    }
    expect(await store.list()).toEqual([]);
  });

  it("waits on a live process's lock and takes over the lock of a dead one", async () => {
    const dir = tempDir();
    const store = new FolderStore(dir);
    await store.put('s', bytes('v1'), { expectedVersion: null });
    const lock = join(dir, 's.session.lock');

    writeFileSync(lock, String(process.pid));
    const started = Date.now();
    const locked = await rejection(store.put('s', bytes('v2'), { expectedVersion: 1 }));
    expect(locked.code).toBe('SESSION_CONFLICT');
    expect(locked.message).toMatch(/locked/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(await store.version('s')).toBe(1);

    const dead = spawnSync(process.execPath, ['-e', '']);
    expect(dead.pid).toBeGreaterThan(0);
    writeFileSync(lock, String(dead.pid));
    expect(await store.put('s', bytes('v2'), { expectedVersion: 1 })).toBe(2);
    expect(existsSync(lock)).toBe(false);

    // A lock older than a minute is taken over even when its process still lives.
    writeFileSync(lock, String(process.pid));
    const old = new Date(Date.now() - 120_000);
    utimesSync(lock, old, old);
    expect(await store.put('s', bytes('v3'), { expectedVersion: 2 })).toBe(3);
    expect(existsSync(lock)).toBe(false);
  });

  it('refuses a file that is not a stored session (INVALID_INPUT)', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'junk.session'), 'not a session\n');
    const e = await rejection(new FolderStore(dir).get('junk'));
    expect(e.code).toBe('INVALID_INPUT');
    expect((await rejection(fresh(dir).get('junk'))).code).toBe('INVALID_INPUT');
  });

  it('keeps working with metadata longer than 4 KiB', async () => {
    const store = new FolderStore(tempDir());
    const meta = { note: 'm'.repeat(5000) };
    expect(await store.put('big', bytes('v1'), { expectedVersion: null, meta })).toBe(1);
    expect(Buffer.from((await store.get('big'))?.bytes ?? []).toString()).toBe('v1');
    expect(await store.version('big')).toBe(1);
    expect(await store.put('big', bytes('v2'), { expectedVersion: 1, meta })).toBe(2);
  });
});

describe('SessionManager', () => {
  it('create() stores the session; another manager over the folder get()s it; list() and delete()', async () => {
    const dir = tempDir();
    const a = fresh(dir);
    const workspace = new ZipWorkspace();
    workspace.writeFile('docs/readme.md', '# hello\n');
    const created = await a.create({ id: 'first', policy: OPEN, env: { plan: ['read', 'write'] }, workspace });
    await a.create({ id: 'second' });
    expect(existsSync(join(dir, 'first.session'))).toBe(true);
    expect(header(dir, 'first').meta).toMatchObject({ status: 'active', turnNumber: 0 });
    expect(await a.get('first')).toBe(created);

    const b = fresh(dir);
    expect(await b.list()).toEqual(['first', 'second']);
    const loaded = await b.get('first');
    expect(loaded).not.toBeNull();
    expect(loaded).not.toBe(created);
    expect(loaded?.id).toBe('first');
    expect(loaded?.status).toBe('active');
    expect(loaded?.turnNumber).toBe(0);
    expect(loaded?.env).toEqual({ plan: ['read', 'write'] });
    expect(loaded?.workspace.readText('docs/readme.md')).toBe('# hello\n');
    expect(loaded?.policy.worldRules.readOnly).toBe(false);
    expect(loaded?.audit.verify()).toEqual({ ok: true, entries: 0 });
    expect(await b.get('no-such-session')).toBeNull();

    const again = await rejection(b.create({ id: 'first' }));
    expect(again.code).toBe('SESSION_CONFLICT');
    expect((await stored(dir, 'first')).env).toEqual({ plan: ['read', 'write'] });

    await b.delete('first');
    expect(existsSync(join(dir, 'first.session'))).toBe(false);
    expect(await a.list()).toEqual(['second']);
    expect(await a.get('first')).toBeNull();
    expect(await fresh(dir).get('first')).toBeNull();
  });

  it('saves every turn: a fresh manager sees its number, env, world and audit', async () => {
    const dir = tempDir();
    const manager = fresh(dir);
    const session = await manager.create({ id: 'turns', policy: OPEN, env: { count: 0 } });

    const one = await session.executeTurn(
      "world.write('notes/a.txt', 'alpha'); env.count += 1; env.last = 'one'; return world.list();",
    );
    expect(one.outcome).toEqual({ tag: 'ok', value: ['notes/a.txt'] });
    let copy = await stored(dir, 'turns');
    expect(copy.turnNumber).toBe(1);
    expect(copy.env).toEqual({ count: 1, last: 'one' });
    expect(copy.workspace.readText('notes/a.txt')).toBe('alpha');
    expect(copy.audit.verify()).toMatchObject({ ok: true });
    expect(copy.audit.forTurn(1).map((e) => e.operation)).toEqual(['world.write', 'world.list']);
    expect(copy.audit.export()).toBe(session.audit.export());
    expect(header(dir, 'turns').meta).toMatchObject({ status: 'active', turnNumber: 1 });

    // A failed turn is saved too: its number is used, its env change and writes are not kept.
    const two = await session.executeTurn("env.count = 99; world.write('notes/b.txt', 'beta'); throw new Error('no');");
    expect(two.outcome).toMatchObject({ tag: 'error', code: 'EVAL_ERROR' });
    copy = await stored(dir, 'turns');
    expect(copy.turnNumber).toBe(2);
    expect(copy.env).toEqual({ count: 1, last: 'one' });
    expect(copy.workspace.exists('notes/b.txt')).toBe(false);
    expect(copy.turns.map((t) => t.outcome)).toEqual(['ok', 'error']);

    const three = await session.executeTurn("world.write('notes/a.txt', 'alpha 2'); env.count += 1; return env.count;");
    expect(three.outcome).toEqual({ tag: 'ok', value: 2 });
    copy = await stored(dir, 'turns');
    expect(copy.turnNumber).toBe(3);
    expect(copy.env).toEqual({ count: 2, last: 'one' });
    expect(copy.workspace.readText('notes/a.txt')).toBe('alpha 2');
    expect(copy.audit.verify()).toEqual(session.audit.verify());
    expect(header(dir, 'turns').meta).toMatchObject({ turnNumber: 3 });
    expect(leftovers(dir)).toEqual([]);
  });

  it('refuses a turn on a stale copy with SESSION_CONFLICT and stores nothing of it', async () => {
    const dir = tempDir();
    await fresh(dir).create({ id: 'shared', policy: OPEN });
    const a = fresh(dir);
    const b = fresh(dir);
    const onA = (await a.get('shared')) as Session;
    const onB = (await b.get('shared')) as Session;

    const won = await onA.executeTurn("world.write('a.txt', 'A'); env.by = 'A'; return 'A';");
    expect(won.outcome).toEqual({ tag: 'ok', value: 'A' });
    const versionAfterA = header(dir, 'shared').version;

    const lost = await onB.executeTurn("world.write('b.txt', 'B'); env.by = 'B'; return 'B';");
    expect(lost.outcome).toMatchObject({ tag: 'error', code: 'SESSION_CONFLICT' });
    expect(header(dir, 'shared').version).toBe(versionAfterA);
    const copy = await stored(dir, 'shared');
    expect(copy.turnNumber).toBe(1);
    expect(copy.env).toEqual({ by: 'A' });
    expect(copy.workspace.exists('a.txt')).toBe(true);
    expect(copy.workspace.exists('b.txt')).toBe(false);

    // Loading again gives B the current copy, which can advance the session.
    const reloaded = (await b.get('shared')) as Session;
    expect(reloaded).not.toBe(onB);
    expect(reloaded.turnNumber).toBe(1);
    const next = await reloaded.executeTurn("world.write('b.txt', 'B'); env.by = 'B'; return 'B';");
    expect(next.outcome).toEqual({ tag: 'ok', value: 'B' });
    const after = await stored(dir, 'shared');
    expect(after.turnNumber).toBe(2);
    expect(after.env).toEqual({ by: 'B' });
    expect(after.workspace.readText('b.txt')).toBe('B');
  });

  it('of two processes starting a turn on one version, the first to claim it runs; the other runs nothing', async () => {
    const dir = tempDir();
    await fresh(dir).create({ id: 'race', policy: OPEN });
    const a = fresh(dir);
    const onA = (await a.get('race')) as Session;
    let aOutcome: unknown;
    const b = fresh(dir, {
      // B's turn has claimed the session when A tries a whole turn of its own.
      'sync.point': async () => {
        aOutcome = (await onA.executeTurn("world.write('a.txt', 'A'); env.by = 'A'; return 'A';")).outcome;
        return 'synced';
      },
    });
    const onB = (await b.get('race')) as Session;
    const won = await onB.executeTurn("world.write('b.txt', 'B'); env.by = 'B'; return await sync.point();");
    expect(aOutcome).toMatchObject({ tag: 'error', code: 'SESSION_CONFLICT' });
    expect(won.outcome).toEqual({ tag: 'ok', value: 'synced' });

    const copy = await stored(dir, 'race');
    expect(copy.turnNumber).toBe(1);
    expect(copy.env).toEqual({ by: 'B' });
    expect(copy.workspace.readText('b.txt')).toBe('B');
    expect(copy.workspace.exists('a.txt')).toBe(false);
    expect(copy.audit.forOperation('sync.point')).toHaveLength(1);
    expect(copy.audit.verify()).toMatchObject({ ok: true });
    // A's manager no longer offers its stale copy.
    const reloaded = (await a.get('race')) as Session;
    expect(reloaded).not.toBe(onA);
    expect(reloaded.env).toEqual({ by: 'B' });
  });

  it('refuses a turn on a session deleted from the store (SESSION_CONFLICT) and does not bring it back', async () => {
    const dir = tempDir();
    const a = fresh(dir);
    const session = await a.create({ id: 'doomed', policy: OPEN });
    await fresh(dir).delete('doomed');
    const turn = await session.executeTurn("world.write('x.txt', 'x'); return 1;");
    expect(turn.outcome).toMatchObject({ tag: 'error', code: 'SESSION_CONFLICT' });
    expect(await fresh(dir).list()).toEqual([]);
  });

  it('pause, resume and complete by id are saved', async () => {
    const dir = tempDir();
    const manager = fresh(dir);
    await manager.create({ id: 'life', policy: OPEN });

    await manager.pause('life');
    const paused = await stored(dir, 'life');
    expect(paused.status).toBe('paused');
    const refused = await paused.executeTurn('return 1;');
    expect(refused.outcome).toMatchObject({ tag: 'error', code: 'SESSION_STATE' });
    expect((await stored(dir, 'life')).turnNumber).toBe(0);

    expect(await fresh(dir).resume('life')).toBeNull();
    expect((await stored(dir, 'life')).status).toBe('active');

    await fresh(dir).complete('life');
    const done = await stored(dir, 'life');
    expect(done.status).toBe('completed');
    expect((await done.executeTurn('return 1;')).outcome).toMatchObject({ tag: 'error', code: 'SESSION_STATE' });

    const missing = await rejection(manager.pause('nobody'));
    expect(missing.code).toBe('NOT_FOUND');
  });

  it('commit and rollback of proposals by id are saved (SAFE_EDIT, proposal mode)', async () => {
    const dir = tempDir();
    const manager = fresh(dir);
    const session = await manager.create({ id: 'edit', policy: policies.SAFE_EDIT });

    const one = await session.executeTurn("world.write('src/app.js', 'export const app = 1;\\n'); return 'staged';");
    expect(one.outcome).toEqual({ tag: 'proposed', value: 'staged' });
    let copy = await stored(dir, 'edit');
    expect(copy.workspace.exists('src/app.js')).toBe(false);
    expect(copy.proposals().map((p) => [p.path, p.kind, p.dir])).toEqual([
      ['src', 'create', true],
      ['src/app.js', 'create', false],
    ]);

    const entry = await fresh(dir).commit('edit');
    expect(entry).toEqual(expect.any(Number));
    copy = await stored(dir, 'edit');
    expect(copy.proposals()).toEqual([]);
    expect(copy.workspace.readText('src/app.js')).toBe('export const app = 1;\n');
    expect(copy.status).toBe('active');

    const two = await copy.executeTurn("world.write('src/extra.js', 'x'); return 'staged again';");
    // `copy` belongs to a throwaway manager, whose save is as good as any other process's.
    expect(two.outcome).toEqual({ tag: 'proposed', value: 'staged again' });
    expect((await stored(dir, 'edit')).proposals().map((p) => p.path)).toEqual(['src/extra.js']);

    await fresh(dir).rollback('edit');
    copy = await stored(dir, 'edit');
    expect(copy.proposals()).toEqual([]);
    expect(copy.workspace.exists('src/extra.js')).toBe(false);
    expect(copy.workspace.readText('src/app.js')).toBe('export const app = 1;\n');
    expect(copy.turnNumber).toBe(2);
  });

  it('abort by id is saved and discards the proposals', async () => {
    const dir = tempDir();
    const session = await fresh(dir).create({ id: 'gone', policy: policies.SAFE_EDIT });
    const turn = await session.executeTurn("world.write('src/a.js', 'a'); return 1;");
    expect(turn.outcome).toEqual({ tag: 'proposed', value: 1 });
    expect((await stored(dir, 'gone')).proposals().map((p) => p.path)).toEqual(['src', 'src/a.js']);

    await fresh(dir).abort('gone');
    const copy = await stored(dir, 'gone');
    expect(copy.status).toBe('aborted');
    expect(copy.proposals()).toEqual([]);
    expect(copy.workspace.exists('src/a.js')).toBe(false);
    expect((await copy.executeTurn('return 1;')).outcome).toMatchObject({ tag: 'error', code: 'SESSION_STATE' });
  });

  it('resumes in another manager a turn that ends without waiting for its approved call', async () => {
    const dir = tempDir();
    let created = 0;
    const operations: Operations = {
      'tickets.create': {
        needsApproval: true,
        handler: async (t: { a: number }) => {
          await new Promise((r) => setTimeout(r, 20));
          created += 1;
          return { id: 7, ...t };
        },
      },
    };
    const first = await fresh(dir, operations).create({ id: 'unawaited', policy: OPEN });
    const paused = await first.executeTurn('tickets.create({ a: 1 }); return "asked"');
    expect(paused.outcome.tag).toBe('needs-approval');
    const other = fresh(dir, operations);
    await other.approve('unawaited', '1.0');
    // Marking the approved call started and saving the turn's end both save the session: in order.
    const resumed = await other.resume('unawaited');
    expect(resumed?.outcome).toEqual({ tag: 'ok', value: 'asked' });
    await new Promise((r) => setTimeout(r, 50));
    expect(created).toBe(1);
    const again = await stored(dir, 'unawaited', operations);
    expect(again.status).toBe('active');
    expect(again.pendingApprovals).toEqual([]);
  });

  it('approve and reject by id are saved; resume by id continues the paused turn', async () => {
    const dir = tempDir();
    const calls = { note: 0, pay: [] as unknown[] };
    const operations: Operations = {
      'log.note': (text: string) => {
        calls.note += 1;
        return `noted ${text}`;
      },
      'pay.send': {
        handler: (amount: number) => {
          calls.pay.push(amount);
          return { paid: amount };
        },
        needsApproval: (amount: number) => amount > 10,
      },
    };
    const code = `
      const a = await log.note('x');
      let b;
      try { b = await pay.send(env.amount); } catch (e) { b = e.name + ': ' + e.message; }
      env.results = (env.results ?? []).concat([b]);
      return { a, b };
    `;
    const session = await fresh(dir, operations).create({ id: 'pay', policy: OPEN, env: { amount: 50 } });

    const first = await session.executeTurn(code);
    expect(first.outcome).toEqual({
      tag: 'needs-approval',
      requests: [{ id: expect.any(String), operation: 'pay.send', args: [50] }],
    });
    const paused = await stored(dir, 'pay', operations);
    expect(paused.status).toBe('paused');
    const [request] = paused.pendingApprovals;
    expect(request?.operation).toBe('pay.send');

    await fresh(dir, operations).reject('pay', request?.id ?? '', 'too much');
    expect((await stored(dir, 'pay', operations)).pendingApprovals).toEqual([]);
    const resumed = await fresh(dir, operations).resume('pay');
    expect(resumed?.turnNumber).toBe(1);
    expect(resumed?.outcome).toEqual({
      tag: 'ok',
      value: { a: 'noted x', b: 'ApprovalRejected: pay.send was rejected: too much' },
    });
    expect(calls).toEqual({ note: 1, pay: [] });
    let copy = await stored(dir, 'pay', operations);
    expect(copy.status).toBe('active');
    expect(copy.turnNumber).toBe(1);
    expect(copy.env.results).toEqual(['ApprovalRejected: pay.send was rejected: too much']);

    // The next turn asks again; approved by id (with an answer, so the handler does not run).
    const second = await copy.executeTurn(code);
    expect(second.outcome).toMatchObject({ tag: 'needs-approval' });
    const [again] = (await stored(dir, 'pay', operations)).pendingApprovals;
    await fresh(dir, operations).approve('pay', again?.id ?? '', { value: { paid: 'by hand' } });
    expect((await stored(dir, 'pay', operations)).pendingApprovals).toEqual([]);
    const done = await fresh(dir, operations).resume('pay');
    expect(done?.outcome).toEqual({ tag: 'ok', value: { a: 'noted x', b: { paid: 'by hand' } } });
    expect(calls).toEqual({ note: 2, pay: [] });
    copy = await stored(dir, 'pay', operations);
    expect(copy.turnNumber).toBe(2);
    expect(copy.status).toBe('active');
    expect(copy.audit.stats().operationCounts['log.note']).toBe(2);
    expect(copy.audit.verify()).toMatchObject({ ok: true });
  });
});

/** Lines of a child's stdout as they come, tagged by their first word. */
function watch(child: ChildProcess) {
  const lines: { tag: string; data: unknown }[] = [];
  let stderr = '';
  let pending = '';
  const waiters: { tag: string; resolve: (data: unknown) => void }[] = [];
  child.stderr?.on('data', (d) => {
    stderr += String(d);
  });
  child.stdout?.on('data', (d) => {
    pending += String(d);
    for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      const space = line.indexOf(' ');
      const tag = space < 0 ? line : line.slice(0, space);
      const data = space < 0 ? null : JSON.parse(line.slice(space + 1));
      lines.push({ tag, data });
      for (const w of waiters.filter((w) => w.tag === tag)) w.resolve(data);
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    lines,
    exited,
    stderr: () => stderr,
    /** Resolves with the data of the first line tagged `tag`; rejects when the child exits first. */
    line(tag: string, timeoutMs = 20_000): Promise<unknown> {
      const seen = lines.find((l) => l.tag === tag);
      if (seen) return Promise.resolve(seen.data);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no ${tag} line in ${timeoutMs} ms; stderr: ${stderr}`)),
          timeoutMs,
        );
        waiters.push({
          tag,
          resolve: (data) => {
            clearTimeout(timer);
            resolve(data);
          },
        });
        void exited.then(({ code, signal }) => {
          clearTimeout(timer);
          reject(new Error(`the child exited (${code ?? signal}) before ${tag}; stderr: ${stderr}`));
        });
      });
    },
  };
}

describe('SessionManager across processes', () => {
  it('a process killed in the middle of a turn loses only that turn; its lock does not block the next save', async () => {
    const dir = tempDir();
    const child = spawn(process.execPath, [CHILD, 'crash', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out = watch(child);
    try {
      expect(await out.line('SAVED')).toEqual({ outcome: { tag: 'ok', value: 'one' }, turnNumber: 1 });
      expect(await out.line('STARTED')).toEqual({ pid: child.pid });
    } finally {
      // The second turn is running (and never ends): kill the process in the middle of it.
      child.kill('SIGKILL');
    }
    expect(await out.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(out.lines.map((l) => l.tag)).toEqual(['SAVED', 'STARTED']);
    expect(readFileSync(join(dir, 'crash.session.lock'), 'utf8')).toBe(String(child.pid));

    const manager = fresh(dir);
    const session = (await manager.get('crash')) as Session;
    expect(session).not.toBeNull();
    expect(session.status).toBe('active');
    expect(session.turnNumber).toBe(1);
    expect(session.env).toEqual({ count: 1, who: 'turn 1' });
    expect(session.workspace.readText('notes/one.txt')).toBe('from turn 1');
    expect(session.workspace.exists('notes/two.txt')).toBe(false);
    expect(session.turns.map((t) => [t.turnNumber, t.outcome])).toEqual([[1, 'ok']]);
    expect(session.audit.verify()).toEqual({ ok: true, entries: 1 });
    expect(session.audit.entries().map((e) => [e.turnNumber, e.operation])).toEqual([[1, 'world.write']]);

    const next = await session.executeTurn(
      "world.write('notes/three.txt', 'after the crash'); env.count += 1; return env.count;",
    );
    expect(next.outcome).toEqual({ tag: 'ok', value: 2 });
    expect(next.turnNumber).toBe(2);
    const copy = await stored(dir, 'crash');
    expect(copy.turnNumber).toBe(2);
    expect(copy.env).toEqual({ count: 2, who: 'turn 1' });
    expect(copy.workspace.readText('notes/three.txt')).toBe('after the crash');
    expect(copy.workspace.exists('notes/two.txt')).toBe(false);
    expect(copy.audit.verify()).toMatchObject({ ok: true, entries: 2 });
    expect(existsSync(join(dir, 'crash.session.lock'))).toBe(false);
  });

  it('a turn paused for approval in one process resumes in another without repeating its side effects', async () => {
    const dir = tempDir();
    const counter = join(dir, 'log-note.lines');
    const child = spawn(process.execPath, [CHILD, 'approval', dir, counter], { stdio: ['ignore', 'pipe', 'pipe'] });
    onTestFinished(() => {
      child.kill('SIGKILL');
    });
    const out = watch(child);
    const paused = (await out.line('PAUSED')) as {
      outcome: {
        tag: string;
        requests: { id: string; operation: string; args: { amount: number; r: number; t: number }[] }[];
      };
      turnNumber: number;
      status: string;
    };
    expect(await out.exited).toEqual({ code: 0, signal: null });
    expect(paused.status).toBe('paused');
    expect(paused.outcome.tag).toBe('needs-approval');
    expect(paused.outcome.requests).toHaveLength(1);
    const [request] = paused.outcome.requests;
    expect(request?.operation).toBe('pay.send');
    const { r, t } = request?.args[0] ?? { r: Number.NaN, t: Number.NaN };
    expect(r).toEqual(expect.any(Number));
    expect(t).toEqual(expect.any(Number));
    const noteLines = () => readFileSync(counter, 'utf8').trim().split('\n');
    expect(noteLines()).toEqual([JSON.stringify({ pid: child.pid, note: { r, t } })]);

    const payments: unknown[] = [];
    const operations: Operations = {
      'log.note': (note: unknown) => {
        appendFileSync(counter, `${JSON.stringify({ pid: process.pid, note })}\n`);
        return { noted: 'parent' };
      },
      'pay.send': {
        handler: (payment: { amount: number }) => {
          payments.push(payment);
          return { paid: payment.amount, receipt: 'R-1' };
        },
        needsApproval: true,
      },
    };
    const manager = fresh(dir, operations);
    const session = (await manager.get('approval')) as Session;
    expect(session.status).toBe('paused');
    expect(session.turnNumber).toBe(1);
    expect(session.pendingApprovals).toEqual([
      { id: request?.id, operation: 'pay.send', args: [{ amount: 42, r, t }] },
    ]);

    await manager.approve('approval', request?.id ?? '');
    const resumed = await manager.resume('approval');
    expect(resumed?.turnNumber).toBe(1);
    expect(resumed?.outcome).toEqual({
      tag: 'ok',
      value: { a: { noted: 'child' }, b: { paid: 42, receipt: 'R-1' }, r, t },
    });
    expect(payments).toEqual([{ amount: 42, r, t }]);
    expect(noteLines()).toHaveLength(1);

    const copy = await stored(dir, 'approval', operations);
    expect(copy.status).toBe('active');
    expect(copy.turnNumber).toBe(1);
    expect(copy.env).toEqual({ seen: { r, t } });
    expect(copy.pendingApprovals).toEqual([]);
    expect(copy.turns.map((x) => [x.turnNumber, x.outcome])).toEqual([[1, 'ok']]);
    expect(copy.audit.verify()).toMatchObject({ ok: true });
    expect(copy.audit.stats().operationCounts['log.note']).toBe(1);
    expect(copy.audit.forOperation('pay.send').filter((e) => e.error === undefined)).toHaveLength(1);
    expect(payments).toHaveLength(1);
    expect(noteLines()).toHaveLength(1);
  });

  it('an approved call runs once when two processes resume the same turn at the same time', async () => {
    const dir = tempDir();
    let paid = 0;
    const operations: Operations = {
      'pay.send': {
        handler: async (amount: number) => {
          paid += 1;
          await new Promise((resolve) => setTimeout(resolve, 50));
          return { paid: amount };
        },
        needsApproval: true,
      },
    };
    const session = await fresh(dir, operations).create({ id: 'twice', policy: OPEN });
    const turn = await session.executeTurn('return await pay.send(7);');
    expect(turn.outcome.tag).toBe('needs-approval');
    const [request] = session.pendingApprovals;
    await fresh(dir, operations).approve('twice', request?.id ?? '');

    // Two processes (two managers) resume it at once: one runs the turn, the other is refused.
    const results = await Promise.all([fresh(dir, operations).resume('twice'), fresh(dir, operations).resume('twice')]);
    const tags = results.map((r) => (r?.outcome.tag === 'error' ? r.outcome.code : r?.outcome.tag)).sort();
    expect(tags).toEqual(['SESSION_CONFLICT', 'ok']);
    expect(paid).toBe(1);
    expect(
      (await stored(dir, 'twice', operations)).audit.forOperation('pay.send').filter((e) => !e.error),
    ).toHaveLength(1);
  });
});

describe('SessionManager.summaries()', () => {
  it('lists each stored session with its status and turn number, from the folder store or any store', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qr-summaries-'));
    try {
      const manager = new SessionManager({ dir });
      const one = await manager.create({ id: 'one', policy: { worldRules: {} } });
      await one.executeTurn('return 1');
      await one.executeTurn('return 2');
      await manager.create({ id: 'two' });
      await manager.pause('two');
      const before = Date.now();
      const summaries = await new SessionManager({ dir }).summaries();
      expect(summaries.map(({ id, status, turnNumber }) => ({ id, status, turnNumber }))).toEqual([
        { id: 'one', status: 'active', turnNumber: 2 },
        { id: 'two', status: 'paused', turnNumber: 0 },
      ]);
      expect(summaries.every((s) => s.updatedAt > 0 && s.updatedAt <= before && s.version >= 2)).toBe(true);

      // A store without head(): the manager reads each snapshot instead.
      const folder = new FolderStore(dir);
      const bare = {
        get: (id: string) => folder.get(id),
        put: folder.put.bind(folder),
        delete: folder.delete.bind(folder),
        list: () => folder.list(),
      };
      const fromSnapshots = await new SessionManager({ store: bare }).summaries();
      expect(fromSnapshots.map(({ id, status, turnNumber }) => ({ id, status, turnNumber }))).toEqual([
        { id: 'one', status: 'active', turnNumber: 2 },
        { id: 'two', status: 'paused', turnNumber: 0 },
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
