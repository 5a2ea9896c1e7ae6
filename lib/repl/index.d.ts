// Persistent realms (lib/repl): top-level bindings kept between evaluations, snapshots.

import type { DeterministicOptions, Limits } from '../native/binding.js';
import type { RunResult } from '../index.js';

/** Options of `createRepl`. */
export interface ReplOptions {
  /** Limits of each evaluation, as for `run`. */
  limits?: Limits;
  /** Copied into the realm once, as globals, when it is created: from then on they are state. */
  data?: Record<string, unknown>;
  /**
   * Live host values bound in every evaluation (not state: a binding that holds one cannot be
   * kept, and the evaluation fails with INVALID_INPUT naming it).
   */
  globals?: Record<string, unknown> | Map<string, unknown>;
  /** Every evaluation starts from this virtual clock and seed. */
  deterministic?: boolean | DeterministicOptions;
  /**
   * A failed evaluation leaves the state as it was before it. Default false: as in a REPL,
   * the statements it completed stay done.
   */
  transactional?: boolean;
  console?: 'capture' | 'inherit' | 'off';
  /** Shown in stacks; default `cell-N.js`. */
  filename?: string;
}

/** Options of `restoreRepl`: the snapshot's key, and the REPL's options (no `data`). */
export interface RestoreReplOptions extends Omit<ReplOptions, 'data'> {
  /** The key the snapshot was made with: at least 16 bytes. */
  key: string | Uint8Array;
}

/** Options of one evaluation. */
export interface ReplEvalOptions {
  signal?: AbortSignal;
  /** Merged over the REPL's limits for this evaluation. */
  limits?: Limits;
}

/**
 * A persistent realm. Each evaluation is a cell: a script with top-level `await` whose
 * `let`/`const`/`class`/`var`/function declarations, and everything reachable from them
 * (closures included), are there for the next cells.
 */
export declare class Repl {
  private constructor();
  /** Evaluates a cell; cells run in the order given. The value is the completion value. */
  eval(code: string, options?: ReplEvalOptions): Promise<RunResult>;
  /** Evaluates a cell on this thread. */
  evalSync(code: string, options?: ReplEvalOptions): RunResult;
  /** The state as bytes authenticated with `key` (HMAC-SHA256, at least 16 bytes). */
  snapshot(options: { key: string | Uint8Array }): Uint8Array;
  /** Forgets the state; later calls throw DISPOSED. */
  dispose(): void;
  [Symbol.dispose](): void;
}

/**
 * A persistent realm: evaluations keep their top-level bindings.
 * @example
 * const repl = createRepl();
 * await repl.eval('let n = 1; const seen = new Map(); function inc(k) { seen.set(k, ++n); return n }');
 * (await repl.eval('inc("a")')).value; // 2
 */
export function createRepl(options?: ReplOptions): Repl;

/**
 * A REPL from `snapshot()` bytes, here or in another process of the same quickrealm build.
 * @throws SNAPSHOT_TAMPERED when the bytes do not verify under `key`; SNAPSHOT_VERSION when
 * they come from another build.
 */
export function restoreRepl(bytes: Uint8Array, options: RestoreReplOptions): Repl;
