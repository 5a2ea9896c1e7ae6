'use strict';
// What a turn's guest sees from the host: `world.exec` and one function per host operation
// (dotted names as nested objects). Every call passes the session's gate (native `admit` before,
// `settle` after), where the policy is checked, the budget charged, the call audited and
// journalled.

const { createHash } = require('node:crypto');
const binding = require('../native/load.js');

/**
 * @param {string} path
 */
function text(path) {
  if (typeof path !== 'string') throw new TypeError('the path must be a string');
  return path;
}

/**
 * The seed of the `index`th program a turn runs: derived from the turn's seed and the call's
 * place in the turn, so a re-run draws the same numbers and two programs of one turn do not.
 * @param {number} turnSeed
 * @param {number} index
 */
function execSeed(turnSeed, index) {
  const digest = createHash('sha256').update(`quickrealm-exec-seed\0${turnSeed}\0${index}`).digest();
  // 48 bits: a safe integer, as `deterministic.seed` requires.
  return digest.readUIntBE(0, 6);
}

/**
 * The host half of a turn's `world`: `exec`, which orchestrates a program run here. Every other
 * `world` method is native (src/session/world.rs), installed in the turn's realm with this
 * `exec`, and passes the same gate on the guest's thread. Answers are the same when a paused
 * turn is re-run: program runs report no timings and run deterministically on the turn's clock
 * with a seed of their own derived from the turn's.
 * @param {import('./turn.js').Gate} gate
 * @param {() => import('../index.js').ZipWorkspace} work
 * @param {{ now: number, seed: number }} turn the turn's time and its seed
 */
function worldFor(gate, work, turn) {
  let programs = 0;
  return {
    /** @param {string} entry @param {{ argv?: string[], env?: Record<string, string> }} [options] (the result less its timings and history id) */
    exec: (entry, options) =>
      gate.world('world.exec', [entry, options], async () => {
        const before = work().fork();
        const { argv, env } = options ?? {};
        // Counted when the gate lets the call run, in call order: the same on a re-run.
        const seed = execSeed(turn.seed, programs++);
        const result = await work().exec(text(entry), {
          argv,
          env,
          limits: gate.execLimits(),
          signal: gate.turnEnd.signal,
          deterministic: { seed, now: turn.now },
        });
        // The budget counts what the program left in the working copy, summed natively.
        const written = binding.bytesWrittenSince(/** @type {any} */ (work()), /** @type {any} */ (before));
        // The ws.exec result, less the history entry id: that entry is in the turn's working
        // copy, not in the world.
        const { historyId: _inWorkingCopy, stats: _timings, ...rest } = result;
        return { value: { ...rest, error: result.error ?? null }, bytesWritten: written };
      }),
  };
}

/**
 * The operations as nested objects: `{ 'llm.complete': f }` → `{ llm: { complete } }`.
 * @param {Map<string, unknown>} operations
 * @param {(name: string) => (...args: unknown[]) => unknown} wrap
 */
function operationGlobals(operations, wrap) {
  /** @type {Record<string, any>} */
  const root = {};
  for (const name of operations.keys()) {
    const parts = name.split('.');
    let node = root;
    for (const part of parts.slice(0, -1)) {
      node[part] ??= {};
      node = node[part];
    }
    node[/** @type {string} */ (parts.at(-1))] = wrap(name);
  }
  return root;
}

module.exports = { worldFor, operationGlobals };
