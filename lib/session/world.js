'use strict';
// What a turn's guest sees: `world` (the workspace, through the turn's working copy), one
// function per host operation (dotted names as nested objects), `needs`, `session` and `env`.
// Every call goes through `gate.call`, the one place where the policy is checked, the budget
// charged, the call audited and (for host operations) journalled.

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
 * The `world` object of a turn over its working copy `work`. Answers are the same when a
 * paused turn is re-run: a file the turn changed reports the turn's fixed time as its `mtime`,
 * program runs report no timings, and programs run deterministically on the turn's clock with
 * a seed of their own derived from the turn's.
 * @param {import('./turn.js').Gate} gate
 * @param {() => import('../index.js').ZipWorkspace} work
 * @param {{ origin: import('../index.js').ZipWorkspace, now: number, seed: number }} turn the world as the
 *   turn found it, its time and its seed
 */
function worldFor(gate, work, turn) {
  let programs = 0;
  return {
    /** @param {string} path @param {{ encoding?: null | 'utf8' }} [options] */
    read: (path, options) =>
      gate.world('world.read', [path, options], () => {
        if (options && options.encoding === null) return new Uint8Array(work().readFile(text(path)));
        return work().readText(text(path));
      }),
    /** @param {string} path @param {string | Uint8Array} data */
    write: (path, data) => {
      const bytes = typeof data === 'string' ? Buffer.byteLength(data) : data instanceof Uint8Array ? data.length : 0;
      return gate.world(
        'world.write',
        [path, data],
        () => {
          if (typeof data !== 'string' && !(data instanceof Uint8Array)) {
            throw new TypeError('world.write(path, data): data must be a string or a Uint8Array');
          }
          work().writeFile(text(path), data);
          return bytes;
        },
        bytes,
      );
    },
    /** @param {string} [glob] */
    list: (glob) => gate.world('world.list', [glob ?? '**/*'], () => work().glob(glob ?? '**/*')),
    /** @param {string} query @param {object} [options] */
    search: (query, options) =>
      gate.world('world.search', [query, options], () => work().search(query, options ?? null)),
    /** @param {string} path */
    stat: (path) =>
      gate.world('world.stat', [path], () => {
        const s = work().stat(text(path));
        let before;
        try {
          before = turn.origin.stat(s.path);
        } catch {
          before = null;
        }
        const mtime = before && before.mtime === s.mtime ? s.mtime : turn.now;
        return { size: s.size, kind: s.kind, mtime };
      }),
    /** @param {string} path @param {{ recursive?: boolean }} [options] */
    delete: (path, options) =>
      gate.world('world.delete', [path, options], () => {
        work().delete(text(path), options ?? null);
        return true;
      }),
    /** @param {string} path */
    mkdir: (path) =>
      gate.world('world.mkdir', [path], () => {
        work().mkdir(text(path), { recursive: true });
        return true;
      }),
    /** @param {string} [glob] */
    fingerprint: (glob) =>
      gate.world('world.fingerprint', [glob ?? '**/*'], () => {
        // A pattern that is not a string is refused as `list` refuses it.
        if (glob !== undefined && typeof glob !== 'string') return work().glob(glob);
        // Hashed natively: no file crosses into JavaScript.
        return binding.fingerprint(/** @type {any} */ (work()), glob ?? '**/*');
      }),
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
        // Counted where the bytes are when the result says; otherwise summed over the changes.
        const written =
          /** @type {{ bytesWritten?: number }} */ (result).bytesWritten ??
          binding.bytesWrittenSince(/** @type {any} */ (work()), /** @type {any} */ (before));
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
