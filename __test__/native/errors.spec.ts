// Every native export throws through one thrower: an Error of the class the failure calls for,
// with a stable `.code` and the layer's message.
import { describe, expect, it } from 'vitest';
import * as binding from '../../lib/native/load.js';

/** The error `call` throws. */
function thrown(call: () => unknown): Error & { code?: string } {
  try {
    call();
  } catch (e) {
    return e as Error & { code?: string };
  }
  throw new Error('nothing was thrown');
}

describe('native errors carry their code', () => {
  it('engine: configure() refuses an unknown key as a TypeError coded INVALID_INPUT', () => {
    const e = thrown(() => binding.configure({ nope: 1 } as never));
    expect(e).toBeInstanceOf(TypeError);
    expect(e.code).toBe('INVALID_INPUT');
    expect(e.message).toBe("INVALID_INPUT: unknown configure() option 'nope'");
  });

  it('workspace: a missing file is an Error coded NOT_FOUND with the workspace message', () => {
    const e = thrown(() => new binding.ZipWorkspace().readFile('nope.txt'));
    expect(e).toBeInstanceOf(Error);
    expect(e).not.toBeInstanceOf(TypeError);
    expect(e.code).toBe('NOT_FOUND');
    expect(e.message).not.toMatch(/^NOT_FOUND/);
  });

  it('session: an unknown budget kind is a TypeError coded INVALID_INPUT', () => {
    const e = thrown(() => new binding.SessionLedger({}, { nope: 1 }));
    expect(e).toBeInstanceOf(TypeError);
    expect(e.code).toBe('INVALID_INPUT');
    expect(e.message).toBe('INVALID_INPUT: unknown budget kind "nope"');
    const ledger = new binding.SessionLedger({}, {});
    const late = thrown(() => ledger.take('nope' as never, 1));
    expect(late).toBeInstanceOf(TypeError);
    expect(late.code).toBe('INVALID_INPUT');
  });

  it('session: a tampered audit log is an Error coded AUDIT_TAMPERED', () => {
    const ledger = new binding.SessionLedger({}, {});
    ledger.audit({ timestamp: 1, turnNumber: 1, operation: 'op', args: '[]', durationMs: 0 });
    const saved = JSON.parse(ledger.save());
    saved.audit[0].operation = 'other';
    const e = thrown(() => binding.SessionLedger.restore({}, JSON.stringify(saved)));
    expect(e.code).toBe('AUDIT_TAMPERED');
    expect(e.message).toMatch(/^AUDIT_TAMPERED: /);
  });

  it('archives: bytes that are no archive are an Error coded ZIP_INVALID', () => {
    const e = thrown(() => binding.SnapshotReader.open(Buffer.from('not a zip'), 4, 1024));
    expect(e).toBeInstanceOf(Error);
    expect(e.code).toBe('ZIP_INVALID');
    expect(e.message).toMatch(/^not a zip archive: /);
  });
});
