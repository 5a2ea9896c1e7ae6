// A program that `world.exec` runs inside a turn is as reproducible as the turn: it draws its
// randomness from a seed derived from the turn's seed and the call's place in the turn, and reads
// the turn's clock. A paused turn whose program printed random numbers or the time resumes with the
// same output instead of REPLAY_DIVERGED; two programs of one turn still draw different numbers.
import { describe, expect, it } from 'vitest';
import { type OperationHandler, Session, type TurnResult, ZipWorkspace } from '../../lib/index.js';

const OPEN = { worldRules: { readOnly: false } };

const NOISY = `
const bytes = new Uint32Array(2);
crypto.getRandomValues(bytes);
console.log(JSON.stringify({
  random: Math.random(),
  now: Date.now(),
  date: new Date().toISOString(),
  bytes: Array.from(bytes),
  uuid: crypto.randomUUID(),
  perf: performance.now(),
}));
`;

function world(files: Record<string, string>): ZipWorkspace {
  const ws = new ZipWorkspace();
  for (const [p, body] of Object.entries(files)) ws.writeFile(p, body);
  return ws;
}

function counter() {
  const calls: unknown[][] = [];
  const handler = (...args: never[]) => {
    calls.push(args);
    return calls.length;
  };
  return { calls, handler: handler as OperationHandler };
}

function pausedOn(t: TurnResult) {
  if (t.outcome.tag !== 'needs-approval') throw new Error(`expected a pause, got ${JSON.stringify(t.outcome)}`);
  return t.outcome.requests;
}

describe('world.exec uses the turn’s seed and clock', () => {
  it('a program printing Math.random, Date.now, getRandomValues and performance.now resumes with the same output', async () => {
    const deploy = counter();
    const s = new Session({
      workspace: world({ 'noisy.js': NOISY }),
      policy: OPEN,
      operations: { deploy: { handler: deploy.handler, needsApproval: true } },
    });
    const t = await s.executeTurn(`const r = await world.exec('noisy.js');
      await deploy(r.stdout);
      return r.stdout`);
    const [request] = pausedOn(t);
    const printed = request.args[0] as string;
    const first = JSON.parse(printed);
    expect(first.random).toBeGreaterThanOrEqual(0);
    await new Promise((resolve) => setTimeout(resolve, 15));
    s.approve(request.id);
    const done = (await s.resume()) as TurnResult;
    expect(done.outcome).toEqual({ tag: 'ok', value: printed });
    expect(deploy.calls).toEqual([[printed]]);
    // The program's clock is the turn's clock.
    expect(Math.abs(first.now - s.turns[0].startedAt)).toBeLessThan(5000);
    expect(new Date(first.date).getTime()).toBe(first.now);
  });

  it('the output written to the world (not only handed to an operation) replays too', async () => {
    const s = new Session({
      workspace: world({ 'noisy.js': NOISY }),
      policy: OPEN,
      operations: { publish: { handler: counter().handler, needsApproval: true } },
    });
    const t = await s.executeTurn(`const r = await world.exec('noisy.js');
      world.write('out/run.json', r.stdout);
      await publish('out/run.json');
      return world.read('out/run.json')`);
    const [request] = pausedOn(t);
    s.approve(request.id);
    const done = (await s.resume()) as TurnResult;
    expect(done.outcome.tag).toBe('ok');
    expect(s.workspace.readText('out/run.json')).toBe((done.outcome as { value: string }).value);
  });

  it('a turn restored in another process from its snapshot resumes with the same output', async () => {
    const deploy = counter();
    const operations = { deploy: { handler: deploy.handler, needsApproval: true } };
    const s = new Session({ workspace: world({ 'noisy.js': NOISY }), policy: OPEN, operations });
    const [request] = pausedOn(
      await s.executeTurn("const r = await world.exec('noisy.js'); await deploy(r.stdout); return r.stdout"),
    );
    const restored = Session.restore(s.snapshot(), { operations });
    restored.approve(request.id);
    const done = (await restored.resume()) as TurnResult;
    expect(done.outcome).toEqual({ tag: 'ok', value: request.args[0] });
  });

  it('two programs in one turn draw different numbers; both replay', async () => {
    const deploy = counter();
    const s = new Session({
      workspace: world({ 'noisy.js': NOISY }),
      policy: OPEN,
      operations: { deploy: { handler: deploy.handler, needsApproval: true } },
    });
    const t = await s.executeTurn(`const a = await world.exec('noisy.js');
      const b = await world.exec('noisy.js');
      await deploy([a.stdout, b.stdout]);
      return [a.stdout, b.stdout]`);
    const [request] = pausedOn(t);
    const [a, b] = (request.args[0] as string[]).map((x) => JSON.parse(x));
    expect(a.random).not.toBe(b.random);
    expect(a.bytes).not.toEqual(b.bytes);
    expect(a.uuid).not.toBe(b.uuid);
    s.approve(request.id);
    const done = (await s.resume()) as TurnResult;
    expect(done.outcome).toEqual({ tag: 'ok', value: request.args[0] });
  });

  it('programs with timers and an approval in between replay; the next turn draws other numbers', async () => {
    const deploy = counter();
    const s = new Session({
      workspace: world({
        'noisy.js': NOISY,
        'timer.mjs':
          'const t0 = Date.now(); await new Promise((r) => setTimeout(r, 250)); console.log(Date.now() - t0, Math.random());',
      }),
      policy: OPEN,
      operations: { deploy: { handler: deploy.handler, needsApproval: true }, note: counter().handler },
    });
    const t = await s.executeTurn(`const a = await world.exec('timer.mjs');
      await note(a.stdout);
      await deploy(a.stdout);
      const b = await world.exec('noisy.js');
      await note(b.stdout);
      return [a.stdout, b.stdout]`);
    const [request] = pausedOn(t);
    expect(String(request.args[0])).toMatch(/^250 0\.\d+\n?$/);
    s.approve(request.id);
    const done = (await s.resume()) as TurnResult;
    expect(done.outcome.tag).toBe('ok');
    const [timer] = (done.outcome as { value: string[] }).value;
    expect(timer).toBe(request.args[0]);
    const next = await s.executeTurn("return (await world.exec('noisy.js')).stdout");
    const later = await s.executeTurn("return (await world.exec('noisy.js')).stdout");
    expect(JSON.parse((next.outcome as { value: string }).value).random).not.toBe(
      JSON.parse((later.outcome as { value: string }).value).random,
    );
  });
});
