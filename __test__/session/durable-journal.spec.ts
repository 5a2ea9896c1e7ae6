// A turn's journal kept outside the process (DESIGN §8): written as each operation starts and
// completes; a turn re-run after its host died answers completed operations from it, reports
// the operation that was running as OperationInterrupted unless it is idempotent (then it runs
// again with the same idempotencyKey); a journal that cannot be written stops the turn and
// keeps nothing. Also the operation context, tenant and metadata.

import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { type OperationContext, operationContext, Session } from '../../lib/index.js';

const require = createRequire(__filename);
const { attachJournal } = require('../../lib/session/store-hooks.js') as {
  attachJournal(session: Session, journal: unknown): void;
};

interface Row {
  turnNumber: number;
  seq: number;
  operation: string;
  args: string;
  state: 'started' | 'done';
  idempotencyKey?: string;
  value?: string;
  error?: string;
}

/** A durable journal in memory, as a database would keep it. */
function memoryJournal(rows: Row[] = [], clocks = new Map<number, number>()) {
  return {
    rows,
    clocks,
    async begin({ turnNumber, now }: { turnNumber: number; now: number }) {
      if (!clocks.has(turnNumber)) clocks.set(turnNumber, now);
      const mine = rows.filter((r) => r.turnNumber === turnNumber).sort((a, b) => a.seq - b.seq);
      const entries = [];
      for (const r of mine) {
        if (r.state !== 'done' || r.seq !== entries.length) break;
        entries.push({ operation: r.operation, args: r.args, value: r.value, error: r.error });
      }
      return {
        now: clocks.get(turnNumber) as number,
        entries,
        interrupted: mine.filter((r) => r.state === 'started').map((r) => r.seq),
      };
    },
    async started(call: Omit<Row, 'state'>) {
      rows.push({ ...call, state: 'started' });
    },
    async completed(call: Omit<Row, 'state'>) {
      const row = rows.find((r) => r.turnNumber === call.turnNumber && r.seq === call.seq);
      if (row) Object.assign(row, call, { state: 'done' });
      else rows.push({ ...call, state: 'done' });
    },
  };
}

const OPEN = { worldRules: { readOnly: false } };

const CODE = `
  const receipt = await pay(40);
  let shipped;
  try { shipped = await ship(receipt); } catch (e) { shipped = e.name; }
  return { receipt, shipped, at: Date.now() };
`;

function shop(calls: { op: string; context: OperationContext | undefined; self: unknown }[], idempotentShip = false) {
  return {
    pay: function (this: unknown, amount: number) {
      calls.push({ op: 'pay', context: operationContext(), self: this });
      return `paid ${amount}`;
    },
    ship: {
      idempotent: idempotentShip,
      handler: async function (this: unknown, receipt: string) {
        await new Promise((r) => setTimeout(r, 1));
        calls.push({ op: 'ship', context: operationContext(), self: this });
        return `shipped after ${receipt}`;
      },
    },
  };
}

describe('durable turn journal', () => {
  it('records each operation as started, then done, before the guest sees its answer', async () => {
    const calls: { op: string; context: OperationContext | undefined; self: unknown }[] = [];
    const session = new Session({ id: 'shop-1', policy: OPEN, operations: shop(calls) });
    const journal = memoryJournal();
    attachJournal(session, journal);
    const turn = await session.executeTurn(CODE);
    expect(turn.outcome).toMatchObject({ tag: 'ok', value: { receipt: 'paid 40', shipped: 'shipped after paid 40' } });
    expect(journal.rows.map((r) => [r.seq, r.operation, r.state, r.idempotencyKey])).toEqual([
      [0, 'pay', 'done', 'shop-1:1:0'],
      [1, 'ship', 'done', 'shop-1:1:1'],
    ]);
    expect(JSON.parse(journal.rows[0].value as string)).toMatchObject({ value: 'paid 40' });
    // The context: the handler's `this`, and operationContext() across its awaits.
    expect(calls.map((c) => c.context?.idempotencyKey)).toEqual(['shop-1:1:0', 'shop-1:1:1']);
    expect(calls[1].self).toBe(calls[1].context);
    expect(calls[1].context).toMatchObject({
      sessionId: 'shop-1',
      turnNumber: 1,
      operation: 'ship',
      seq: 1,
      rerun: false,
    });
    expect(Object.isFrozen(calls[0].context)).toBe(true);
    expect(operationContext()).toBeUndefined();
  });

  /** The state a worker that died inside `ship` leaves: the session as before the turn, and the journal. */
  async function crashedInsideShip() {
    const before = new Session({ id: 'shop-2', policy: OPEN, operations: shop([]) }).snapshot();
    const journal = memoryJournal(
      [
        {
          turnNumber: 1,
          seq: 0,
          operation: 'pay',
          args: '[40]',
          state: 'done',
          value: '{"value":"paid 40 (first run)","usage":{}}',
        },
        { turnNumber: 1, seq: 1, operation: 'ship', args: '["paid 40 (first run)"]', state: 'started' },
      ],
      new Map([[1, Date.UTC(2026, 0, 2)]]),
    );
    return { before, journal };
  }

  it('a re-run answers completed operations from the journal and reports the interrupted one', async () => {
    const { before, journal } = await crashedInsideShip();
    const calls: { op: string; context: OperationContext | undefined; self: unknown }[] = [];
    const session = Session.restore(before, { operations: shop(calls) });
    attachJournal(session, journal);
    const turn = await session.executeTurn(CODE);
    expect(turn.outcome).toMatchObject({
      tag: 'ok',
      value: { receipt: 'paid 40 (first run)', shipped: 'OperationInterrupted', at: Date.UTC(2026, 0, 2) },
    });
    // Neither ran again: pay answered from the journal, ship may have taken effect.
    expect(calls).toEqual([]);
    const ship = journal.rows.find((r) => r.seq === 1);
    expect(ship?.state).toBe('done');
    expect(JSON.parse(ship?.error as string)).toMatchObject({ name: 'OperationInterrupted' });
    expect(session.audit.forOperation('ship')[0].error).toMatch(/OperationInterrupted|not run again/);
    expect(session.turnNumber).toBe(1);
  });

  it('an idempotent operation runs again with the same idempotencyKey', async () => {
    const { before, journal } = await crashedInsideShip();
    const calls: { op: string; context: OperationContext | undefined; self: unknown }[] = [];
    const session = Session.restore(before, { operations: shop(calls, true) });
    attachJournal(session, journal);
    const turn = await session.executeTurn(CODE);
    expect(turn.outcome).toMatchObject({
      tag: 'ok',
      value: { receipt: 'paid 40 (first run)', shipped: 'shipped after paid 40 (first run)' },
    });
    expect(calls.map((c) => [c.op, c.context?.idempotencyKey, c.context?.rerun])).toEqual([
      ['ship', 'shop-2:1:1', true],
    ]);
  });

  it('a re-run that calls something else than the journal stops as diverged and runs nothing', async () => {
    const { before, journal } = await crashedInsideShip();
    const calls: { op: string; context: OperationContext | undefined; self: unknown }[] = [];
    const session = Session.restore(before, { operations: shop(calls) });
    attachJournal(session, journal);
    const turn = await session.executeTurn('return await ship("other")');
    expect(turn.outcome).toMatchObject({ tag: 'error', code: 'REPLAY_DIVERGED' });
    expect(calls).toEqual([]);
  });

  it('a journal that cannot be written stops the turn, keeps nothing and throws UNAVAILABLE', async () => {
    const calls: { op: string; context: OperationContext | undefined; self: unknown }[] = [];
    const session = new Session({ id: 'shop-3', policy: OPEN, operations: shop(calls) });
    const journal = memoryJournal();
    journal.completed = async () => {
      throw new Error('connection terminated');
    };
    attachJournal(session, journal);
    await expect(session.executeTurn(`env.x = 1; ${CODE}`)).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringMatching(/connection terminated/),
    });
    // pay ran (its start was recorded); the guest never saw its answer and ship never started.
    expect(calls.map((c) => c.op)).toEqual(['pay']);
    expect(journal.rows.map((r) => [r.operation, r.state])).toEqual([['pay', 'started']]);
    expect(session.env).toEqual({});

    const failing = new Session({ policy: OPEN, operations: shop([]) });
    attachJournal(failing, {
      ...memoryJournal(),
      begin: async () => {
        throw new Error('no route to host');
      },
    });
    await expect(failing.executeTurn('return 1')).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(failing.turnNumber).toBe(0);
  });
});

describe('tenant and metadata', () => {
  it('are kept through snapshots', () => {
    const session = new Session({ tenant: 'acme', metadata: { plan: 'pro', seats: 3, trial: false } });
    expect(session.tenant).toBe('acme');
    const back = Session.restore(session.snapshot());
    expect(back.tenant).toBe('acme');
    expect(back.metadata).toEqual({ plan: 'pro', seats: 3, trial: false });
    expect(new Session().tenant).toBeNull();
  });

  it('refuses what cannot be filed', () => {
    for (const options of [
      { tenant: '' },
      { tenant: 'a b' },
      { tenant: 'x'.repeat(129) },
      { metadata: { nested: { a: 1 } } },
      { metadata: [1] },
      { metadata: { n: Number.NaN } },
      { metadata: { big: 'x'.repeat(5000) } },
    ]) {
      expect(() => new Session(options as never), JSON.stringify(options).slice(0, 40)).toThrow(
        expect.objectContaining({ code: 'INVALID_INPUT' }),
      );
    }
  });
});
