// The binding side of a turn's native `world`: it is made from the turn's ledger and working
// copies, and a stop the gate met out of JavaScript's sight comes back when the turn ends.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { ZipWorkspace } from '../../lib/index.js';

const require = createRequire(__filename);
const binding = require('../../lib/native/load.js');

describe('native world binding', () => {
  it('a gate stop comes back with the end of the turn', () => {
    const ledger = new binding.SessionLedger({ allowedOperations: ['world.read'] }, {});
    ledger.startTurn(1, 10);
    const admitted = ledger.admit({ kind: 'world', operation: 'world.write', args: '["a","b"]', bytes: 1 });
    expect(admitted.kind).toBe('stop');
    const end = ledger.endTurn(0, false);
    expect(end.stop).toMatchObject({ kind: 'policy', code: 'POLICY_VIOLATION', rule: 'allowedOperations' });
    // A turn that nothing stopped ends without one.
    ledger.startTurn(2, 10);
    expect(ledger.endTurn(0, false).stop).toBeUndefined();
  });

  it('a turn world is made over the working copies and halts', () => {
    const ledger = new binding.SessionLedger({}, {});
    ledger.startTurn(1, 10);
    const base = new ZipWorkspace();
    base.writeFile('a.txt', 'a');
    const copies = binding.turnCopies(base, ['**'], ['**'], false);
    const world = binding.turnWorld(ledger, copies.work, copies.origin, 1_700_000_000_000);
    expect(world).toBeInstanceOf(binding.NativeWorld);
    world.halt();
    expect(() => binding.turnWorld(ledger, 'not a workspace', copies.origin, 0)).toThrow();
  });

  it('resetTo itself keeps the ledger as it was', () => {
    const ledger = new binding.SessionLedger({}, { hostCalls: 5 });
    ledger.take('hostCalls', 2);
    ledger.resetTo(ledger);
    expect(ledger.remainingAll().hostCalls).toBe(3);
  });
});
