// Attacks on a session's gate: a denied operation reached another way, a refusal caught so the
// turn goes on, path rules met through every way to the world (world.* and the fs of programs
// that world.exec runs), approvals dodged, resumes that would repeat a side effect or run
// something nobody approved, budgets dodged, host values smuggled through `env`, and audit logs
// edited after the fact.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type OperationHandler,
  policies,
  Session,
  SessionManager,
  type SessionOptions,
  type SessionPolicy,
  type TurnResult,
  ZipWorkspace,
} from '../../lib/index.js';

const SECRET = 'hunter2';

/** A host operation that counts its calls and keeps their arguments. */
function counter(result: (n: number, args: unknown[]) => unknown = (n) => n) {
  const calls: unknown[][] = [];
  const handler = (...args: never[]) => {
    calls.push(args);
    return result(calls.length, args);
  };
  return { calls, handler: handler as OperationHandler };
}

function codeOf(turn: TurnResult): string | undefined {
  return 'code' in turn.outcome ? turn.outcome.code : undefined;
}

function valueOf(turn: TurnResult): unknown {
  return turn.outcome.tag === 'ok' || turn.outcome.tag === 'proposed' ? turn.outcome.value : undefined;
}

function world(files: Record<string, string> = {}): ZipWorkspace {
  const ws = new ZipWorkspace();
  for (const [path, body] of Object.entries(files)) ws.writeFile(path, body);
  return ws;
}

/** Every path of `ws`, files and folders. */
function paths(ws: ZipWorkspace): string[] {
  return ws
    .glob('**/*')
    .map((p) => String(p))
    .sort();
}

const BASE_FILES = {
  'secret/key.txt': `key=${SECRET}\n`,
  'secret/run.mjs': "import fs from 'fs'; fs.writeFileSync('/src/secret-ran.txt', 'ran');",
  'etc/conf': 'conf\n',
  'src/a.txt': 'alpha\n',
  'notes.md': 'notes\n',
};

/** A policy that lets world.* and exec run, with read and write rules. */
const EXEC_POLICY: SessionPolicy = {
  allowedOperations: ['world.*', 'count.*', 'tickets.*'],
  worldRules: { readPatterns: ['src/**', 'etc/**', 'notes.md'], writePatterns: ['src/**'] },
  executionRules: { allowExec: true },
};

// ---------------------------------------------------------------------------------------------

describe('a denied operation is denied on every path', () => {
  const PROGRAM = "import fs from 'fs'; fs.writeFileSync('/src/ran.txt', 'ran');";

  function execDenied(policy: SessionPolicy) {
    const ws = world({ ...BASE_FILES, 'src/p.mjs': PROGRAM });
    const bump = counter();
    const session = new Session({ workspace: ws, policy, operations: { 'count.bump': bump.handler } });
    return { ws, session, bump };
  }

  const EXEC_SPELLINGS: Record<string, string> = {
    plain: "return await world.exec('src/p.mjs')",
    globalThis: "return await globalThis.world.exec('src/p.mjs')",
    self: "return await self.world.exec('src/p.mjs')",
    'computed name': "return await world['ex' + 'ec']('src/p.mjs')",
    'Reflect.apply': "return await Reflect.apply(world.exec, world, ['src/p.mjs'])",
    '.call': "return await world.exec.call(world, 'src/p.mjs')",
    '.apply': "return await world.exec.apply(null, ['src/p.mjs'])",
    '.bind': "return await world.exec.bind(world)('src/p.mjs')",
    destructuring: "const { exec } = world; return await exec('src/p.mjs')",
    'renamed destructuring': "const { exec: run } = globalThis.world; return await run('src/p.mjs')",
    'Function.prototype.call.call': "return await Function.prototype.call.call(world.exec, world, 'src/p.mjs')",
    'found by enumeration': "return await Object.entries(world).find(([k]) => k === 'exec')[1]('src/p.mjs')",
    'as a callback': "return await Promise.resolve('src/p.mjs').then(world.exec)",
    'through map': "return await [world.exec].map((f) => f('src/p.mjs'))[0]",
    'through a Proxy': "return await new Proxy(world, {}).exec('src/p.mjs')",
    'in a microtask':
      "let p; queueMicrotask(() => { p = world.exec('src/p.mjs') }); await null; await null; return await p",
    'in a timer': "return await new Promise((res, rej) => setTimeout(() => world.exec('src/p.mjs').then(res, rej), 0))",
    'from an async generator':
      "async function* g() { yield await world.exec('src/p.mjs') } for await (const r of g()) return r",
  };

  for (const [name, code] of Object.entries(EXEC_SPELLINGS)) {
    it(`world.exec denied by deniedOperations: ${name}`, async () => {
      const { ws, session, bump } = execDenied({
        allowedOperations: ['world.*', 'count.*'],
        deniedOperations: ['world.exec'],
        executionRules: { allowExec: true },
      });
      const turn = await session.executeTurn(`${code};\nawait count.bump();`);
      expect(codeOf(turn), JSON.stringify(turn.outcome)).toBe('POLICY_VIOLATION');
      expect(turn.outcome).toMatchObject({ rule: 'world.exec' });
      expect(bump.calls).toHaveLength(0);
      expect(ws.exists('src/ran.txt')).toBe(false);
      const audited = session.audit.forOperation('world.exec');
      expect(audited.length).toBeGreaterThan(0);
      expect(audited.every((e) => e.error !== undefined && e.result === undefined)).toBe(true);
    });

    it(`world.exec refused by executionRules.allowExec: false even when allowed by name: ${name}`, async () => {
      const { ws, session, bump } = execDenied({
        allowedOperations: ['world.exec', 'world.*', 'count.*'],
        executionRules: { allowExec: false },
      });
      const turn = await session.executeTurn(`${code};\nawait count.bump();`);
      expect(codeOf(turn), JSON.stringify(turn.outcome)).toBe('POLICY_VIOLATION');
      expect(turn.outcome).toMatchObject({ rule: 'executionRules.allowExec' });
      expect(bump.calls).toHaveLength(0);
      expect(ws.exists('src/ran.txt')).toBe(false);
    });
  }

  it('world.exec kept in env does not become callable in a later turn', async () => {
    const { ws, session } = execDenied({
      allowedOperations: ['world.*', 'count.*'],
      deniedOperations: ['world.exec'],
    });
    const first = await session.executeTurn('env.f = world.exec; env.w = world; return typeof env.f');
    expect(first.outcome.tag === 'ok' || first.outcome.tag === 'error').toBe(true);
    for (const code of [
      "return await env.f('src/p.mjs')",
      "return await env.w.exec('src/p.mjs')",
      "return await env.f.call(world, 'src/p.mjs')",
    ]) {
      const turn = await session.executeTurn(code);
      expect(turn.outcome.tag, code).toBe('error');
      expect(ws.exists('src/ran.txt'), code).toBe(false);
    }
    expect(session.audit.forOperation('world.exec').every((e) => e.result === undefined)).toBe(true);
  });

  const TICKET_SPELLINGS: Record<string, string> = {
    plain: 'await tickets.close(1)',
    'computed name': "await tickets['clo' + 'se'](1)",
    globalThis: 'await globalThis.tickets.close(1)',
    'Reflect.apply': 'await Reflect.apply(tickets.close, null, [1])',
    '.call': 'await tickets.close.call(null, 1)',
    '.apply': 'await tickets.close.apply(tickets, [1])',
    destructuring: 'const { close } = tickets; await close(1)',
    'Function.prototype.call.call': 'await Function.prototype.call.call(tickets.close, null, 1)',
    'Promise.all': 'await Promise.all([tickets.close(1), tickets.close(2)])',
    'Promise.allSettled then carry on': 'await Promise.allSettled([tickets.close(1)]); await tickets.close(2)',
    'in .then': 'await Promise.resolve(1).then(tickets.close)',
    'in queueMicrotask': 'let p; queueMicrotask(() => { p = tickets.close(1) }); await null; await null; await p',
    'fire and forget': "tickets.close(1).catch(() => {}); await new Promise((r) => setTimeout(r, 5)); return 'x'",
    'via an async iterator':
      'const it = { async *[Symbol.asyncIterator]() { yield tickets.close(1) } }; for await (const x of it) {}',
  };

  for (const [name, code] of Object.entries(TICKET_SPELLINGS)) {
    it(`an operation denied by a * rule: ${name}`, async () => {
      const close = counter();
      const bump = counter();
      const session = new Session({
        policy: { deniedOperations: ['tickets.*'] },
        operations: { 'tickets.close': close.handler, 'count.bump': bump.handler },
      });
      const turn = await session.executeTurn(`${code};\nawait count.bump();`);
      expect(codeOf(turn), JSON.stringify(turn.outcome)).toBe('POLICY_VIOLATION');
      expect(turn.outcome).toMatchObject({ rule: 'tickets.*' });
      expect(close.calls).toHaveLength(0);
      expect(bump.calls).toHaveLength(0);
    });
  }

  it('deny wins over allow, whether the allow is exact or a wildcard', async () => {
    for (const allowedOperations of [['tickets.*'], ['tickets.close', 'tickets.list'], ['*']]) {
      const close = counter();
      const list = counter();
      const session = new Session({
        policy: { allowedOperations, deniedOperations: ['tickets.close'] },
        operations: { 'tickets.close': close.handler, 'tickets.list': list.handler },
      });
      expect(session.allowed('tickets.close')).toBe(false);
      expect(session.allowed('tickets.list')).toBe(true);
      const listed = await session.executeTurn('return await tickets.list()');
      expect(listed.outcome).toEqual({ tag: 'ok', value: 1 });
      const turn = await session.executeTurn(
        'const seen = session.allowed("tickets.close"); await tickets.close(1); return seen',
      );
      expect(codeOf(turn), JSON.stringify(allowedOperations)).toBe('POLICY_VIOLATION');
      expect(close.calls).toHaveLength(0);
    }
  });

  it('an operation missing from allowedOperations is refused, world operations included', async () => {
    const close = counter();
    const session = new Session({
      workspace: world({ 'src/a.txt': 'a' }),
      policy: { allowedOperations: ['tickets.list', 'world.read'] },
      operations: { 'tickets.close': close.handler, 'tickets.list': () => [] },
    });
    for (const code of [
      'await tickets.close(1)',
      'world.list()',
      "world.write('src/a.txt', 'b')",
      "world.stat('src/a.txt')",
      "await world.exec('src/a.txt')",
    ]) {
      const turn = await session.executeTurn(code);
      expect(codeOf(turn), code).toBe('POLICY_VIOLATION');
    }
    expect(close.calls).toHaveLength(0);
    expect(session.workspace.readText('src/a.txt')).toBe('a');
    expect((await session.executeTurn("return world.read('src/a.txt')")).outcome).toEqual({ tag: 'ok', value: 'a' });
  });

  it('a network operation is refused when network calls are not allowed, by every spelling', async () => {
    const fetchOp = counter();
    const session = new Session({
      policy: { executionRules: { allowNetworkCalls: false } },
      operations: { 'net.fetch': { handler: fetchOp.handler, network: true } },
    });
    for (const code of [
      "await net.fetch('https://example.com')",
      "await Reflect.apply(net.fetch, null, ['x'])",
      "const { fetch: f } = net; try { await f('x') } catch {} await f('y')",
    ]) {
      const turn = await session.executeTurn(code);
      expect(codeOf(turn), code).toBe('POLICY_VIOLATION');
      expect(turn.outcome).toMatchObject({ rule: 'executionRules.allowNetworkCalls' });
    }
    expect(fetchOp.calls).toHaveLength(0);
  });

  it('llm.complete is refused when llmRules.allowComplete is false', async () => {
    const llm = counter();
    const session = new Session({
      policy: { llmRules: { allowComplete: false } },
      operations: { 'llm.complete': llm.handler },
    });
    for (const code of [
      "await llm.complete('hi')",
      "try { await llm.complete('hi') } catch {} await llm['comp' + 'lete']('again')",
    ]) {
      expect(codeOf(await session.executeTurn(code)), code).toBe('POLICY_VIOLATION');
    }
    expect(llm.calls).toHaveLength(0);
  });
});

// ---------------------------------------------------------------------------------------------

describe('a caught refusal does not let the turn go on', () => {
  const REFUSALS: Record<string, string> = {
    'write outside writePatterns': "world.write('etc/x', 'y')",
    'read outside readPatterns': "world.read('secret/key.txt')",
    'delete outside writePatterns': "world.delete('notes.md')",
    'denied operation': 'await tickets.close(1)',
  };
  const CATCHES: Record<string, (refused: string) => string> = {
    'try/catch': (r) => `try { ${r} } catch {}`,
    'try/catch in a function': (r) => `const f = async () => { try { ${r} } catch (e) { return e } }; await f();`,
    'try/finally swallowed by an outer catch': (r) =>
      `try { try { ${r} } finally { world.write('src/f', '1') } } catch {}`,
    'promise .catch': (r) => `await (async () => { ${r} })().catch(() => null);`,
    'Promise.allSettled': (r) => `await Promise.allSettled([(async () => { ${r} })()]);`,
    'rejection handled in a microtask': (r) =>
      `await new Promise((res) => queueMicrotask(async () => { try { ${r} } catch {} res() }));`,
  };

  for (const [refusal, refused] of Object.entries(REFUSALS)) {
    for (const [how, wrap] of Object.entries(CATCHES)) {
      it(`${refusal}, caught by ${how}`, async () => {
        const ws = world(BASE_FILES);
        const before = paths(ws);
        const bump = counter();
        const close = counter();
        const session = new Session({
          workspace: ws,
          policy: { ...EXEC_POLICY, deniedOperations: ['tickets.close'] },
          operations: { 'count.bump': bump.handler, 'tickets.close': close.handler },
          env: { n: 0 },
        });
        const code = `env.n = 1;\n${wrap(refused)}\nawait count.bump();\nworld.write('src/ok', 'z');\nenv.n = 2;\nreturn 'continued'`;
        const turn = await session.executeTurn(code);
        expect(turn.outcome.tag, JSON.stringify(turn.outcome)).toBe('error');
        expect(codeOf(turn)).toBe('POLICY_VIOLATION');
        expect(bump.calls).toHaveLength(0);
        expect(close.calls).toHaveLength(0);
        expect(paths(ws)).toEqual(before);
        expect(ws.exists('src/ok')).toBe(false);
        expect(ws.exists('src/f')).toBe(false);
        expect(session.env).toEqual({ n: 0 });
        expect(session.proposals()).toEqual([]);
        expect(session.status).toBe('active');
      });
    }
  }

  it('in proposal mode a refused turn stages nothing, even what it wrote before the refusal', async () => {
    const ws = world(BASE_FILES);
    const bump = counter();
    const session = new Session({
      workspace: ws,
      policy: { worldRules: { writePatterns: ['src/**'], proposalMode: true } },
      operations: { 'count.bump': bump.handler },
    });
    const turn = await session.executeTurn(
      "world.write('src/first', '1'); try { world.write('README.md', 'x') } catch {} world.write('src/after', '2'); await count.bump(); return 'continued'",
    );
    expect(codeOf(turn)).toBe('POLICY_VIOLATION');
    expect(turn.proposals).toEqual([]);
    expect(session.proposals()).toEqual([]);
    expect(bump.calls).toHaveLength(0);
    expect(session.commit()).toBeNull();
    expect(ws.exists('src/first') || ws.exists('src/after') || ws.exists('README.md')).toBe(false);
  });

  it('needs() after a caught refusal does not turn the failure into a kept turn', async () => {
    const ws = world(BASE_FILES);
    const session = new Session({ workspace: ws, policy: EXEC_POLICY });
    const turn = await session.executeTurn(
      "world.write('src/kept', '1'); try { world.write('etc/x', 'y') } catch {} needs('what now?')",
    );
    expect(codeOf(turn)).toBe('POLICY_VIOLATION');
    expect(ws.exists('src/kept')).toBe(false);
  });

  it('a caught needs() stops the turn: writes after it do not land', async () => {
    const ws = world(BASE_FILES);
    const bump = counter();
    const session = new Session({ workspace: ws, policy: EXEC_POLICY, operations: { 'count.bump': bump.handler } });
    const turn = await session.executeTurn(
      "world.write('src/before', '1'); try { needs('q') } catch {} try { world.write('src/after', '2') } catch {} try { await count.bump() } catch {} return 'continued'",
    );
    expect(turn.outcome).toEqual({ tag: 'needs', question: 'q' });
    expect(ws.exists('src/before')).toBe(true);
    expect(ws.exists('src/after')).toBe(false);
    expect(bump.calls).toHaveLength(0);
  });
});

// ---------------------------------------------------------------------------------------------

describe('path rules hold on every way to the world', () => {
  function guarded(extra: Record<string, string> = {}, options: Partial<SessionOptions> = {}) {
    const ws = world({ ...BASE_FILES, ...extra });
    const session = new Session({ workspace: ws, policy: EXEC_POLICY, ...options });
    return { ws, session };
  }

  const WRITE_SPELLINGS = [
    'etc/x',
    '/etc/x',
    '~/etc/x',
    './etc/x',
    './src/../etc/x',
    'src/../etc/x',
    '~/src/./../etc/x',
    'src//..//etc/x',
    'notes.md',
    '/notes.md',
    'src/../notes.md',
    'src/../../x',
    '../x',
    '~/../x',
    '/../x',
    'src\\..\\etc\\x',
  ];

  for (const p of WRITE_SPELLINGS) {
    it(`world.write(${JSON.stringify(p)}) changes nothing outside writePatterns`, async () => {
      const { ws, session } = guarded();
      const before = ws.toZip({ history: false });
      const turn = await session.executeTurn(
        `let seen = 'no error'; try { world.write(${JSON.stringify(p)}, 'pwned') } catch (e) { seen = e.name + ': ' + e.message } return seen`,
      );
      // A path rule ends the turn; a path that is not a path at all is a plain error the guest sees.
      if (turn.outcome.tag === 'ok') expect(String(valueOf(turn))).toMatch(/PATH_INVALID|backslash|climbs/);
      else expect(codeOf(turn)).toBe('POLICY_VIOLATION');
      expect(Buffer.compare(ws.toZip({ history: false }), before)).toBe(0);
      expect(ws.readText('notes.md')).toBe('notes\n');
      expect(ws.exists('etc/x')).toBe(false);
    });
  }

  it('world.write with bytes, world.delete and world.mkdir outside writePatterns are refused', async () => {
    for (const code of [
      "world.delete('notes.md')",
      "world.delete('/etc/conf')",
      "world.delete('src/../etc', { recursive: true })",
      "world.delete('etc', { recursive: true })",
      "world.delete('secret/key.txt')",
      "world.mkdir('etc/sub')",
      "world.mkdir('~/newdir')",
      "world.mkdir('src/../outside')",
    ]) {
      const { ws, session } = guarded();
      const before = paths(ws);
      const turn = await session.executeTurn(`try { ${code} } catch {} return 'continued'`);
      expect(codeOf(turn), code).toBe('POLICY_VIOLATION');
      expect(paths(ws), code).toEqual(before);
      expect(ws.readText('etc/conf')).toBe('conf\n');
    }
  });

  it('world.write of bytes outside writePatterns changes nothing', async () => {
    for (const p of ['etc/bin', '/etc/bin', 'src/../etc/bin', '~/notes.md']) {
      const { ws, session } = guarded();
      const before = ws.toZip({ history: false });
      const turn = await session.executeTurn(
        `let seen = 'no error'; try { world.write(${JSON.stringify(p)}, new Uint8Array([1, 2, 3])) } catch (e) { seen = e.name } return seen`,
      );
      // Refused by the path rule, or (while guest bytes do not reach world.write as bytes) a TypeError.
      if (turn.outcome.tag === 'ok') expect(turn.outcome.value, p).toBe('TypeError');
      else expect(codeOf(turn), p).toBe('POLICY_VIOLATION');
      expect(Buffer.compare(ws.toZip({ history: false }), before), p).toBe(0);
    }
  });

  it('world.read and world.stat outside readPatterns are refused however spelled', async () => {
    for (const p of [
      'secret/key.txt',
      '/secret/key.txt',
      '~/secret/key.txt',
      './secret//key.txt',
      'src/../secret/key.txt',
      '~/src/./../secret/./key.txt',
    ]) {
      for (const call of [
        `world.read(${JSON.stringify(p)})`,
        `world.read(${JSON.stringify(p)}, { encoding: null })`,
        `world.stat(${JSON.stringify(p)})`,
      ]) {
        const { session } = guarded();
        const turn = await session.executeTurn(`let got = null; try { got = ${call} } catch {} return got`);
        expect(codeOf(turn), call).toBe('POLICY_VIOLATION');
        expect(JSON.stringify(turn), call).not.toContain(SECRET);
      }
    }
  });

  it('world.list, world.search and world.fingerprint reveal nothing of unreadable files', async () => {
    const { session } = guarded({ 'src/mention.txt': 'no secret here\n' });
    const listed = await session.executeTurn(`const out = [];
for (const g of [undefined, 'secret/**', '**/*.txt', '**/key.txt', '/secret/*', '~/secret/*', 'src/../secret/*', '**', '*/*']) {
  try { out.push(world.list(g)) } catch (e) { out.push(e.name) }
}
return out;`);
    expect(listed.outcome.tag).toBe('ok');
    expect(JSON.stringify(valueOf(listed))).not.toMatch(/secret\//);
    const searched = await session.executeTurn(
      `return [world.search(${JSON.stringify(SECRET)}), world.search('key='), world.search('key', { path: 'secret' })]`,
    );
    // A search under an unreadable folder may be refused; it must never return the bytes.
    expect(JSON.stringify(searched.outcome)).not.toContain(SECRET);
    expect(JSON.stringify(searched.outcome)).not.toContain('key=');
    const fingerprints = await session.executeTurn(
      "return [world.fingerprint('secret/**'), world.fingerprint('nothing/**'), world.fingerprint('**/key.txt')]",
    );
    const [secret, nothing, key] = valueOf(fingerprints) as string[];
    expect(secret).toBe(nothing);
    expect(key).toBe(nothing);
  });

  it('world.exec of a program outside readPatterns does not run it', async () => {
    const { ws, session } = guarded();
    const turn = await session.executeTurn(
      "const r = await world.exec('secret/run.mjs'); const s = await world.exec('src/../secret/run.mjs'); return [r.ok, s.ok]",
    );
    if (turn.outcome.tag === 'ok') expect(turn.outcome.value).toEqual([false, false]);
    else expect(codeOf(turn)).toBe('POLICY_VIOLATION');
    expect(ws.exists('src/secret-ran.txt')).toBe(false);
  });

  const PROGRAM_WRITES: Record<string, string> = {
    writeFileSync: "fs.writeFileSync('/etc/x', 'pwned')",
    'writeFileSync relative': "fs.writeFileSync('etc/x', 'pwned')",
    'writeFileSync through ..': "fs.writeFileSync('/src/../etc/x', 'pwned')",
    'writeFileSync with ~': "fs.writeFileSync('~/etc/x', 'pwned')",
    'writeFileSync over notes': "fs.writeFileSync('/notes.md', 'pwned')",
    'promises.writeFile': "await fs.promises.writeFile('/etc/x', 'pwned')",
    'writeFile callback':
      "await new Promise((res, rej) => fs.writeFile('/etc/x', 'pwned', (e) => (e ? rej(e) : res())))",
    appendFileSync: "fs.appendFileSync('/notes.md', 'pwned')",
    renameSync: "fs.renameSync('/src/a.txt', '/etc/moved')",
    'renameSync out of etc': "fs.renameSync('/etc/conf', '/src/conf')",
    copyFileSync: "fs.copyFileSync('/src/a.txt', '/etc/copied')",
    'promises.copyFile': "await fs.promises.copyFile('/src/a.txt', '/etc/copied')",
    mkdirSync: "fs.mkdirSync('/etc/sub', { recursive: true })",
    rmSync: "fs.rmSync('/etc', { recursive: true, force: true })",
    unlinkSync: "fs.unlinkSync('/notes.md')",
    'promises.rm': "await fs.promises.rm('/etc/conf')",
  };

  for (const [name, statement] of Object.entries(PROGRAM_WRITES)) {
    it(`a program run by world.exec cannot write outside writePatterns: ${name}`, async () => {
      const program = `import fs from 'fs';\nlet out;\ntry { ${statement}; out = 'wrote' } catch (e) { out = e.code ?? e.name }\nfs.writeFileSync('/src/done.txt', out);\nconsole.log(out);\n`;
      const { ws, session } = guarded({ 'src/prog.mjs': program });
      const before = paths(ws);
      const turn = await session.executeTurn("const r = await world.exec('src/prog.mjs'); return r.stdout.trim()");
      expect(turn.outcome, name).toEqual({ tag: 'ok', value: 'EACCES' });
      // The program ran (its allowed write landed with the turn), and nothing else changed.
      expect(ws.readText('src/done.txt')).toBe('EACCES');
      expect(paths(ws).filter((p) => p !== 'src/done.txt')).toEqual(before);
      expect(ws.readText('notes.md')).toBe('notes\n');
      expect(ws.readText('etc/conf')).toBe('conf\n');
      expect(ws.readText('src/a.txt')).toBe('alpha\n');
    });
  }

  it('a program the guest writes itself meets the same rules', async () => {
    const { ws, session } = guarded();
    const program = `import fs from 'fs';
const out = [];
for (const f of [() => fs.writeFileSync('/etc/x', 'p'), () => fs.readFileSync('/secret/key.txt', 'utf8'), () => fs.copyFileSync('/secret/key.txt', '/src/copy')]) {
  try { out.push(String(f())) } catch (e) { out.push(e.code) }
}
console.log(out.join(' '));`;
    const turn = await session.executeTurn(
      `world.write('src/mine.mjs', ${JSON.stringify(program)}); const r = await world.exec('src/mine.mjs'); return r.stdout.trim()`,
    );
    expect(turn.outcome).toEqual({ tag: 'ok', value: 'EACCES EACCES EACCES' });
    expect(ws.exists('etc/x')).toBe(false);
    expect(ws.exists('src/copy')).toBe(false);
  });

  const PROGRAM_READS: Record<string, string> = {
    readFileSync: "fs.readFileSync('/secret/key.txt', 'utf8')",
    'readFileSync relative': "fs.readFileSync('secret/key.txt', 'utf8')",
    'readFileSync through ..': "fs.readFileSync('/src/../secret/key.txt', 'utf8')",
    'promises.readFile': "await fs.promises.readFile('/secret/key.txt', 'utf8')",
    'readFile callback':
      "await new Promise((res, rej) => fs.readFile('/secret/key.txt', 'utf8', (e, d) => (e ? rej(e) : res(d))))",
    'copy into src then read': "fs.copyFileSync('/secret/key.txt', '/src/k'); fs.readFileSync('/src/k', 'utf8')",
    'rename into src then read': "fs.renameSync('/secret/key.txt', '/src/k'); fs.readFileSync('/src/k', 'utf8')",
    'dynamic import': "(await import('/secret/run.mjs')).default",
  };

  for (const [name, expr] of Object.entries(PROGRAM_READS)) {
    it(`a program run by world.exec cannot read outside readPatterns: ${name}`, async () => {
      const program = `import fs from 'fs';\nlet got;\ntry { got = ${expr} } catch (e) { got = 'refused ' + (e.code ?? e.name) }\nconsole.log(String(got));\n`;
      const { ws, session } = guarded({ 'src/prog.mjs': program });
      const turn = await session.executeTurn("const r = await world.exec('src/prog.mjs'); return r");
      expect(JSON.stringify(turn.outcome), name).not.toContain(SECRET);
      expect(JSON.stringify(turn.outcome), name).toMatch(/refused|EACCES|POLICY_VIOLATION/);
      expect(ws.readText('secret/key.txt')).toBe(`key=${SECRET}\n`);
      expect(ws.exists('src/k')).toBe(false);
      expect(ws.exists('src/secret-ran.txt')).toBe(false);
    });
  }
});

// ---------------------------------------------------------------------------------------------

describe('readOnly refuses every write', () => {
  const READ_ONLY: SessionPolicy = {
    allowedOperations: ['world.*'],
    worldRules: { readOnly: true, writePatterns: ['**/*'] },
    executionRules: { allowExec: true },
  };

  for (const code of [
    "world.write('src/a.txt', 'b')",
    "world.write('new.txt', 'b')",
    "world.write('./src/../x', '')",
    "world.delete('src/a.txt')",
    "world.delete('src', { recursive: true })",
    "world.mkdir('d')",
    "world.mkdir('src/d')",
  ]) {
    it(code, async () => {
      const ws = world(BASE_FILES);
      const before = ws.toZip({ history: false });
      const session = new Session({ workspace: ws, policy: READ_ONLY });
      expect(session.policy.worldRules.readOnly).toBe(true);
      const turn = await session.executeTurn(`try { ${code} } catch {} return 'continued'`);
      expect(codeOf(turn)).toBe('POLICY_VIOLATION');
      expect(Buffer.compare(ws.toZip({ history: false }), before)).toBe(0);
    });
  }

  it('bytes are refused too', async () => {
    const ws = world(BASE_FILES);
    const before = ws.toZip({ history: false });
    const session = new Session({ workspace: ws, policy: READ_ONLY });
    const turn = await session.executeTurn(
      "let seen = 'no error'; try { world.write('/src/new.txt', new Uint8Array([1])) } catch (e) { seen = e.name } return seen",
    );
    if (turn.outcome.tag === 'ok') expect(turn.outcome.value).toBe('TypeError');
    else expect(codeOf(turn)).toBe('POLICY_VIOLATION');
    expect(Buffer.compare(ws.toZip({ history: false }), before)).toBe(0);
  });

  it('a program run by world.exec cannot write either', async () => {
    const program = `import fs from 'fs';
const out = [];
for (const f of [
  () => fs.writeFileSync('/src/a.txt', 'b'),
  () => fs.writeFileSync('/tmp.txt', 'b'),
  () => fs.appendFileSync('/src/a.txt', 'b'),
  () => fs.mkdirSync('/d'),
  () => fs.rmSync('/src/a.txt'),
  () => fs.renameSync('/src/a.txt', '/src/b.txt'),
  () => fs.copyFileSync('/src/a.txt', '/src/b.txt'),
]) { try { f(); out.push('ok') } catch (e) { out.push(e.code) } }
console.log(out.join(' '));`;
    const ws = world({ ...BASE_FILES, 'src/prog.mjs': program });
    const before = ws.toZip({ history: false });
    const session = new Session({ workspace: ws, policy: READ_ONLY });
    const turn = await session.executeTurn("return (await world.exec('src/prog.mjs')).stdout.trim()");
    expect(turn.outcome).toEqual({ tag: 'ok', value: Array(7).fill('EACCES').join(' ') });
    expect(Buffer.compare(ws.toZip({ history: false }), before)).toBe(0);
  });

  it('SAFE_EDIT stages writes under src/ and test/ only, and never runs programs', async () => {
    const ws = world({ ...BASE_FILES, 'src/prog.mjs': "import fs from 'fs'; fs.writeFileSync('/src/ran', '1');" });
    const before = ws.toZip({ history: false });
    const session = new Session({ workspace: ws, policy: policies.SAFE_EDIT });
    for (const code of [
      "world.write('README.md', 'x')",
      "world.write('src/../README.md', 'x')",
      "world.write('secret/key.txt', 'x')",
      "world.delete('notes.md')",
      "world.mkdir('lib')",
      "await world.exec('src/prog.mjs')",
      "await globalThis.world['exec'].call(world, 'src/prog.mjs')",
    ]) {
      const turn = await session.executeTurn(
        `world.write('src/staged-' + session.turnNumber, 'x'); try { ${code} } catch {} return 'continued'`,
      );
      expect(codeOf(turn), code).toBe('POLICY_VIOLATION');
      expect(session.proposals(), code).toEqual([]);
    }
    const ok = await session.executeTurn("world.write('src/new.txt', 'n'); world.write('test/t.txt', 't'); return 1");
    expect(ok.outcome).toEqual({ tag: 'proposed', value: 1 });
    expect(
      session
        .proposals()
        .filter((p) => !p.dir)
        .map((p) => p.path),
    ).toEqual(['src/new.txt', 'test/t.txt']);
    // Nothing reached the world before commit.
    expect(Buffer.compare(ws.toZip({ history: false }), before)).toBe(0);
    session.rollback();
    expect(session.proposals()).toEqual([]);
    expect(Buffer.compare(ws.toZip({ history: false }), before)).toBe(0);
  });

  it('the default policy (SAFE_ANALYSIS) writes nothing and runs nothing', async () => {
    const ws = world({ ...BASE_FILES, 'src/prog.mjs': "import fs from 'fs'; fs.writeFileSync('/src/ran', '1');" });
    const before = ws.toZip({ history: false });
    const session = new Session({ workspace: ws });
    for (const code of [
      "world.write('src/x', '1')",
      "world.mkdir('src/d')",
      "world.delete('notes.md')",
      "await world.exec('src/prog.mjs')",
      "await Reflect.apply(world.exec, world, ['src/prog.mjs'])",
    ]) {
      const turn = await session.executeTurn(`try { ${code} } catch {} return 'continued'`);
      expect(codeOf(turn), code).toBe('POLICY_VIOLATION');
    }
    expect(Buffer.compare(ws.toZip({ history: false }), before)).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------

describe('approvals are enforced, not just asked for', () => {
  function bank(needsApproval: boolean | ((o: { amount: number }) => boolean) = true) {
    const transfer = counter(() => 'sent');
    const bump = counter();
    const session = new Session({
      policy: {},
      operations: {
        'bank.transfer': { handler: transfer.handler, needsApproval: needsApproval as (...args: never[]) => boolean },
        'count.bump': bump.handler,
      },
    });
    return { session, transfer, bump };
  }

  const DODGES: Record<string, string> = {
    await: 'await bank.transfer({ amount: 1 })',
    'catch and call again': 'try { await bank.transfer({ amount: 1 }) } catch {} await bank.transfer({ amount: 1 })',
    'call in a loop': 'for (let i = 0; i < 20; i++) { try { await bank.transfer({ amount: i }) } catch {} }',
    'Promise.all': 'await Promise.all([bank.transfer({ amount: 1 }), bank.transfer({ amount: 2 })])',
    'Promise.allSettled': 'await Promise.allSettled([bank.transfer({ amount: 1 }), bank.transfer({ amount: 2 })])',
    'Promise.any': 'await Promise.any([bank.transfer({ amount: 1 }), bank.transfer({ amount: 2 })]).catch(() => {})',
    'Promise.race': 'await Promise.race([bank.transfer({ amount: 1 }), new Promise((r) => setTimeout(r, 50))])',
    '.then callback': 'await Promise.resolve().then(() => bank.transfer({ amount: 1 }))',
    queueMicrotask:
      'queueMicrotask(() => { bank.transfer({ amount: 1 }).catch(() => {}) }); await new Promise((r) => setTimeout(r, 20))',
    setTimeout:
      'setTimeout(() => { bank.transfer({ amount: 1 }).catch(() => {}) }, 0); await new Promise((r) => setTimeout(r, 20))',
    'fire and forget': "bank.transfer({ amount: 1 }).catch(() => {}); return 'x'",
    'Reflect.apply': 'await Reflect.apply(bank.transfer, null, [{ amount: 1 }])',
    destructured: 'const { transfer } = bank; await transfer.call(null, { amount: 1 })',
    'promise chain of calls':
      'await [1, 2, 3].reduce((p, i) => p.then(() => bank.transfer({ amount: i }).catch(() => {})), Promise.resolve())',
  };

  for (const [name, code] of Object.entries(DODGES)) {
    it(`the operation does not run before approval: ${name}`, async () => {
      const { session, transfer, bump } = bank();
      const turn = await session.executeTurn(`${code};\nawait count.bump();\nreturn 'done'`);
      expect(transfer.calls).toHaveLength(0);
      expect(bump.calls).toHaveLength(0);
      expect(turn.outcome.tag, JSON.stringify(turn.outcome)).toBe('needs-approval');
      expect(session.status).toBe('paused');
      expect(session.pendingApprovals).toHaveLength(1);
      // Neither another turn nor a resume without a decision gets it run.
      expect(codeOf(await session.executeTurn('await bank.transfer({ amount: 1 })'))).toBe('SESSION_STATE');
      expect(codeOf((await session.resume()) as TurnResult)).toBe('SESSION_STATE');
      expect(transfer.calls).toHaveLength(0);
      expect(bump.calls).toHaveLength(0);
    });
  }

  it('after reject the operation never runs and the guest sees an error, however often it retries', async () => {
    const { session, transfer, bump } = bank();
    const code = `const seen = [];
for (let i = 0; i < 3; i++) {
  try { await bank.transfer({ amount: 7 }); seen.push('sent') } catch (e) { seen.push(e.name + ': ' + e.message) }
}
await count.bump();
return seen;`;
    let turn = await session.executeTurn(code);
    for (let round = 0; round < 3; round++) {
      expect(turn.outcome.tag).toBe('needs-approval');
      const [request] = session.pendingApprovals;
      expect(request.operation).toBe('bank.transfer');
      expect(request.args).toEqual([{ amount: 7 }]);
      session.reject(request.id, `no #${round}`);
      turn = (await session.resume()) as TurnResult;
    }
    expect(transfer.calls).toHaveLength(0);
    expect(turn.outcome.tag).toBe('ok');
    const seen = valueOf(turn) as string[];
    expect(seen).toHaveLength(3);
    for (const [i, s] of seen.entries()) expect(s).toMatch(new RegExp(`rejected: no #${i}$`));
    expect(bump.calls).toHaveLength(1);
    const audited = session.audit.forOperation('bank.transfer');
    expect(audited.every((e) => e.result === undefined && e.error !== undefined)).toBe(true);
  });

  it('a rejected call cannot be approved afterwards, nor approved twice', async () => {
    const { session, transfer } = bank();
    const turn = await session.executeTurn('return await bank.transfer({ amount: 1 })');
    expect(turn.outcome.tag).toBe('needs-approval');
    const [request] = session.pendingApprovals;
    session.reject(request.id);
    expect(() => session.approve(request.id)).toThrow();
    expect(() => session.reject(request.id)).toThrow();
    const resumed = (await session.resume()) as TurnResult;
    expect(codeOf(resumed) ?? resumed.outcome.tag).not.toBe('ok');
    expect(transfer.calls).toHaveLength(0);
  });

  it('approve(id, { value }) answers without running the handler', async () => {
    const { session, transfer } = bank();
    const turn = await session.executeTurn('return await bank.transfer({ amount: 1 })');
    expect(turn.outcome.tag).toBe('needs-approval');
    session.approve(session.pendingApprovals[0].id, { value: { receipt: 'host-made' } });
    const resumed = (await session.resume()) as TurnResult;
    expect(resumed.outcome).toEqual({ tag: 'ok', value: { receipt: 'host-made' } });
    expect(transfer.calls).toHaveLength(0);
  });

  it('approve(id) runs the operation exactly once', async () => {
    const { session, transfer, bump } = bank();
    const turn = await session.executeTurn(
      'await count.bump(); const r = await bank.transfer({ amount: 1 }); await count.bump(); return r',
    );
    expect(turn.outcome.tag).toBe('needs-approval');
    expect(bump.calls).toHaveLength(1);
    session.approve(session.pendingApprovals[0].id);
    const resumed = (await session.resume()) as TurnResult;
    expect(resumed.outcome).toEqual({ tag: 'ok', value: 'sent' });
    expect(transfer.calls).toEqual([[{ amount: 1 }]]);
    expect(bump.calls).toHaveLength(2);
    expect(resumed.turnNumber).toBe(turn.turnNumber);
  });

  it('an approval id cannot be reused for a call in a later turn', async () => {
    const { session, transfer } = bank();
    const first = await session.executeTurn('return await bank.transfer({ amount: 1 })');
    const id = session.pendingApprovals[0].id;
    session.approve(id);
    await session.resume();
    expect(transfer.calls).toHaveLength(1);
    expect(first.outcome.tag).toBe('needs-approval');
    expect(() => session.approve(id)).toThrow();
    for (const code of ['return await bank.transfer({ amount: 1 })', 'return await bank.transfer({ amount: 999 })']) {
      const later = await session.executeTurn(code);
      expect(later.outcome.tag, code).toBe('needs-approval');
      expect(session.pendingApprovals[0].id).not.toBe(id);
      expect(() => session.approve(id)).toThrow();
      expect(transfer.calls).toHaveLength(1);
      session.reject(session.pendingApprovals[0].id);
      await session.resume();
    }
    expect(transfer.calls).toHaveLength(1);
  });

  describe('needsApproval as a function of the arguments', () => {
    const large = (o: { amount: number }) => o.amount > 100;

    it('small amounts run at once, large ones wait', async () => {
      const { session, transfer } = bank(large);
      expect((await session.executeTurn('return await bank.transfer({ amount: 5 })')).outcome).toEqual({
        tag: 'ok',
        value: 'sent',
      });
      const turn = await session.executeTurn('await bank.transfer({ amount: 5000 })');
      expect(turn.outcome.tag).toBe('needs-approval');
      expect(transfer.calls).toEqual([[{ amount: 5 }]]);
    });

    const DISGUISES: Record<string, string> = {
      'a getter that changes': 'let c = 0; await bank.transfer({ get amount() { return c++ ? 1 : 1e6 } })',
      'a getter that grows': 'let c = 0; await bank.transfer({ get amount() { return c++ ? 1e6 : 1 } })',
      toJSON: 'await bank.transfer({ amount: 1, toJSON() { return { amount: 1e6 } } })',
      'toJSON on a nested value':
        'await bank.transfer({ amount: { valueOf() { return 1 }, toJSON() { return 1e6 } } })',
      'a string amount': "await bank.transfer({ amount: '1e6' })",
      'a Proxy':
        "await bank.transfer(new Proxy({}, { get: (t, k) => (k === 'amount' ? 1e6 : undefined), ownKeys: () => ['amount'], getOwnPropertyDescriptor: () => ({ value: 1e6, enumerable: true, configurable: true }) }))",
    };

    for (const [name, code] of Object.entries(DISGUISES)) {
      it(`a large amount never runs unapproved: ${name}`, async () => {
        const { session, transfer } = bank(large);
        await session.executeTurn(code);
        for (const [arg] of transfer.calls as [{ amount: unknown }][]) {
          expect(Number(arg.amount), JSON.stringify(arg)).toBeLessThanOrEqual(100);
        }
      });
    }
  });

  it('an approved call binds the decision to its arguments: a resumed turn that changes them does not run', async () => {
    // The host changes a file between the first run and the resume, so the guest can ask for
    // approval of a small transfer and then make a different one on resume.
    const transfer = counter(() => 'sent');
    const session = new Session({
      workspace: world({ 'flag.txt': 'first' }),
      policy: {},
      budget: { wallMs: 600_000 },
      operations: { 'bank.transfer': { handler: transfer.handler, needsApproval: true } },
    });
    const turn = await session.executeTurn(
      "const resumed = world.read('flag.txt') === 'resumed'; return await bank.transfer({ amount: resumed ? 1e6 : 5 })",
    );
    expect(turn.outcome.tag).toBe('needs-approval');
    const [request] = session.pendingApprovals;
    expect(request.args).toEqual([{ amount: 5 }]);
    session.workspace.writeFile('flag.txt', 'resumed');
    session.approve(request.id);
    await session.resume();
    // Only the approved call may run: { amount: 5 }, or nothing.
    expect(transfer.calls.filter(([a]) => (a as { amount: number }).amount !== 5)).toEqual([]);
  });

  it('an approval of one operation cannot be spent on another at the same point of a resumed turn', async () => {
    const small = counter(() => 'small');
    const wipe = counter(() => 'wiped');
    const session = new Session({
      workspace: world({ 'flag.txt': 'first' }),
      policy: {},
      budget: { wallMs: 600_000 },
      operations: {
        'mail.send': { handler: small.handler, needsApproval: true },
        'files.wipe': { handler: wipe.handler, needsApproval: true },
      },
    });
    const turn = await session.executeTurn(
      "const resumed = world.read('flag.txt') === 'resumed'; return resumed ? await files.wipe('/') : await mail.send('hi')",
    );
    expect(turn.outcome.tag).toBe('needs-approval');
    expect(session.pendingApprovals[0].operation).toBe('mail.send');
    session.workspace.writeFile('flag.txt', 'resumed');
    session.approve(session.pendingApprovals[0].id);
    await session.resume();
    expect(wipe.calls).toHaveLength(0);
  });
});

// ---------------------------------------------------------------------------------------------

describe('a resume never repeats a side effect', () => {
  function ops() {
    const before = counter();
    const after = counter();
    const other = counter();
    const transfer = counter(() => 'sent');
    return {
      before,
      after,
      other,
      transfer,
      operations: {
        'step.before': before.handler,
        'step.after': after.handler,
        'step.other': other.handler,
        'bank.transfer': { handler: transfer.handler, needsApproval: true },
      },
    };
  }

  const CODE = `const a = await step.before('a');
world.write('src/log.txt', 'x'.repeat(10));
const b = await Promise.all([step.before('b'), step.before('c')]);
const t = await bank.transfer({ amount: 1 });
const c = await step.after('d');
return [a, b, t, c];`;

  it('operations before the approval point run exactly once across pause and resume', async () => {
    const o = ops();
    const ws = world();
    const session = new Session({
      workspace: ws,
      policy: {},
      budget: { hostCalls: 100, bytesWritten: 100 },
      operations: o.operations,
    });
    const turn = await session.executeTurn(CODE);
    expect(turn.outcome.tag).toBe('needs-approval');
    expect(o.before.calls).toEqual([['a'], ['b'], ['c']]);
    expect(ws.exists('src/log.txt')).toBe(false);
    const usedAtPause = session.budgetUsed();
    session.approve(session.pendingApprovals[0].id);
    const resumed = (await session.resume()) as TurnResult;
    expect(resumed.outcome).toEqual({ tag: 'ok', value: [1, [2, 3], 'sent', 1] });
    expect(o.before.calls).toHaveLength(3);
    expect(o.transfer.calls).toHaveLength(1);
    expect(o.after.calls).toHaveLength(1);
    expect(ws.readText('src/log.txt')).toBe('x'.repeat(10));
    const used = session.budgetUsed();
    expect(used.bytesWritten).toBe(10);
    // The resume charged only the approved call and the one after it.
    expect(used.hostCalls).toBe(usedAtPause.hostCalls + 2);
    expect(used.turns).toBe(1);
    expect(session.audit.forOperation('step.before').filter((e) => e.result !== undefined)).toHaveLength(3);
  });

  it('and across a snapshot restored with fresh operations', async () => {
    const first = ops();
    const session = new Session({ policy: {}, operations: first.operations });
    const turn = await session.executeTurn(CODE);
    expect(turn.outcome.tag).toBe('needs-approval');
    const bytes = session.snapshot();
    const second = ops();
    const restored = Session.restore(bytes, { operations: second.operations });
    expect(restored.status).toBe('paused');
    restored.approve(restored.pendingApprovals[0].id);
    const resumed = (await restored.resume()) as TurnResult;
    expect(resumed.outcome).toEqual({ tag: 'ok', value: [1, [2, 3], 'sent', 1] });
    expect(first.before.calls).toHaveLength(3);
    expect(second.before.calls).toHaveLength(0);
    expect(first.transfer.calls.length + second.transfer.calls.length).toBe(1);
    expect(second.after.calls).toHaveLength(1);
    expect(restored.workspace.readText('src/log.txt')).toBe('x'.repeat(10));
  });

  it('a resumed turn that calls another operation than before is REPLAY_DIVERGED and runs nothing more', async () => {
    const o = ops();
    const session = new Session({
      workspace: world({ 'flag.txt': 'first' }),
      policy: {},
      budget: { wallMs: 600_000 },
      operations: o.operations,
    });
    const turn = await session.executeTurn(`const resumed = world.read('flag.txt') === 'resumed';
if (resumed) await step.other('x'); else await step.before('x');
await bank.transfer({ amount: 1 });
await step.after('y');`);
    expect(turn.outcome.tag).toBe('needs-approval');
    session.workspace.writeFile('flag.txt', 'resumed');
    session.approve(session.pendingApprovals[0].id);
    const resumed = (await session.resume()) as TurnResult;
    expect(codeOf(resumed)).toBe('REPLAY_DIVERGED');
    expect(o.before.calls).toHaveLength(1);
    expect(o.other.calls).toHaveLength(0);
    expect(o.transfer.calls).toHaveLength(0);
    expect(o.after.calls).toHaveLength(0);
  });

  it('a resumed turn that calls the same operation with other arguments is REPLAY_DIVERGED', async () => {
    const o = ops();
    const session = new Session({
      workspace: world({ 'flag.txt': 'first' }),
      policy: {},
      budget: { wallMs: 600_000 },
      operations: o.operations,
    });
    const turn = await session.executeTurn(`const resumed = world.read('flag.txt') === 'resumed';
await step.before(resumed ? 'changed' : 'x');
await bank.transfer({ amount: 1 });
await step.after('y');`);
    expect(turn.outcome.tag).toBe('needs-approval');
    session.workspace.writeFile('flag.txt', 'resumed');
    session.approve(session.pendingApprovals[0].id);
    const resumed = (await session.resume()) as TurnResult;
    expect(codeOf(resumed)).toBe('REPLAY_DIVERGED');
    expect(o.before.calls).toEqual([['x']]);
    expect(o.transfer.calls).toHaveLength(0);
    expect(o.after.calls).toHaveLength(0);
  });

  it('a resumed turn that skips a recorded operation is REPLAY_DIVERGED', async () => {
    const o = ops();
    const session = new Session({
      workspace: world({ 'flag.txt': 'first' }),
      policy: {},
      budget: { wallMs: 600_000 },
      operations: o.operations,
    });
    await session.executeTurn(`const resumed = world.read('flag.txt') === 'resumed';
if (!resumed) await step.before('x');
await bank.transfer({ amount: 1 });
await step.after('y');`);
    session.workspace.writeFile('flag.txt', 'resumed');
    session.approve(session.pendingApprovals[0].id);
    const resumed = (await session.resume()) as TurnResult;
    expect(codeOf(resumed)).toBe('REPLAY_DIVERGED');
    expect(o.transfer.calls).toHaveLength(0);
    expect(o.after.calls).toHaveLength(0);
  });

  it('a world changed by the host between pause and resume diverges instead of running the other branch', async () => {
    const o = ops();
    const ws = world({ 'src/mode.txt': 'a' });
    const session = new Session({ workspace: ws, policy: {}, operations: o.operations });
    const turn = await session.executeTurn(`const mode = world.read('src/mode.txt');
if (mode === 'a') await step.before(mode); else await step.other(mode);
await bank.transfer({ amount: 1 });
await step.after(mode);`);
    expect(turn.outcome.tag).toBe('needs-approval');
    ws.writeFile('src/mode.txt', 'b');
    session.approve(session.pendingApprovals[0].id);
    const resumed = (await session.resume()) as TurnResult;
    expect(codeOf(resumed)).toBe('REPLAY_DIVERGED');
    expect(o.before.calls).toHaveLength(1);
    expect(o.other.calls).toHaveLength(0);
    expect(o.transfer.calls).toHaveLength(0);
    expect(o.after.calls).toHaveLength(0);
  });

  it('a failure replayed from the journal reaches the guest as it did the first time', async () => {
    // The first run sees the handler's error name; the replay answers 'OperationError', so a
    // guest that branches on e.name takes the other branch on resume and diverges.
    const o = ops();
    const get = counter(() => {
      throw Object.assign(new Error('no such ticket'), { name: 'NotFound' });
    });
    const session = new Session({ policy: {}, operations: { ...o.operations, 'tickets.get': get.handler } });
    const turn = await session.executeTurn(`let name;
try { await tickets.get(1) } catch (e) { name = e.name }
if (name === 'NotFound') await step.before('create'); else await step.other('give up');
await bank.transfer({ amount: 1 });
return name;`);
    expect(turn.outcome.tag).toBe('needs-approval');
    session.approve(session.pendingApprovals[0].id);
    const resumed = (await session.resume()) as TurnResult;
    expect(get.calls).toHaveLength(1);
    expect(o.other.calls).toHaveLength(0);
    expect(resumed.outcome).toEqual({ tag: 'ok', value: 'NotFound' });
    expect(o.transfer.calls).toHaveLength(1);
  });

  it('a rejection replayed from the journal keeps its name (ApprovalRejected)', async () => {
    const o = ops();
    const session = new Session({ policy: {}, operations: o.operations });
    let turn = await session.executeTurn(`const names = [];
for (let i = 0; i < 2; i++) { try { await bank.transfer({ amount: i }) } catch (e) { names.push(e.name) } }
return names;`);
    while (turn.outcome.tag === 'needs-approval') {
      session.reject(session.pendingApprovals[0].id, 'no');
      turn = (await session.resume()) as TurnResult;
    }
    expect(o.transfer.calls).toHaveLength(0);
    expect(turn.outcome).toEqual({ tag: 'ok', value: ['ApprovalRejected', 'ApprovalRejected'] });
  });

  it('world calls of a resumed turn that differ from the first run are still audited and charged', async () => {
    // Fails today: the first N world calls of a re-run count as already audited and charged, whatever they are.
    // The first run reads; the resumed run writes 5000 bytes in the read's place. The write must
    // be audited and charged to bytesWritten (100), or the replay refused: it may not land silently.
    const o = ops();
    const ws = world({ 'src/a.txt': 'a', 'flag.txt': 'first' });
    const session = new Session({
      workspace: ws,
      policy: {},
      budget: { wallMs: 600_000, bytesWritten: 100 },
      operations: o.operations,
    });
    const turn = await session.executeTurn(`const resumed = world.read('flag.txt') === 'resumed';
if (resumed) world.write('src/evil.txt', 'x'.repeat(5000)); else world.read('src/a.txt');
await bank.transfer({ amount: 1 });
return resumed;`);
    expect(turn.outcome.tag).toBe('needs-approval');
    session.workspace.writeFile('flag.txt', 'resumed');
    session.approve(session.pendingApprovals[0].id);
    const resumed = (await session.resume()) as TurnResult;
    const evilAudited = session.audit
      .forOperation('world.write')
      .some((e) => e.args.includes('src/evil.txt') || e.args.includes('evil'));
    expect(resumed.outcome.tag).not.toBe('ok');
    expect(ws.exists('src/evil.txt')).toBe(false);
    expect(session.budgetUsed().bytesWritten <= 100 || evilAudited).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------

describe('a resume never repeats a side effect across processes (SessionManager)', () => {
  /** A paused turn stored in a fresh folder, approved, and the folder to open it from elsewhere. */
  async function approvedInStore() {
    const dir = mkdtempSync(join(tmpdir(), 'qr-session-policy-'));
    const transfer = counter(() => 'sent');
    const slowTransfer = async (...args: never[]) => {
      const out = transfer.handler(...args);
      await new Promise((r) => setTimeout(r, 20));
      return out;
    };
    const operations = { 'bank.transfer': { handler: slowTransfer as OperationHandler, needsApproval: true } };
    const first = new SessionManager({ dir, operations });
    const session = await first.create({ policy: {} });
    // (Today executeTurn through a manager throws after the turn ran; see the test below.)
    await session.executeTurn('return await bank.transfer({ amount: 1 })').catch(() => undefined);
    const [request] = session.pendingApprovals;
    expect(request?.operation).toBe('bank.transfer');
    await first.approve(session.id, request.id);
    return { dir, id: session.id, transfer, operations };
  }

  it('executeTurn on a session opened through a SessionManager returns its result', async () => {
    // Today #finish saves through the store while the turn is still marked busy, and
    // snapshot() throws SESSION_STATE: "snapshot() while a turn is running".
    const dir = mkdtempSync(join(tmpdir(), 'qr-session-policy-'));
    try {
      const manager = new SessionManager({ dir });
      const session = await manager.create({ policy: {} });
      const turn = await session.executeTurn('return 1');
      expect(turn.outcome).toEqual({ tag: 'ok', value: 1 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('two processes resuming the same approved turn at once run the operation once', async () => {
    const { dir, id, transfer, operations } = await approvedInStore();
    try {
      const a = new SessionManager({ dir, operations });
      const b = new SessionManager({ dir, operations });
      await Promise.allSettled([a.resume(id), b.resume(id)]);
      expect(transfer.calls).toHaveLength(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a process resuming after another finished the turn runs nothing', async () => {
    const { dir, id, transfer, operations } = await approvedInStore();
    try {
      const a = new SessionManager({ dir, operations });
      const b = new SessionManager({ dir, operations });
      const stale = await b.get(id);
      expect(stale?.status).toBe('paused');
      await a.resume(id).catch(() => undefined);
      expect(transfer.calls).toHaveLength(1);
      await b.resume(id).catch(() => undefined);
      await stale?.resume().catch(() => undefined);
      expect(transfer.calls).toHaveLength(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// ---------------------------------------------------------------------------------------------

describe('budgets cannot be dodged', () => {
  it('hostCalls exceeded inside try/catch still ends the turn', async () => {
    for (const code of [
      'for (let i = 0; i < 10; i++) { try { await count.bump() } catch {} }',
      "for (let i = 0; i < 10; i++) { try { world.read('src/a.txt') } catch {} }",
      'try { await Promise.all(Array.from({ length: 10 }, () => count.bump())) } catch {}',
      'await Promise.allSettled(Array.from({ length: 10 }, () => count.bump()))',
      "for (let i = 0; i < 10; i++) { try { world.write('src/n' + i, 'x') } catch {} }",
    ]) {
      const bump = counter();
      const ws = world({ 'src/a.txt': 'a' });
      const session = new Session({
        workspace: ws,
        policy: {},
        budget: { hostCalls: 3 },
        operations: { 'count.bump': bump.handler },
      });
      const turn = await session.executeTurn(`${code}\nworld.write('src/late', 'x'); return 'continued'`);
      expect(turn.outcome, code).toMatchObject({
        tag: 'nonconverged',
        reason: 'budget',
        code: 'BUDGET_EXCEEDED',
        budget: 'hostCalls',
      });
      expect(session.status).toBe('budget-exceeded');
      expect(bump.calls.length).toBeLessThanOrEqual(3);
      expect(ws.exists('src/late')).toBe(false);
      expect(paths(ws)).toEqual(['src/a.txt']);
      const next = await session.executeTurn('await count.bump()');
      expect(next.outcome.tag).not.toBe('ok');
      expect(bump.calls.length).toBeLessThanOrEqual(3);
    }
  });

  it('tokens and cost reported by operations end the turn once over, even when caught', async () => {
    for (const [kind, usage] of [
      ['tokens', { tokens: 80 }],
      ['cost', { cost: 0.8 }],
    ] as const) {
      const llm = counter(() => ({ value: 'answer', usage }));
      const bump = counter();
      const ws = world();
      const session = new Session({
        workspace: ws,
        policy: {},
        budget: { [kind]: kind === 'tokens' ? 100 : 1 },
        operations: { 'llm.complete': llm.handler, 'count.bump': bump.handler },
      });
      const turn = await session.executeTurn(`const out = [];
for (let i = 0; i < 5; i++) { try { out.push(await llm.complete('q')) } catch (e) { out.push(e.name) } }
world.write('src/x', 'y'); await count.bump(); return out`);
      expect(turn.outcome, kind).toMatchObject({ tag: 'nonconverged', code: 'BUDGET_EXCEEDED', budget: kind });
      expect(session.status).toBe('budget-exceeded');
      expect(llm.calls).toHaveLength(2);
      expect(bump.calls).toHaveLength(0);
      expect(ws.exists('src/x')).toBe(false);
      expect(session.budgetRemaining(kind)).toBe(0);
    }
  });

  it('bytesWritten cannot be dodged by catching or by writing from a program', async () => {
    for (const code of [
      "try { world.write('src/big', 'x'.repeat(5000)) } catch {} return 'continued'",
      "for (let i = 0; i < 20; i++) { try { world.write('src/f' + i, 'x'.repeat(30)) } catch {} } return 'continued'",
      "try { await world.exec('src/big.mjs') } catch {} return 'continued'",
    ]) {
      const ws = world({
        'src/big.mjs': "import fs from 'fs'; fs.writeFileSync('/src/out.bin', 'x'.repeat(5000));",
      });
      const session = new Session({
        workspace: ws,
        policy: { executionRules: { allowExec: true } },
        budget: { bytesWritten: 100 },
      });
      const turn = await session.executeTurn(code);
      expect(turn.outcome, code).toMatchObject({ tag: 'nonconverged', budget: 'bytesWritten' });
      expect(paths(ws), code).toEqual(['src/big.mjs']);
      expect(session.status).toBe('budget-exceeded');
    }
  });

  it('bytes written as a Uint8Array where allowed land and are charged to bytesWritten', async () => {
    // Today a guest Uint8Array reaches world.write as a plain object and is refused with a
    // TypeError ("data must be a string or a Uint8Array"), so guests cannot write bytes at all.
    const ws = world();
    const session = new Session({ workspace: ws, policy: {}, budget: { bytesWritten: 100 } });
    const small = await session.executeTurn("return world.write('src/b.bin', new Uint8Array([1, 2, 3]))");
    expect(small.outcome).toEqual({ tag: 'ok', value: 3 });
    expect(session.budgetUsed().bytesWritten).toBe(3);
    const big = await session.executeTurn(
      "try { world.write('src/big.bin', new Uint8Array(5000)) } catch {} return 'continued'",
    );
    expect(big.outcome).toMatchObject({ tag: 'nonconverged', budget: 'bytesWritten' });
    expect(ws.exists('src/big.bin')).toBe(false);
  });

  it('llmRules.maxTokensPerCall refuses maxTokens and max_tokens above it', async () => {
    const llm = counter();
    const session = new Session({
      policy: { llmRules: { maxTokensPerCall: 100 } },
      operations: { 'llm.complete': llm.handler },
    });
    for (const code of [
      "await llm.complete('q', { maxTokens: 101 })",
      "await llm.complete('q', { max_tokens: 101 })",
      "await llm.complete({ prompt: 'q', maxTokens: 1e9 })",
      "await llm.complete('q', {}, { max_tokens: 5000 })",
      "try { await llm.complete('q', { maxTokens: 101 }) } catch {} await llm.complete('q', { maxTokens: 102 })",
      "await llm.complete('q', { maxTokens: Infinity })",
      "let c = 0; await llm.complete('q', { get maxTokens() { return c++ ? 1 : 5000 } })",
    ]) {
      const turn = await session.executeTurn(code);
      expect(codeOf(turn), code).toBe('POLICY_VIOLATION');
      expect(turn.outcome).toMatchObject({ rule: 'llmRules.maxTokensPerCall' });
    }
    expect(llm.calls).toHaveLength(0);
    const within = await session.executeTurn("return await llm.complete('q', { maxTokens: 100, max_tokens: 100 })");
    expect(within.outcome).toEqual({ tag: 'ok', value: 1 });
  });

  /** The largest token count any call handed to the handler asked for. */
  function largestAsk(calls: unknown[][]): number {
    let most = 0;
    for (const args of calls) {
      for (const arg of args) {
        if (arg !== null && typeof arg === 'object') {
          const o = arg as { maxTokens?: unknown; max_tokens?: unknown };
          for (const n of [o.maxTokens, o.max_tokens]) if (typeof n === 'number') most = Math.max(most, n);
        }
      }
    }
    return most;
  }

  it('maxTokensPerCall: a small maxTokens does not hide a large max_tokens', async () => {
    // Fails today: the check reads `maxTokens ?? max_tokens`, so a small maxTokens hides max_tokens.
    const llm = counter();
    const session = new Session({
      policy: { llmRules: { maxTokensPerCall: 100 } },
      operations: { 'llm.complete': llm.handler },
    });
    await session.executeTurn("return await llm.complete('q', { maxTokens: 10, max_tokens: 99999 })");
    expect(largestAsk(llm.calls)).toBeLessThanOrEqual(100);
  });

  it('maxTokensPerCall: toJSON cannot show the check one thing and the handler another', async () => {
    // Fails today: the check reads the copied arguments, the handler gets JSON.stringify's text (toJSON runs).
    const llm = counter();
    const session = new Session({
      policy: { llmRules: { maxTokensPerCall: 100 } },
      operations: { 'llm.complete': llm.handler },
    });
    await session.executeTurn(
      "return await llm.complete('q', { maxTokens: 1, toJSON() { return { maxTokens: 99999 } } })",
    );
    expect(largestAsk(llm.calls)).toBeLessThanOrEqual(100);
  });

  it('a host consume() past the budget stops further turns', async () => {
    const bump = counter();
    const session = new Session({ policy: {}, budget: { tokens: 10 }, operations: { 'count.bump': bump.handler } });
    session.consume({ tokens: 11 });
    expect(session.status).toBe('budget-exceeded');
    const turn = await session.executeTurn('await count.bump()');
    expect(turn.outcome.tag).not.toBe('ok');
    expect(bump.calls).toHaveLength(0);
  });

  it('a program run by world.exec does not outlive the turn that the wallMs budget ended', async () => {
    // Today world.exec does not pass the turn's cancellation to ws.exec: the turn returns
    // BUDGET_EXCEEDED on time, but the program keeps a host thread busy until it ends by itself.
    const ws = world({ 'src/spin.mjs': 'const t = Date.now(); while (Date.now() - t < 4000) {}' });
    const session = new Session({
      workspace: ws,
      policy: { executionRules: { allowExec: true } },
      budget: { wallMs: 300 },
    });
    const turn = await session.executeTurn("return await world.exec('src/spin.mjs')");
    expect(turn.outcome).toMatchObject({ tag: 'nonconverged', budget: 'wallMs' });
    await new Promise((r) => setTimeout(r, 200));
    const before = process.cpuUsage();
    await new Promise((r) => setTimeout(r, 1500));
    const used = process.cpuUsage(before);
    expect((used.user + used.system) / 1000).toBeLessThan(600);
  });

  it('wallMs cannot be dodged by catching the timeout', async () => {
    const session = new Session({ policy: {}, budget: { wallMs: 300 } });
    const turn = await session.executeTurn('try { while (true) {} } catch {} for (;;) {}');
    expect(turn.outcome).toMatchObject({ tag: 'nonconverged', code: 'BUDGET_EXCEEDED', budget: 'wallMs' });
    expect(session.status).toBe('budget-exceeded');
  });
});

// ---------------------------------------------------------------------------------------------

describe('env and the session globals hand out only data', () => {
  it('a function put in env does not survive to a later turn', async () => {
    const session = new Session({ policy: {}, env: { keep: 1 } });
    for (const code of [
      'env.f = () => 1',
      'env.f = world.read',
      'env.w = world',
      'env.s = session',
      'env.g = { inner: () => 2 }',
      'env.r = session.allowed',
    ]) {
      await session.executeTurn(code);
      for (const value of Object.values(session.env)) {
        expect(typeof value, code).not.toBe('function');
        expect(JSON.stringify(value), code).not.toBeUndefined();
      }
      const later = await session.executeTurn(
        'return Object.entries(env).filter(([, v]) => typeof v === "function" || (v && typeof v === "object" && Object.values(v).some((x) => typeof x === "function"))).map(([k]) => k)',
      );
      expect(later.outcome, code).toEqual({ tag: 'ok', value: [] });
    }
  });

  it('a turn that puts a function into env fails and leaves env as it was', async () => {
    // Fails today: JSON.stringify drops the function and the turn succeeds (nothing callable survives).
    const session = new Session({ policy: {}, env: { keep: 1 } });
    const turn = await session.executeTurn("env.f = () => 1; env.keep = 2; return 'ok'");
    expect(turn.outcome.tag).toBe('error');
    expect(session.env).toEqual({ keep: 1 });
  });

  it('env that is not plain data fails the turn and leaves env as it was', async () => {
    const session = new Session({ policy: {}, env: { keep: 1 } });
    for (const code of [
      "env.x = { a: 1, toJSON() { return 'smuggled' } }",
      'env.b = 10n',
      "env.s = Symbol('x')",
      "Object.defineProperty(env, 'g', { get() { return 1 }, enumerable: true })",
      'env.__proto__.polluted = 1',
      'Object.setPrototypeOf(env, { polluted: 1 })',
      'const o = {}; o.self = o; env.cycle = o',
    ]) {
      const turn = await session.executeTurn(`env.keep = 2; ${code}; return 'ok'`);
      expect(turn.outcome.tag, code).toBe('error');
      expect(session.env, code).toEqual({ keep: 1 });
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const later = await session.executeTurn('return [({}).polluted === undefined, env.polluted === undefined]');
    expect(later.outcome).toEqual({ tag: 'ok', value: [true, true] });
  });

  it('session.budgetRemaining and session.allowed return plain data', async () => {
    const session = new Session({ policy: {}, budget: { hostCalls: 50, tokens: 10 } });
    const turn = await session.executeTurn(`const all = session.budgetRemaining();
return {
  all,
  proto: Object.getPrototypeOf(all) === Object.prototype,
  one: session.budgetRemaining('hostCalls'),
  allowed: [session.allowed('world.read'), session.allowed('nope.op')],
  types: Object.values(all).map((v) => v === null ? 'null' : typeof v),
};`);
    expect(turn.outcome.tag).toBe('ok');
    const v = valueOf(turn) as { types: string[]; allowed: unknown[]; one: unknown };
    expect(new Set(v.types)).toEqual(new Set(['number', 'null']));
    expect(v.allowed.every((x) => typeof x === 'boolean')).toBe(true);
    expect(typeof v.one).toBe('number');
  });

  const ESCAPES = [
    'world.read.constructor',
    'world.constructor.constructor',
    'world.exec.constructor',
    'env.constructor.constructor',
    'env.constructor',
    'session.constructor.constructor',
    'session.allowed.constructor',
    'session.budgetRemaining.constructor',
    'session.budgetRemaining().constructor.constructor',
    'session.budgetRemaining().__proto__.constructor.constructor',
    'needs.constructor',
    'count.bump.constructor',
    'Object.getPrototypeOf(world.read).constructor',
    'Object.getPrototypeOf(session.allowed).constructor',
    'world.list().constructor.constructor',
    'world.list.call.constructor',
    'count.bump().constructor.constructor',
    '(async () => {}).constructor',
    '(function* () {}).constructor',
    'Reflect.getPrototypeOf(env).constructor.constructor',
    '(() => { try { world.read(null) } catch (e) { return e.constructor.constructor } })()',
  ];

  for (const path of ESCAPES) {
    it(`no host powers through ${path}`, async () => {
      const session = new Session({
        workspace: world({ 'src/a.txt': 'a' }),
        policy: {},
        operations: { 'count.bump': () => 1 },
      });
      const code = `const F = ${path};
const out = [];
for (const body of ['return typeof process', 'return typeof require', 'return globalThis.process && globalThis.process.pid', 'return this']) {
  try { out.push(String(F(body)())) } catch (e) { out.push('refused') }
  try { out.push(String(new F(body)())) } catch (e) { out.push('refused') }
}
return out;`;
      const turn = await session.executeTurn(code);
      expect(JSON.stringify(turn.outcome)).not.toMatch(/"object"|"function"|\[object process\]/);
      // Refused at the first step (an error outcome) or at every call.
      if (turn.outcome.tag === 'ok') {
        for (const got of turn.outcome.value as string[]) expect(got).toMatch(/^(refused|undefined)$/);
      } else expect(turn.outcome.tag).toBe('error');
    });
  }

  it('no host process or require among the globals', async () => {
    const session = new Session({ policy: {}, operations: { 'count.bump': () => 1 } });
    const turn = await session.executeTurn(
      'return [typeof process, typeof require, typeof globalThis.process, typeof module, typeof Buffer, typeof global.process]',
    );
    expect(turn.outcome).toEqual({ tag: 'ok', value: Array(6).fill('undefined') });
  });
});

// ---------------------------------------------------------------------------------------------

describe('the audit log records refusals and cannot be edited unnoticed', () => {
  it('every kind of refused call is audited with its error', async () => {
    const ws = world(BASE_FILES);
    const session = new Session({
      workspace: ws,
      policy: {
        deniedOperations: ['tickets.close'],
        worldRules: { readPatterns: ['src/**'], writePatterns: ['src/**'] },
        llmRules: { maxTokensPerCall: 10 },
        executionRules: { allowExec: false },
      },
      budget: { hostCalls: 20 },
      operations: {
        'tickets.close': () => 'closed',
        'llm.complete': () => 'x',
        'bank.transfer': { handler: () => 'sent', needsApproval: true },
      },
    });
    const cases: [string, string, RegExp][] = [
      ['try { await tickets.close(1) } catch {}', 'tickets.close', /denied/],
      ["try { world.write('etc/x', 'y') } catch {}", 'world.write', /writePatterns/],
      ["try { world.read('secret/key.txt') } catch {}", 'world.read', /readPatterns/],
      ["try { await world.exec('src/a.txt') } catch {}", 'world.exec', /allowExec/],
      ["try { await llm.complete('q', { maxTokens: 11 }) } catch {}", 'llm.complete', /maxTokensPerCall/],
    ];
    for (const [code, operation, error] of cases) {
      const turn = await session.executeTurn(code);
      expect(codeOf(turn), code).toBe('POLICY_VIOLATION');
      const entries = session.audit.forTurn(turn.turnNumber).filter((e) => e.operation === operation);
      expect(entries, code).toHaveLength(1);
      expect(entries[0].error, code).toMatch(error);
      expect(entries[0].result, code).toBeUndefined();
    }
    const paused = await session.executeTurn('await bank.transfer({ amount: 1 })');
    expect(paused.outcome.tag).toBe('needs-approval');
    expect(session.audit.forOperation('bank.transfer')[0].error).toMatch(/approval/);
    session.reject(session.pendingApprovals[0].id, 'nope');
    await session.resume();
    expect(session.audit.forOperation('bank.transfer').at(-1)?.error).toMatch(/rejected.*nope/);
    expect(session.audit.verify()).toEqual({ ok: true, entries: session.audit.entries().length });
    expect(session.audit.forTurn(1)[0].args).not.toContain(SECRET);
  });

  it('a refusal for an exhausted budget is audited too', async () => {
    const session = new Session({ policy: {}, budget: { hostCalls: 1 }, operations: { 'count.bump': () => 1 } });
    await session.executeTurn('await count.bump(1); try { await count.bump(2) } catch {}');
    const entries = session.audit.forOperation('count.bump');
    expect(entries).toHaveLength(2);
    expect(entries[1].error).toMatch(/hostCalls/);
  });

  async function busySession(): Promise<Session> {
    const session = new Session({
      workspace: world({ 'src/a.txt': 'a' }),
      policy: { deniedOperations: ['tickets.close'] },
      operations: { 'count.bump': (n: never) => n, 'tickets.close': () => 'closed' },
    });
    await session.executeTurn("await count.bump(1); world.read('src/a.txt'); await count.bump(2)");
    await session.executeTurn('await tickets.close(7)');
    await session.executeTurn('await count.bump(3)');
    return session;
  }

  it('audit.verify() detects an edited export', async () => {
    const session = await busySession();
    const exported = session.audit.export();
    expect(session.audit.verify(exported)).toMatchObject({ ok: true });
    const lines = exported.split('\n').filter((l) => l !== '');
    expect(lines.length).toBeGreaterThanOrEqual(5);
    const edits: Record<string, string[]> = {
      'one character of args': lines.map((l, i) => (i === 0 ? l.replace('[1]', '[9]') : l)),
      'one character of a result': lines.map((l, i) =>
        i === 1 ? l.replace('"result":"\\"a\\""', '"result":"\\"b\\""') : l,
      ),
      'one character of an error': lines.map((l) => l.replace('denied', 'Denied')),
      'one digit of a timestamp': lines.map((l, i) =>
        i === 2 ? l.replace(/"timestamp":(\d)/, (_m, d) => `"timestamp":${(Number(d) + 1) % 10}`) : l,
      ),
      'the operation name': lines.map((l) => l.replace('"tickets.close"', '"tickets.clos3"')),
      'a deleted line': lines.filter((_l, i) => i !== 1),
      'two lines swapped': [lines[1], lines[0], ...lines.slice(2)],
      'a refusal removed': lines.filter((l) => !l.includes('tickets.close')),
    };
    for (const [name, edited] of Object.entries(edits)) {
      expect(edited.join('\n'), name).not.toBe(lines.join('\n'));
      const verdict = session.audit.verify(`${edited.join('\n')}\n`);
      expect(verdict.ok, name).toBe(false);
    }
  });

  function tampered(bytes: Uint8Array, edit: (ledger: { audit: Record<string, unknown>[] }) => void): Buffer {
    const box = ZipWorkspace.fromZip(bytes);
    try {
      const ledger = JSON.parse(box.readText('ledger.json'));
      edit(ledger);
      box.writeFile('ledger.json', JSON.stringify(ledger));
      return box.toZip({ history: false });
    } finally {
      box.dispose();
    }
  }

  it('Session.restore refuses a snapshot whose audit was tampered with', async () => {
    const session = await busySession();
    const bytes = session.snapshot();
    const restored = Session.restore(bytes, { operations: { 'count.bump': (n: never) => n } });
    expect(restored.audit.entries()).toEqual(session.audit.entries());
    expect(restored.audit.verify()).toMatchObject({ ok: true });
    const edits: Record<string, (l: { audit: Record<string, unknown>[] }) => void> = {
      'one character of args': (l) => {
        l.audit[0].args = String(l.audit[0].args).replace('1', '9');
      },
      'a result': (l) => {
        l.audit[1].result = '"b"';
      },
      'an error hidden': (l) => {
        const refused = l.audit.find((e) => e.operation === 'tickets.close');
        if (refused) {
          delete refused.error;
          refused.result = '"closed"';
        }
      },
      'tokens used': (l) => {
        l.audit[0].tokensUsed = 1;
      },
      'the last entry dropped': (l) => {
        l.audit.pop();
      },
      'a middle entry dropped': (l) => {
        l.audit.splice(1, 1);
      },
      'two entries swapped': (l) => {
        [l.audit[0], l.audit[1]] = [l.audit[1], l.audit[0]];
      },
    };
    for (const [name, edit] of Object.entries(edits)) {
      const forged = tampered(bytes, edit);
      let code: string | undefined;
      try {
        Session.restore(forged);
      } catch (e) {
        code = (e as { code?: string }).code;
      }
      expect(code, name).toBe('AUDIT_TAMPERED');
    }
  });

  it('a restored session keeps its policy: a denied operation stays denied', async () => {
    const session = await busySession();
    const close = counter();
    const restored = Session.restore(session.snapshot(), {
      operations: { 'count.bump': (n: never) => n, 'tickets.close': close.handler },
    });
    for (const code of ['await tickets.close(1)', 'await Reflect.apply(tickets.close, null, [1])']) {
      expect(codeOf(await restored.executeTurn(code)), code).toBe('POLICY_VIOLATION');
    }
    expect(close.calls).toHaveLength(0);
  });
});

describe('signed snapshots (snapshotKey)', () => {
  const KEY = 'a key the store never sees';

  /** Rewrites one part of a snapshot, keeping every other byte. */
  function edited(bytes: Uint8Array, name: string, edit: (text: string) => string): Buffer {
    const box = ZipWorkspace.fromZip(bytes);
    try {
      box.writeFile(name, edit(box.readText(name)));
      return box.toZip({ history: false });
    } finally {
      box.dispose();
    }
  }

  function restoreCode(bytes: Uint8Array, key: string | undefined = KEY): string | undefined {
    try {
      Session.restore(bytes, key === undefined ? {} : { snapshotKey: key });
      return undefined;
    } catch (e) {
      return (e as { code?: string }).code;
    }
  }

  async function pausedTransfer() {
    const pay = counter();
    const session = new Session({
      policy: { deniedOperations: ['files.wipe'] },
      budget: { hostCalls: 5 },
      snapshotKey: KEY,
      operations: { 'bank.transfer': { handler: pay.handler, needsApproval: true }, 'files.wipe': () => 'wiped' },
    });
    const t = await session.executeTurn('return await bank.transfer({ amount: 5 })');
    expect(t.outcome.tag).toBe('needs-approval');
    return { session, pay };
  }

  it('a signed snapshot restores with its key; each edit of session.json, ledger.json or the world is refused', async () => {
    const { session } = await pausedTransfer();
    const bytes = session.snapshot();
    expect(restoreCode(bytes)).toBeUndefined();
    const forgeries: [string, string, (t: string) => string][] = [
      ['an approval granted', 'session.json', (t) => t.replace('"status":"pending"', '"status":"approved"')],
      ['a denied operation allowed', 'session.json', (t) => t.replace('"files.wipe"', '"files.keep"')],
      ['a budget raised', 'session.json', (t) => t.replace('"hostCalls":5', '"hostCalls":500')],
      ['budget use reset', 'ledger.json', (t) => t.replace(/"used":\[[^\]]*\]/, '"used":[0,0,0,0,0,0]')],
      ['the status changed', 'session.json', (t) => t.replace('"status":"paused"', '"status":"active"')],
    ];
    for (const [what, part, edit] of forgeries) {
      const forged = edited(bytes, part, edit);
      expect(forged.equals(Buffer.from(bytes)), what).toBe(false);
      expect(restoreCode(forged), what).toBe('SNAPSHOT_TAMPERED');
    }
    const box = ZipWorkspace.fromZip(bytes);
    const world = ZipWorkspace.fromZip(box.readFile('world.zip'));
    world.writeFile('planted.js', 'evil');
    box.writeFile('world.zip', world.toZip());
    expect(restoreCode(box.toZip({ history: false }))).toBe('SNAPSHOT_TAMPERED');
    box.delete('signature');
    expect(restoreCode(box.toZip({ history: false })), 'signature removed').toBe('SNAPSHOT_TAMPERED');
    expect(restoreCode(bytes, 'another key of 16+ chars')).toBe('SNAPSHOT_TAMPERED');
  });

  it('a manager with a key refuses a stored session another writer changed, and runs nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qr-signed-'));
    try {
      const pay = counter();
      const operations = { 'bank.transfer': { handler: pay.handler, needsApproval: true } };
      const manager = new SessionManager({ dir, operations, snapshotKey: KEY });
      const session = await manager.create({ id: 'signed', policy: {} });
      const t = await session.executeTurn('return await bank.transfer({ amount: 5 })');
      expect(t.outcome.tag).toBe('needs-approval');
      const stored = await manager.store.get('signed');
      if (!stored) throw new Error('not stored');
      const forged = edited(stored.bytes, 'session.json', (x) =>
        x.replace('"status":"pending"', '"status":"approved"'),
      );
      await manager.store.put('signed', forged, { expectedVersion: stored.version });
      const other = new SessionManager({ dir, operations, snapshotKey: KEY });
      await expect(other.get('signed')).rejects.toMatchObject({ code: 'SNAPSHOT_TAMPERED' });
      expect(pay.calls).toHaveLength(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keys shorter than 16 characters are refused', () => {
    expect(() => new Session({ snapshotKey: 'short' })).toThrow(/INVALID_INPUT/);
  });
});
