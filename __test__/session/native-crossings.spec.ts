// What a session turn costs at the native boundary: every call from JavaScript into the binding
// is counted with the bytes it moves (see __test__/helpers/native-calls.ts). The gate lives in
// Rust (one crossing before and one after each call), the turn's copies are made and compared
// natively, and a snapshot moves the world across once.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { beforeAll, describe, expect, it } from 'vitest';
import { countNativeCalls, type NativeCallCounts } from '../helpers/native-calls.js';

const counter = countNativeCalls();
const require = createRequire(__filename);
type Lib = typeof import('../../lib/index.js');
let lib: Lib;

beforeAll(() => {
  // After the counter: the library keeps the binding's functions it finds at load.
  lib = require('../../lib/index.js') as Lib;
});

async function measure(body: () => unknown | Promise<unknown>): Promise<NativeCallCounts> {
  counter.reset();
  await body();
  // Promise results are counted when they settle.
  await new Promise((resolve) => setImmediate(resolve));
  return counter.counts();
}

function report(what: string, c: NativeCallCounts) {
  console.log(`${what}: ${c.calls} calls, ${c.bytesIn} bytes in, ${c.bytesOut} bytes out`, JSON.stringify(c.byName));
}

const OPEN = { worldRules: { readOnly: false } };

describe('native crossings of a session turn', () => {
  it('an empty turn makes at most 10 native calls', async () => {
    const session = new lib.Session({ policy: OPEN });
    await session.executeTurn('return 0');
    const c = await measure(async () => {
      const turn = await session.executeTurn('return 1');
      expect(turn.outcome).toEqual({ tag: 'ok', value: 1 });
    });
    report('empty turn', c);
    expect(c.calls).toBeLessThanOrEqual(10);
  });

  it('a turn with a world read, a world write and an operation', async () => {
    const ws = new lib.ZipWorkspace();
    ws.writeFile('a.txt', 'hello');
    const session = new lib.Session({
      workspace: ws,
      policy: OPEN,
      operations: { 'tickets.search': (q: string) => [{ id: 1, q }] },
    });
    await session.executeTurn('return 0');
    const c = await measure(async () => {
      const turn = await session.executeTurn(
        "const t = world.read('a.txt'); world.write('b.txt', t + '!'); const r = await tickets.search('x'); return r[0].id",
      );
      expect(turn.outcome).toEqual({ tag: 'ok', value: 1 });
    });
    report('read/write/operation turn', c);
    expect(session.workspace.readText('b.txt')).toBe('hello!');
    // The world calls pass the gate on the guest's thread (no crossing at all); the operation,
    // which is host code, crosses once before (admit) and once after (settle).
    expect(c.byName['SessionLedger#admit']).toBe(1);
    expect(c.byName['SessionLedger#settle']).toBe(1);
    expect(c.byName['ZipWorkspace#readText']).toBeUndefined();
    expect(c.byName['ZipWorkspace#writeFile']).toBeUndefined();
    expect(c.calls).toBeLessThanOrEqual(17);
  });

  it('a turn writing 1 MiB moves at most 64 KiB across napi', async () => {
    const session = new lib.Session({ policy: OPEN });
    await session.executeTurn('return 0');
    const c = await measure(async () => {
      const turn = await session.executeTurn("world.write('big.txt', 'x'.repeat(1 << 20)); return 1");
      expect(turn.outcome).toEqual({ tag: 'ok', value: 1 });
    });
    report('1 MiB write turn', c);
    expect(session.workspace.stat('big.txt').size).toBe(1 << 20);
    // `world.write` is native (the bytes go from the guest into the working copy without
    // leaving Rust) and change detection is native: the bytes cross neither way.
    expect(c.bytesIn + c.bytesOut).toBeLessThanOrEqual(64 * 1024);
  });

  it('world.fingerprint hashes where the files are: no file crosses', async () => {
    const ws = new lib.ZipWorkspace();
    const big = 'y'.repeat(1 << 20);
    ws.writeFile('big.txt', big);
    const session = new lib.Session({ workspace: ws });
    const c = await measure(async () => {
      const turn = await session.executeTurn('return world.fingerprint()');
      const expected = createHash('sha256').update('big.txt\0').update(big).update('\0').digest('hex');
      expect(turn.outcome).toEqual({ tag: 'ok', value: expected });
    });
    report('fingerprint turn', c);
    expect(c.bytesIn + c.bytesOut).toBeLessThanOrEqual(64 * 1024);
  });

  it('snapshot() moves the world across once, and restore likewise', async () => {
    const ws = new lib.ZipWorkspace();
    // Incompressible-looking text, about 2.3 MB.
    let seed = 7;
    for (let f = 0; f < 23; f++) {
      let text = '';
      for (let i = 0; i < 100_000 / 8; i++) {
        seed = (seed * 1103515245 + 12345) >>> 0;
        text += seed.toString(16).padStart(8, '0');
      }
      ws.writeFile(`data/f${f}.txt`, text);
    }
    const session = new lib.Session({ workspace: ws, policy: OPEN });
    await session.executeTurn("world.write('x.txt', 'x'); return 1");
    let bytes: Buffer = Buffer.alloc(0);
    const out = await measure(() => {
      bytes = session.snapshot();
    });
    report(`snapshot (${bytes.length} bytes)`, out);
    expect(bytes.length).toBeGreaterThan(2_300_000);
    expect(out.bytesOut).toBeLessThanOrEqual(1.2 * bytes.length);
    expect(out.bytesIn).toBeLessThanOrEqual(0.2 * bytes.length);
    let restored: InstanceType<Lib['Session']> | undefined;
    const back = await measure(() => {
      restored = lib.Session.restore(bytes);
    });
    report('restore', back);
    expect(restored?.workspace.readText('data/f3.txt')).toBe(ws.readText('data/f3.txt'));
    expect(back.bytesIn).toBeLessThanOrEqual(1.2 * bytes.length);
    expect(back.bytesOut).toBeLessThanOrEqual(0.2 * bytes.length);
  });
});
