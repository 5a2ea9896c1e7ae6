'use strict';
// The host operations of examples/fleet.js, loaded by every process of the fleet: each worker
// (`quickrealm worker --operations examples/fleet-operations.js`), the host that submits turns
// and the process that approves. Handlers run on whichever worker takes the turn, so what they
// change lives outside the process; a retried call carries the same idempotency key, which a
// real payment provider would use to refuse a second refund.
const { operationContext } = require('..');

const tickets = [
  { id: 'T-101', customer: 'ada', subject: 'charged twice for March', amount: 40 },
  { id: 'T-102', customer: 'ada', subject: 'cannot log in', amount: 0 },
  { id: 'T-103', customer: 'grace', subject: 'refund for a cancelled order', amount: 25 },
];

const operations = {
  'tickets.search': {
    description: 'Open support tickets whose subject or customer contains the text.',
    idempotent: true,
    handler: async (/** @type {string} */ text) =>
      tickets
        .filter((t) => t.subject.includes(text) || t.customer === text)
        .map(({ id, subject }) => ({ id, subject })),
  },
  'payments.refund': {
    description: 'Refunds a ticket; a person approves each refund first.',
    needsApproval: true,
    idempotent: true,
    handler: async (/** @type {{ ticket: string }} */ request) => {
      const ticket = tickets.find((t) => t.id === request?.ticket);
      if (!ticket) throw new Error(`no ticket ${request?.ticket}`);
      const key = operationContext()?.idempotencyKey;
      return { refunded: ticket.amount, ticket: ticket.id, idempotencyKey: key, worker: process.pid };
    },
  },
};

// Every process signs and checks snapshots with the same key (from a secret store in production).
const snapshotKey = process.env.QUICKREALM_SNAPSHOT_KEY ?? 'example-fleet-snapshot-key';

module.exports = { operations, snapshotKey };
