'use strict';
// `quickrealm worker --db <url> --operations <module> [--concurrency N] [--schema S] [--queue Q]`:
// a fleet worker process. The module exports the operations (as `operations`, or as its default
// export), and may export `snapshotKey` and `fleet` (more Fleet options). The tables are
// migrated on start; SIGTERM or SIGINT drains the running turns, then the process exits.

const { ErrorCode } = require('../errors.js');
const { EXIT_FAILED, EXIT_INVALID, fail } = require('./io.js');
const { loadOperationsModule } = require('./operations-module.js');

/** @param {unknown} e */
const messageOf = (e) => (e instanceof Error ? e.message : String(e));

/**
 * @param {{ db?: string, operations?: string, concurrency?: string, schema?: string, queue?: string }} options
 */
async function commandWorker(options) {
  if (!options.db) return fail(ErrorCode.InvalidInput, 'quickrealm worker needs --db <postgres url>', EXIT_INVALID);
  if (!options.operations)
    return fail(ErrorCode.InvalidInput, 'quickrealm worker needs --operations <module>', EXIT_INVALID);
  const concurrency = options.concurrency === undefined ? 1 : Number(options.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1)
    return fail(ErrorCode.InvalidInput, '--concurrency must be a whole number ≥ 1', EXIT_INVALID);
  let module;
  let operations;
  try {
    ({ module, operations } = await loadOperationsModule(options.operations));
  } catch (e) {
    return fail(ErrorCode.InvalidInput, messageOf(e), EXIT_INVALID);
  }
  const { PostgresStore, Fleet } = require('../fleet/index.js');
  let store;
  let fleet;
  try {
    store = new PostgresStore({ connectionString: options.db }, { schema: options.schema });
    await store.migrate();
    fleet = new Fleet({
      ...module.fleet,
      store,
      operations,
      snapshotKey: module.snapshotKey,
      queue: options.queue ?? module.fleet?.queue,
    });
    const worker = await fleet.work({ concurrency });
    process.stderr.write(
      `${JSON.stringify({ worker: 'started', pid: process.pid, queue: fleet.queue, concurrency })}\n`,
    );
    await new Promise((resolve) => {
      process.once('SIGTERM', resolve);
      process.once('SIGINT', resolve);
    });
    await worker.stop();
  } catch (e) {
    const code = /** @type {{ code?: string }} */ (e)?.code;
    fail(
      code && /^[A-Z_]+$/.test(code) ? code : ErrorCode.Internal,
      messageOf(e),
      code === ErrorCode.InvalidInput ? EXIT_INVALID : EXIT_FAILED,
    );
  } finally {
    await fleet?.stop().catch(() => {});
    await store?.close().catch(() => {});
  }
}

module.exports = { commandWorker };
