// Session hardening: the host's own workspace rules survive a session's policy, a budget spent
// while a turn waits blocks its resume, a cancelled signal runs nothing, guest-controlled sizes
// stay bounded, re-runs see the same world, and an approved call interrupted by a host crash is
// never run a second time.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FolderStore, policies, run, Session, SessionManager, type TurnResult, ZipWorkspace } from '../../lib/index.js';

const OPEN = { worldRules: { readOnly: false } };

function world(files: Record<string, string | Uint8Array>): ZipWorkspace {
  const ws = new ZipWorkspace();
  for (const [p, body] of Object.entries(files)) ws.writeFile(p, body);
  return ws;
}

function counting() {
  const calls: unknown[][] = [];
  const handler = (...args: unknown[]) => {
    calls.push(args);
    return calls.length;
  };
  return { calls, handler };
}

describe('the host keeps control of its workspace', () => {
  it("a policy narrows the host's access rules and never widens them", async () => {
    const ws = world({ 'secret/key.txt': 'TOPSECRET', 'public/a.txt': 'a' });
    ws.setAccessRules({ readPatterns: ['public/**'], writePatterns: ['public/**'] });
    const s = new Session({ workspace: ws, policy: {} });
    for (const code of [
      "return world.read('secret/key.txt')",
      "world.write('secret/planted.txt', 'x')",
      "world.delete('secret/key.txt')",
    ]) {
      const t = await s.executeTurn(code);
      expect(t.outcome, code).toMatchObject({ tag: 'error', code: 'POLICY_VIOLATION' });
    }
    const listed = await s.executeTurn("return [world.list(), world.search('TOPSECRET').matches.length]");
    expect(listed.outcome).toEqual({ tag: 'ok', value: [['public/a.txt'], 0] });
    expect((await s.executeTurn("world.write('public/b.txt', 'b')")).outcome.tag).toBe('ok');
    expect(ws.accessRules()).toEqual({ readPatterns: ['public/**'], writePatterns: ['public/**'], readOnly: false });
    // Proposal mode keeps the host's rules on the staged copy too.
    const p = new Session({ workspace: ws, policy: { worldRules: { proposalMode: true } } });
    expect((await p.executeTurn("world.write('public/c.txt', 'c')")).outcome.tag).toBe('proposed');
    expect((await p.executeTurn("return world.read('secret/key.txt')")).outcome).toMatchObject({
      code: 'POLICY_VIOLATION',
    });
  });

  it('the shipped policies cannot be changed through their Sets', () => {
    const mine = { ...policies.SAFE_EDIT };
    expect(() => (mine.deniedOperations as Set<string>).delete('world.exec')).toThrow(TypeError);
    expect(() => (policies.SAFE_ANALYSIS.allowedOperations as Set<string>).add('world.write')).toThrow(TypeError);
    expect(() => (policies.SAFE_ANALYSIS.allowedOperations as Set<string>).clear()).toThrow(TypeError);
    expect(new Session().policy.allowedOperations).not.toContain('world.write');
    expect(new Session().policy.deniedOperations).toContain('world.exec');
  });

  it('a malformed policy is INVALID_INPUT, as every other option error', () => {
    expect(() => new Session({ policy: { allowedOperations: [''] } })).toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT' }),
    );
  });
});

describe('budgets, signals and sizes', () => {
  it('a budget used up while a turn waits for approval stops its resume before anything runs', async () => {
    const pay = counting();
    const more = counting();
    const s = new Session({
      policy: {},
      budget: { tokens: 100 },
      operations: { pay: { handler: pay.handler, needsApproval: true }, more: more.handler },
    });
    const t = await s.executeTurn("await pay(1); await more(2); return 'done'");
    if (t.outcome.tag !== 'needs-approval') throw new Error('expected a pause');
    s.consume({ tokens: 500 });
    expect(s.status).toBe('budget-exceeded');
    s.approve(t.outcome.requests[0].id);
    const r = (await s.resume()) as TurnResult;
    expect(r.outcome).toMatchObject({ tag: 'nonconverged', budget: 'tokens' });
    expect(pay.calls).toHaveLength(0);
    expect(more.calls).toHaveLength(0);
  });

  it('a signal aborted before the turn starts runs nothing (turns and resumes)', async () => {
    const sent = counting();
    const s = new Session({ policy: {}, operations: { email: sent.handler } });
    const ac = new AbortController();
    ac.abort();
    const t = await s.executeTurn("await email('x'); return 'done'", { signal: ac.signal });
    expect(t.outcome).toMatchObject({ tag: 'error', code: 'CANCELLED' });
    expect(sent.calls).toHaveLength(0);
    const plain = await run('return 1', { signal: ac.signal });
    expect(plain.ok).toBe(false);
  });

  it('non-finite usage is refused and the session still snapshots and restores', async () => {
    for (const tokens of [Number.POSITIVE_INFINITY, Number.NaN, -5]) {
      const s = new Session({
        policy: {},
        budget: { tokens: 1000 },
        operations: { 'llm.complete': () => ({ value: 'x', usage: { tokens } }) },
      });
      const t = await s.executeTurn("return await llm.complete('q')");
      expect(t.outcome, String(tokens)).toMatchObject({ tag: 'error', code: 'INVALID_INPUT' });
      expect(s.budgetRemaining('tokens')).toBe(1000);
      const back = Session.restore(s.snapshot());
      expect(back.audit.verify()).toMatchObject({ ok: true });
    }
  });

  it('env and the results of one turn are bounded; undefined in env is dropped as JSON drops it', async () => {
    const s = new Session({ policy: OPEN, operations: { note: (text: string) => text } });
    const big = await s.executeTurn(
      "const b = 'x'.repeat(1 << 20); for (let i = 0; i < 20; i++) env['k' + i] = b; world.write('a.txt', 'a')",
    );
    expect(big.outcome).toMatchObject({ tag: 'error', code: 'INVALID_INPUT' });
    expect(big.outcome.tag === 'error' && big.outcome.message).not.toMatch(/^INVALID_INPUT/);
    expect(s.env).toEqual({});
    expect(s.workspace.exists('a.txt')).toBe(false);
    const results = await s.executeTurn(
      "const b = 'y'.repeat(4 << 20); for (let i = 0; i < 20; i++) await note(b); return 'done'",
    );
    expect(results.outcome).toMatchObject({ tag: 'error', code: 'INVALID_INPUT' });
    const undef = await s.executeTurn(
      "world.write('notes.md', 'n'); env.cursor = undefined; env.list = [1, undefined]; return 'ok'",
    );
    expect(undef.outcome).toEqual({ tag: 'ok', value: 'ok' });
    expect(s.env).toEqual({ list: [1, null] });
    expect(s.workspace.readText('notes.md')).toBe('n');
  });

  it('a world larger than one workspace file snapshots and restores', async () => {
    const chunk = new Uint8Array(40 << 20).fill(1);
    const ws = world({ 'a.bin': chunk, 'b.bin': chunk });
    const s = new Session({ workspace: ws, policy: {} });
    const back = Session.restore(s.snapshot());
    expect(back.workspace.stat('b.bin').size).toBe(40 << 20);
  });

  it('a guest passing one buffer many times cannot multiply it in host memory', async () => {
    const r = await run(
      'const one = new Uint8Array(8e6); try { return f(new Array(100).fill(one)) } catch (e) { return e.name + ": " + e.message }',
      {
        globals: { f: (a: unknown[]) => a.length },
      },
    );
    expect(r.ok && r.value).toMatch(/^RangeError: a value passed to the host is larger than 64 MiB/);
    const s = await run("try { return f('x'.repeat(80 << 20)) } catch (e) { return e.name }", {
      globals: { f: (x: string) => x.length },
      limits: { memoryBytes: 512 << 20 },
    });
    expect(s.ok && s.value).toBe('RangeError');
  });

  it('world calls take data: a toJSON cannot make the audit log show other arguments', async () => {
    const ws = world({ 'prog.js': 'console.log(process.argv.slice(2).join(" "))' });
    const s = new Session({ workspace: ws, policy: {} });
    const t = await s.executeTurn(
      "return await world.exec('prog.js', { argv: ['--delete-everything'], toJSON() { return { argv: ['--dry-run'] } } })",
    );
    expect(t.outcome).toMatchObject({ tag: 'error', name: 'TypeError' });
    expect(s.audit.forOperation('world.exec')).toEqual([]);
  });
});

describe('re-runs see the same world; interrupted calls are not repeated', () => {
  it('world.stat, world.exec and session.budgetRemaining answer the same on a re-run, so the turn resumes', async () => {
    const ws = world({ 'a.txt': 'a', 't.js': 'console.log("hi")' });
    const report = counting();
    const deploy = counting();
    const s = new Session({
      workspace: ws,
      policy: {},
      budget: { hostCalls: 50, tokens: 100 },
      operations: { report: report.handler, deploy: { handler: deploy.handler, needsApproval: true } },
    });
    const t = await s.executeTurn(`world.write('b.txt', 'b');
      const r = await world.exec('t.js');
      await report([r, world.stat('a.txt'), world.stat('b.txt'), session.budgetRemaining(), session.budgetRemaining('hostCalls')]);
      await deploy();
      return 'done'`);
    if (t.outcome.tag !== 'needs-approval') throw new Error(`expected a pause, got ${JSON.stringify(t.outcome)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
    s.approve(t.outcome.requests[0].id);
    const done = (await s.resume()) as TurnResult;
    expect(done.outcome).toEqual({ tag: 'ok', value: 'done' });
    expect(report.calls).toHaveLength(1);
    expect(deploy.calls).toHaveLength(1);
  });

  it('an operation still running when the turn ends is audited, and its late result is not journaled', async () => {
    let finish: (v: string) => void = () => {};
    const s = new Session({
      policy: {},
      limits: { timeoutMs: 300 },
      operations: { transfer: () => new Promise<string>((resolve) => (finish = resolve)) },
    });
    const t = await s.executeTurn('await transfer(1000)');
    expect(t.outcome).toMatchObject({ tag: 'error', code: 'TIMEOUT' });
    const [entry] = s.audit.forOperation('transfer');
    expect(entry.error).toMatch(/still running when the turn ended/);
    finish('late');
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(s.audit.forOperation('transfer')).toHaveLength(1);
    expect((await s.executeTurn('return 2')).outcome).toEqual({ tag: 'ok', value: 2 });
  });

  it('an approved call that was running when the host died is not run again on resume', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qr-interrupted-'));
    const counter = join(dir, 'wires.log');
    try {
      const child = spawn(process.execPath, [
        join(__dirname, '../session/fixtures/session-child.cjs'),
        'interrupted',
        dir,
        counter,
      ]);
      await new Promise<void>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d) => {
          out += d;
          if (out.includes('RUNNING')) {
            child.kill('SIGKILL');
            resolve();
          }
        });
        child.on('exit', (code) => (out.includes('RUNNING') ? resolve() : reject(new Error(`child exited ${code}`))));
      });
      await new Promise((resolve) => child.on('close', resolve));
      expect(readFileSync(counter, 'utf8').trim().split('\n')).toHaveLength(1);
      const again = counting();
      const manager = new SessionManager({
        dir,
        operations: { 'wire.send': { handler: again.handler, needsApproval: true } },
      });
      const t = (await manager.resume('interrupted')) as TurnResult;
      expect(t.outcome).toMatchObject({ tag: 'error', name: 'ApprovalInterrupted' });
      expect(again.calls).toHaveLength(0);
      expect(readFileSync(counter, 'utf8').trim().split('\n')).toHaveLength(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a manager and its own process', () => {
  it('reading a session while this process runs its turn does not invalidate the turn', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qr-same-process-'));
    try {
      const sent = counting();
      // A store that acknowledges a write a little after making it: the window in which the
      // store is ahead of what this process has been told.
      const folder = new FolderStore(dir);
      const store = {
        get: (id: string) => folder.get(id),
        version: (id: string) => folder.version(id),
        list: () => folder.list(),
        delete: (id: string) => folder.delete(id),
        put: async (id: string, bytes: Uint8Array, o: { expectedVersion: number | null }) => {
          const v = await folder.put(id, bytes, o);
          await new Promise((resolve) => setTimeout(resolve, 25));
          return v;
        },
      };
      const manager = new SessionManager({
        store,
        operations: {
          email: async (x: string) => {
            await new Promise((resolve) => setTimeout(resolve, 30));
            return sent.handler(x);
          },
        },
      });
      const s = await manager.create({ id: 'busy', policy: {} });
      const turn = s.executeTurn("await email('hi'); return 'sent'");
      const polls: unknown[] = [];
      for (let i = 0; i < 5; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        polls.push(await manager.get('busy'));
      }
      expect((await turn).outcome).toEqual({ tag: 'ok', value: 'sent' });
      expect(polls.every((p) => p === s)).toBe(true);
      expect(sent.calls).toHaveLength(1);
      const stored = await new SessionManager({ dir }).get('busy');
      expect(stored?.turnNumber).toBe(1);
      expect(existsSync(join(dir, 'busy.session'))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
