'use strict';
// Operations of bench/fleet.mjs, loaded by its worker processes (`quickrealm worker --operations`)
// and by the host. `bench.hang` blocks its first run until the worker is killed, so the re-run on
// another worker measures failover; it is idempotent, so the re-run runs it again and returns.
const { operationContext } = require('../..');

const operations = {
  'bench.op': { idempotent: true, handler: async () => 1 },
  'bench.hang': {
    idempotent: true,
    handler: async () => {
      if (!operationContext()?.rerun) await new Promise((resolve) => setTimeout(resolve, 600_000));
      return 1;
    },
  },
  'bench.approve': { needsApproval: true, handler: async () => 1 },
};

const snapshotKey = 'bench-fleet-snapshot-key';

module.exports = { operations, snapshotKey };
