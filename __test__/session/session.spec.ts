// Session turns: outcomes, the world, env, needs, lifecycle, budgets, proposals, approvals,
// audit and snapshots (DESIGN §4.1).
import { describe, expect, it } from 'vitest';
import { policies, Session, type SessionPolicy, sessionTools, toOpenAITools, ZipWorkspace } from '../../lib/index.js';

function world(files: Record<string, string> = { 'src/a.js': 'export const a = 1;\n', 'README.md': '# demo\n' }) {
  const ws = new ZipWorkspace();
  for (const [p, text] of Object.entries(files)) ws.writeFile(p, text);
  return ws;
}

const OPEN: SessionPolicy = { worldRules: { readOnly: false } };

describe('turn outcomes', () => {
  it('ok with the value; error with code, line, column and frame; never throws', async () => {
    const s = new Session({ workspace: world() });
    const ok = await s.executeTurn('return world.list().length');
    expect(ok.outcome).toEqual({ tag: 'ok', value: 2 });
    expect(ok.turnNumber).toBe(1);
    const bad = await s.executeTurn('const x = 1;\nnull.y;');
    expect(bad.outcome.tag).toBe('error');
    if (bad.outcome.tag !== 'error') throw new Error('unreachable');
    expect(bad.outcome.code).toBe('EVAL_ERROR');
    expect(bad.outcome.line).toBe(2);
    expect(bad.outcome.frame).toContain('null.y');
    expect(bad.turnNumber).toBe(2);
    const notCode = await s.executeTurn(42 as unknown as string);
    expect(notCode.outcome).toMatchObject({ tag: 'error', code: 'INVALID_INPUT' });
  });

  it('world.read/list/stat/search/fingerprint over the workspace; SAFE_ANALYSIS refuses writes', async () => {
    const s = new Session({ workspace: world(), policy: policies.SAFE_ANALYSIS });
    const t = await s.executeTurn(`
      const text = world.read('src/a.js');
      const bytes = world.read('README.md', { encoding: null });
      return { text, n: bytes.length, js: world.list('*.js'), all: world.list(), kind: world.stat('src/a.js').kind,
               hits: world.search('demo').matches.length, fp: world.fingerprint() };`);
    expect(t.outcome.tag).toBe('ok');
    const v = (t.outcome as { value: Record<string, unknown> }).value;
    expect(v).toMatchObject({
      text: 'export const a = 1;\n',
      n: 7,
      js: ['src/a.js'],
      all: ['README.md', 'src/a.js'],
      kind: 'file',
      hits: 1,
    });
    expect(v.fp).toMatch(/^[0-9a-f]{64}$/);
    const w = await s.executeTurn(`world.write('src/a.js', 'x')`);
    expect(w.outcome).toMatchObject({ tag: 'error', code: 'POLICY_VIOLATION' });
    expect(s.workspace.readText('src/a.js')).toBe('export const a = 1;\n');
  });

  it('a missing file is a catchable error with its code; the turn goes on', async () => {
    const s = new Session({ workspace: world() });
    const t = await s.executeTurn(`try { world.read('nope.txt') } catch (e) { return [e.name, e.message] }`);
    expect(t.outcome.tag).toBe('ok');
    expect((t.outcome as { value: string[] }).value[1]).toMatch(/^NOT_FOUND: /);
  });

  it('direct writes land as one history entry when the turn succeeds, and not at all when it fails', async () => {
    const ws = world();
    const s = new Session({ workspace: ws, policy: OPEN });
    const before = ws.history().length;
    const t = await s.executeTurn(
      `world.write('a.txt', '1'); world.write('b/c.txt', '2'); world.delete('README.md'); return 'done'`,
    );
    expect(t.outcome).toEqual({ tag: 'ok', value: 'done' });
    expect(ws.readText('b/c.txt')).toBe('2');
    expect(ws.exists('README.md')).toBe(false);
    expect(ws.history().length).toBe(before + 1);
    const failed = await s.executeTurn(`world.write('a.txt', 'changed'); throw new Error('late')`);
    expect(failed.outcome.tag).toBe('error');
    expect(ws.readText('a.txt')).toBe('1');
    expect(ws.history().length).toBe(before + 1);
  });

  it('env is plain data kept across turns, saved only when a turn succeeds', async () => {
    const s = new Session({ env: { count: 0 } });
    await s.executeTurn('env.count += 1; env.items = [1]');
    await s.executeTurn('env.count += 1; env.items.push(2)');
    expect(s.env).toEqual({ count: 2, items: [1, 2] });
    await s.executeTurn('env.count = 99; throw new Error("no")');
    expect(s.env).toEqual({ count: 2, items: [1, 2] });
    const fn = await s.executeTurn('env.f = () => 1');
    expect(fn.outcome.tag).toBe('error');
    expect(s.env).toEqual({ count: 2, items: [1, 2] });
  });

  it('needs(question) ends the turn at once and keeps its changes', async () => {
    const ws = world();
    const s = new Session({ workspace: ws, policy: OPEN });
    let after = 0;
    const t = await new Session({
      workspace: ws,
      policy: OPEN,
      operations: { mark: () => after++ },
    }).executeTurn(
      `world.write('q.txt', 'asked'); env.asked = true; try { needs({ which: 'file?' }) } catch {} ; await mark(); return 1`,
    );
    expect(t.outcome).toEqual({ tag: 'needs', question: { which: 'file?' } });
    expect(after).toBe(0);
    expect(ws.readText('q.txt')).toBe('asked');
    expect(s.status).toBe('active');
  });

  it('host operations: dotted names as nested objects, JSON results, errors to the guest, usage counted', async () => {
    const s = new Session({
      budget: { tokens: 100 },
      policy: OPEN,
      operations: {
        'llm.complete': async (prompt: string) => ({ value: `re: ${prompt}`, usage: { tokens: 30 } }),
        'tickets.search': (q: string) => [{ id: 1, q }],
        fails: () => {
          throw new RangeError('out of range');
        },
      },
    });
    const t = await s.executeTurn(`
      const a = await llm.complete('hi');
      const b = await tickets.search('x');
      let err; try { await fails() } catch (e) { err = e.name + ': ' + e.message }
      return [a, b, err, session.budgetRemaining('tokens')]`);
    expect(t.outcome).toEqual({ tag: 'ok', value: ['re: hi', [{ id: 1, q: 'x' }], 'RangeError: out of range', 70] });
    expect(s.audit.stats()).toMatchObject({ totalOperations: 3, totalTokens: 30 });
  });
});

describe('turn records', () => {
  it('keep why a turn failed (code, message, line, frame, budget) through snapshots', async () => {
    const session = new Session({ policy: OPEN, budget: { hostCalls: 3 } });
    await session.executeTurn('return 1');
    await session.executeTurn('const x = 1;\nnull.boom;');
    await session.executeTurn(`throw new Error('${'m'.repeat(5000)}')`);
    await session.executeTurn("for (let i = 0; i < 5; i++) world.write('f' + i, 'x');");
    const turns = Session.restore(session.snapshot()).turns;
    expect(turns[0]).not.toHaveProperty('error');
    expect(turns[1]).toMatchObject({
      outcome: 'error',
      error: { code: 'EVAL_ERROR', name: 'TypeError', line: 2, frame: expect.stringContaining('null.boom') },
    });
    expect(turns[1].error?.message).toMatch(/null/);
    expect(turns[2].error?.message.length).toBeLessThanOrEqual(2049);
    expect(turns[3]).toMatchObject({
      outcome: 'nonconverged',
      error: { code: 'BUDGET_EXCEEDED', budget: 'hostCalls' },
    });
  });
});

describe('policy', () => {
  it('the default is SAFE_ANALYSIS: operations outside its list are refused, and the refusal is audited', async () => {
    let ran = 0;
    const s = new Session({ operations: { 'tickets.search': () => ++ran, 'llm.complete': () => 'ok' } });
    expect(s.allowed('llm.complete')).toBe(true);
    expect(s.allowed('tickets.search')).toBe(false);
    expect((await s.executeTurn('return await llm.complete("x")')).outcome).toEqual({ tag: 'ok', value: 'ok' });
    const t = await s.executeTurn('return await tickets.search("x")');
    expect(t.outcome).toMatchObject({ tag: 'error', code: 'POLICY_VIOLATION', rule: 'allowedOperations' });
    expect(ran).toBe(0);
    expect(s.audit.forOperation('tickets.search')[0].error).toMatch(/not allowed/);
  });

  it('llmRules.maxTokensPerCall, allowComplete and allowNetworkCalls refuse calls', async () => {
    const ops = { 'llm.complete': () => 'x', 'web.fetch': { handler: () => 'page', network: true } };
    const s = new Session({
      operations: ops,
      policy: { llmRules: { maxTokensPerCall: 100 }, executionRules: { allowNetworkCalls: false } },
    });
    expect((await s.executeTurn('return await llm.complete("a", { maxTokens: 100 })')).outcome.tag).toBe('ok');
    expect((await s.executeTurn('return await llm.complete("a", { max_tokens: 101 })')).outcome).toMatchObject({
      code: 'POLICY_VIOLATION',
      rule: 'llmRules.maxTokensPerCall',
    });
    expect((await s.executeTurn('return await web.fetch("u")')).outcome).toMatchObject({
      code: 'POLICY_VIOLATION',
      rule: 'executionRules.allowNetworkCalls',
    });
    const off = new Session({ operations: ops, policy: { llmRules: { allowComplete: false } } });
    expect((await off.executeTurn('return await llm.complete("a")')).outcome).toMatchObject({
      code: 'POLICY_VIOLATION',
    });
  });

  it('world.exec programs meet the same path rules as world.write', async () => {
    const ws = world({
      'src/a.js': 'a',
      'tool.js':
        "import fs from 'fs';\ntry { fs.writeFileSync('etc/x', 'no') } catch (e) { console.log(e.code) }\nfs.writeFileSync('src/ok.txt', 'yes');\n",
    });
    const s = new Session({
      workspace: ws,
      policy: { worldRules: { readPatterns: ['**'], writePatterns: ['src/**'] } },
    });
    const t = await s.executeTurn(`const r = await world.exec('tool.js'); return r.stdout.trim()`);
    expect(t.outcome).toEqual({ tag: 'ok', value: 'EACCES' });
    expect(ws.readText('src/ok.txt')).toBe('yes');
    expect(ws.exists('etc/x')).toBe(false);
  });
});

describe('budgets and lifecycle', () => {
  it('turns budget: the turn past it is nonconverged and the session budget-exceeded', async () => {
    const s = new Session({ budget: { turns: 2 } });
    expect((await s.executeTurn('return 1')).outcome.tag).toBe('ok');
    expect((await s.executeTurn('return 2')).budgetRemaining.turns).toBe(0);
    const t = await s.executeTurn('return 3');
    expect(t.outcome).toMatchObject({
      tag: 'nonconverged',
      reason: 'budget',
      code: 'BUDGET_EXCEEDED',
      budget: 'turns',
    });
    expect(s.status).toBe('budget-exceeded');
    expect((await s.executeTurn('return 4')).outcome).toMatchObject({ tag: 'error', code: 'SESSION_STATE' });
  });

  it('hostCalls, bytesWritten and tokens stop the turn and roll its changes back', async () => {
    const calls = new Session({ budget: { hostCalls: 3 }, policy: OPEN });
    const t = await calls.executeTurn(`for (let i = 0; i < 10; i++) { try { world.write('f' + i, 'x') } catch {} }`);
    expect(t.outcome).toMatchObject({ tag: 'nonconverged', budget: 'hostCalls' });
    expect(calls.workspace.list()).toEqual([]);
    const bytes = new Session({ budget: { bytesWritten: 10 }, policy: OPEN });
    expect((await bytes.executeTurn(`world.write('a', '12345')`)).outcome.tag).toBe('ok');
    expect((await bytes.executeTurn(`world.write('b', '123456')`)).outcome).toMatchObject({
      tag: 'nonconverged',
      budget: 'bytesWritten',
    });
    expect(bytes.workspace.exists('b')).toBe(false);
    const tokens = new Session({
      budget: { tokens: 50 },
      policy: OPEN,
      operations: { 'llm.complete': () => ({ value: 'x', usage: { tokens: 60 } }) },
    });
    expect((await tokens.executeTurn('await llm.complete("a"); return "after"')).outcome).toMatchObject({
      tag: 'nonconverged',
      budget: 'tokens',
    });
  });

  it('callsPerTurn bounds the calls of one turn (HOST_CALL_LIMIT) without ending the session, and survives a snapshot', async () => {
    let runs = 0;
    const s = new Session({ policy: OPEN, callsPerTurn: 5, operations: { op: () => ++runs } });
    const t = await s.executeTurn('for (let i = 0; i < 100; i++) { try { await op() } catch {} } return "done"');
    expect(t.outcome).toMatchObject({ tag: 'error', code: 'HOST_CALL_LIMIT' });
    expect(runs).toBe(5);
    expect(s.status).toBe('active');
    expect(s.audit.entries()).toHaveLength(6);
    const r = Session.restore(s.snapshot(), { operations: { op: () => ++runs } });
    expect((await r.executeTurn('for (let i = 0; i < 6; i++) await op()')).outcome).toMatchObject({
      code: 'HOST_CALL_LIMIT',
    });
    expect(() => new Session({ callsPerTurn: 0 })).toThrow(/INVALID_INPUT/);
  });

  it('consume() counts host-side usage; wallMs bounds the turn', async () => {
    const s = new Session({ budget: { cost: 1 } });
    expect(s.consume({ cost: 0.4 }).cost).toBeCloseTo(0.6);
    s.consume({ cost: 0.7 });
    expect(s.status).toBe('budget-exceeded');
    const slow = new Session({ budget: { wallMs: 100 } });
    const t = await slow.executeTurn('for (;;) {}');
    expect(t.outcome).toMatchObject({ tag: 'nonconverged', budget: 'wallMs' });
  });

  it('pause/resume, complete and abort; turns outside active are SESSION_STATE', async () => {
    const s = new Session();
    s.pause();
    expect((await s.executeTurn('return 1')).outcome).toMatchObject({ tag: 'error', code: 'SESSION_STATE' });
    expect(await s.resume()).toBe(null);
    expect(s.status).toBe('active');
    s.complete();
    expect((await s.executeTurn('return 1')).outcome).toMatchObject({ code: 'SESSION_STATE' });
    const a = new Session({ policy: { worldRules: { proposalMode: true } } });
    await a.executeTurn(`world.write('x', '1')`);
    expect(a.proposals()).toHaveLength(1);
    a.abort();
    expect(a.status).toBe('aborted');
    expect(a.proposals()).toEqual([]);
  });

  it('bad options are INVALID_INPUT at construction', () => {
    expect(() => new Session({ budget: { turns: -1 } })).toThrow(/INVALID_INPUT/);
    expect(() => new Session({ budget: { nope: 1 } as never })).toThrow(/not a budget/);
    expect(() => new Session({ policy: { allowedOperations: 'x' as never } })).toThrow(/INVALID_INPUT/);
    expect(() => new Session({ operations: { world: () => 1 } })).toThrow(/clashes/);
    expect(() => new Session({ operations: { 'a b': () => 1 } })).toThrow(/INVALID_INPUT/);
    expect(() => new Session({ nope: 1 } as never)).toThrow(/unknown Session option/);
  });
});

describe('proposal mode', () => {
  it('stages writes: proposals with diffs, later turns read them, commit lands one entry, rollback discards', async () => {
    const ws = world();
    const s = new Session({ workspace: ws, policy: policies.SAFE_EDIT });
    const t = await s.executeTurn(
      `world.write('src/a.js', 'export const a = 2;\\n'); world.write('src/new.js', 'x'); return 'ok'`,
    );
    expect(t.outcome).toEqual({ tag: 'proposed', value: 'ok' });
    expect(ws.readText('src/a.js')).toBe('export const a = 1;\n');
    const byPath = Object.fromEntries(t.proposals.map((p) => [p.path, p]));
    expect(byPath['src/a.js'].kind).toBe('modify');
    expect(byPath['src/a.js'].diff).toContain('-export const a = 1;');
    expect(byPath['src/a.js'].diff).toContain('+export const a = 2;');
    expect(Buffer.from(byPath['src/a.js'].before ?? []).toString()).toBe('export const a = 1;\n');
    expect(byPath['src/new.js'].kind).toBe('create');
    expect(byPath['src/new.js'].before).toBe(null);
    const read = await s.executeTurn(`return world.read('src/a.js')`);
    expect(read.outcome).toEqual({ tag: 'ok', value: 'export const a = 2;\n' });
    const failed = await s.executeTurn(`world.write('src/a.js', 'broken'); throw new Error('x')`);
    expect(failed.outcome.tag).toBe('error');
    expect(s.proposals().find((p) => p.path === 'src/a.js')?.diff).toContain('+export const a = 2;');
    const entries = ws.history().length;
    const id = s.commit();
    expect(id).toBeTypeOf('number');
    expect(ws.history().length).toBe(entries + 1);
    expect(ws.readText('src/a.js')).toBe('export const a = 2;\n');
    expect(s.proposals()).toEqual([]);
    await s.executeTurn(`world.write('src/a.js', 'again')`);
    s.rollback();
    expect(ws.readText('src/a.js')).toBe('export const a = 2;\n');
    expect(s.proposals()).toEqual([]);
  });

  it('commit refuses with CONFLICT when the world changed under the proposals, and applies nothing', async () => {
    const ws = world();
    const s = new Session({ workspace: ws, policy: policies.SAFE_EDIT });
    await s.executeTurn(`world.write('src/a.js', 'proposal'); world.write('src/b.js', 'b')`);
    ws.writeFile('src/a.js', 'host edit');
    ws.writeFile('notes.txt', 'host only');
    expect(s.proposals().map((p) => p.path)).toEqual(['src/a.js', 'src/b.js']);
    expect(() => s.commit()).toThrow(expect.objectContaining({ code: 'CONFLICT' }));
    expect(ws.readText('src/a.js')).toBe('host edit');
    expect(ws.exists('src/b.js')).toBe(false);
  });
});

describe('approvals', () => {
  it('a needsApproval operation pauses the turn; approve + resume runs it once, earlier calls answer from the journal', async () => {
    const ran: string[] = [];
    const s = new Session({
      policy: OPEN,
      operations: {
        fetchData: (k: string) => {
          ran.push(`fetch ${k}`);
          return { k, n: ran.length };
        },
        'pay.send': {
          handler: (amount: number) => {
            ran.push(`pay ${amount}`);
            return `paid ${amount}`;
          },
          needsApproval: (amount: number) => amount > 10,
        },
      },
    });
    const code = `const d = await fetchData('a'); const small = await pay.send(5); const r = Math.random(); const t = Date.now();
      const big = await pay.send(50); return { d, small, big, r, t }`;
    const t = await s.executeTurn(code);
    expect(t.outcome.tag).toBe('needs-approval');
    if (t.outcome.tag !== 'needs-approval') throw new Error('unreachable');
    expect(t.outcome.requests).toEqual([{ id: expect.any(String), operation: 'pay.send', args: [50] }]);
    expect(s.status).toBe('paused');
    expect(ran).toEqual(['fetch a', 'pay 5']);
    expect((await s.resume())?.outcome).toMatchObject({ code: 'SESSION_STATE' });
    s.approve(t.outcome.requests[0].id);
    const done = await s.resume();
    expect(done?.turnNumber).toBe(1);
    expect(done?.outcome.tag).toBe('ok');
    expect(ran).toEqual(['fetch a', 'pay 5', 'pay 50']);
    const v = (done?.outcome as { value: Record<string, unknown> } | undefined)?.value;
    expect(v).toMatchObject({ d: { k: 'a', n: 1 }, small: 'paid 5', big: 'paid 50' });
    expect(s.status).toBe('active');
    expect(s.budgetUsed().turns).toBe(1);
  });

  it('approve with a value answers without running; reject throws ApprovalRejected in the guest', async () => {
    let runs = 0;
    const make = () =>
      new Session({ policy: OPEN, operations: { deploy: { handler: () => ++runs, needsApproval: true } } });
    const a = make();
    const t = await a.executeTurn('return await deploy("prod")');
    if (t.outcome.tag !== 'needs-approval') throw new Error('expected a pause');
    a.approve(t.outcome.requests[0].id, { value: 'skipped by a person' });
    expect((await a.resume())?.outcome).toEqual({ tag: 'ok', value: 'skipped by a person' });
    const b = make();
    const u = await b.executeTurn('try { await deploy("prod") } catch (e) { return e.name + ": " + e.message }');
    if (u.outcome.tag !== 'needs-approval') throw new Error('expected a pause');
    b.reject(u.outcome.requests[0].id, 'not today');
    expect((await b.resume())?.outcome).toEqual({
      tag: 'ok',
      value: 'ApprovalRejected: deploy was rejected: not today',
    });
    expect(runs).toBe(0);
  });

  it('a paused turn survives snapshot and restore; the restored session resumes without repeating effects', async () => {
    let effects = 0;
    const operations = {
      note: () => ++effects,
      ship: { handler: () => 'shipped', needsApproval: true },
    };
    const s = new Session({ operations, env: { k: 1 }, policy: OPEN });
    const t = await s.executeTurn(
      'const n = await note(); const r = await ship(); env.k = n; return [n, r, Math.random()]',
    );
    if (t.outcome.tag !== 'needs-approval') throw new Error('expected a pause');
    const restored = Session.restore(s.snapshot(), { operations });
    expect(restored.status).toBe('paused');
    expect(restored.pendingApprovals).toEqual(t.outcome.requests);
    restored.approve(t.outcome.requests[0].id);
    const done = await restored.resume();
    expect(done?.outcome.tag).toBe('ok');
    expect((done?.outcome as { value: unknown[] } | undefined)?.value.slice(0, 2)).toEqual([1, 'shipped']);
    expect(effects).toBe(1);
    expect(restored.env).toEqual({ k: 1 });
  });
});

describe('audit, snapshots and tools', () => {
  it('audits every call, refused ones included, hash-chained; cuts long arguments', async () => {
    const s = new Session({ policy: OPEN });
    await s.executeTurn(`world.write('big.txt', 'x'.repeat(10000)); world.read('big.txt')`);
    await s.executeTurn(`world.exec('nope.js')`);
    const entries = s.audit.entries();
    expect(entries.map((e) => e.operation)).toEqual(['world.write', 'world.read', 'world.exec']);
    expect(entries[0].args.length).toBeLessThan(4200);
    expect(entries[0].args).toContain('…[cut: ');
    expect(entries[1].prevHash).toBe(entries[0].hash);
    expect(s.audit.forTurn(1)).toHaveLength(2);
    expect(s.audit.forOperation('world.exec')[0].result ?? s.audit.forOperation('world.exec')[0].error).toBeTruthy();
    const exported = s.audit.export();
    expect(s.audit.verify(exported)).toEqual({ ok: true, entries: 3 });
    expect(s.audit.verify(exported.replace('world.read', 'world.list')).ok).toBe(false);
    expect(s.audit.verify()).toEqual({ ok: true, entries: 3 });
  });

  it('snapshot/restore keeps world, history, proposals, env, turns, budget use and audit', async () => {
    const ws = world();
    const s = new Session({ workspace: ws, policy: policies.SAFE_EDIT, budget: { turns: 5 }, id: 'snap-1' });
    await s.executeTurn(`env.note = 'kept'; world.write('src/z.js', 'z')`);
    const r = Session.restore(s.snapshot());
    expect(r.id).toBe('snap-1');
    expect(r.env).toEqual({ note: 'kept' });
    expect(r.turnNumber).toBe(1);
    expect(r.budgetRemaining('turns')).toBe(4);
    expect(r.proposals().map((p) => p.path)).toEqual(['src/z.js']);
    expect(r.workspace.history().length).toBe(ws.history().length);
    expect(r.audit.entries()).toEqual(s.audit.entries());
    expect(r.policy).toEqual(s.policy);
    r.commit();
    expect(r.workspace.readText('src/z.js')).toBe('z');
    expect(ws.exists('src/z.js')).toBe(false);
    expect(() => Session.restore(new Uint8Array([1, 2, 3]))).toThrow(/INVALID_INPUT/);
  });

  it('the turn as a tool in the neutral form, convertible for OpenAI', async () => {
    const s = new Session({ workspace: world() });
    const set = sessionTools(s);
    expect(set.tools.map((t) => t.name)).toEqual(['execute_turn']);
    const ok = await set.dispatch('execute_turn', { code: 'return world.list()' });
    expect(ok.ok).toBe(true);
    expect(ok.content).toContain('README.md');
    const bad = await set.dispatch('execute_turn', { code: 'world.write("x", "y")' });
    expect(bad).toMatchObject({ ok: false, code: 'POLICY_VIOLATION' });
    const [fn] = toOpenAITools(set, { api: 'chat', strict: true }) as { function: { name: string } }[];
    expect(fn.function.name).toBe('execute_turn');
  });
});
