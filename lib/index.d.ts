// Public types of quickrealm. The native binding's own declarations are in native/binding.d.ts.

import type {
  DeterministicOptions,
  Limits,
  RunOptions,
  ExecResult as NativeExecResult,
  ExecStats,
  LogLine,
  NativeExecOptions,
  NativeRunResult,
  PoolStats,
  RealmStats,
  RunStats,
  SandboxErrorInfo,
} from './native/binding.js';

// Generated from the Rust types that build them (src/napi/results.rs) and that read them
// (src/napi/options.rs).
export type {
  DeterministicOptions,
  Limits,
  NativeExecOptions,
  PoolStats,
  RealmStats,
  RunOptions,
  RunStats,
  SandboxErrorInfo,
};
/**
 * Every error code quickrealm reports, from every layer: a string union, and at run time an
 * object from member names to codes (`ErrorCode.NotFound === 'NOT_FOUND'`). Generated from
 * src/codes.rs.
 */
export { ErrorCode } from './native/binding.js';

export type LogLevel = LogLine['level'];

/** One captured console line. */
export type LogEntry = LogLine;

/** What every run result carries. */
export type RunBase = Omit<NativeRunResult, 'ok' | 'value' | 'error' | 'state'>;

/**
 * A run's result, a union on `ok`: `if (!r.ok) r.error.code` type-checks under `--strict`.
 * `value` is the completion value (script), return value (function) or exports namespace
 * (module), copied out (shared references stay shared and cycles are kept, as with
 * structuredClone). Captured console lines are in `logs`; unhandled promise rejections
 * appear there at level 'error'.
 */
export type RunResult = RunBase &
  ({ ok: true; value: unknown; error?: undefined } | { ok: false; error: SandboxErrorInfo; value?: undefined });

/**
 * Runs guest code in a fresh, frozen realm. Without `globals` it runs on one of quickrealm's
 * worker threads (the event loop stays free); with live `globals` it runs on the main thread in
 * time slices of a few milliseconds. Never rejects for guest errors, limits or aborts: those
 * are results with `ok: false`.
 * @example
 * const r = await run('return data.items.map((x) => x * 2)', { data: { items: [1, 2] } });
 * if (r.ok) console.log(r.value); // [2, 4]
 * else console.error(r.error.code, r.error.message, r.error.frame);
 * @throws never for the guest; a result with `ok: false` and code `INVALID_INPUT` for bad options.
 */
export function run(source: string, options?: RunOptions): Promise<RunResult>;

/**
 * Runs guest code in a fresh, frozen realm on the calling thread, blocking it until the run
 * ends (at most `limits.timeoutMs`). Never throws for guest errors, limits or aborts.
 * @example
 * const r = runSync('emit(read_input().toUpperCase())', { input: 'hi' });
 * r.ok && r.output; // 'HI'
 * @throws never for the guest; a result with `ok: false` and code `INVALID_INPUT` for bad options.
 */
export function runSync(source: string, options?: RunOptions): RunResult;

declare const copiedBrand: unique symbol;
/** A value boxed by `copyOf`: opaque on the host side; the sandbox sees a copy of the value. */
export interface Copied<T> {
  readonly value: T;
  readonly [copiedBrand]: true;
}
/**
 * Marks a value so that a sandbox receiving it — a host function's result, a property of a host
 * object, a live global — gets a deep copy (structured-clone style, with `data`'s limits) instead
 * of a live proxy. For results that are plain data this is cheaper (no crossing per property
 * read) and the guest may change its copy freely; functions inside the value cannot be copied
 * and make the crossing fail with a TypeError in the guest.
 * @example
 * const stat = (p: string) => copyOf({ size: sizeOf(p), tags: ['a', 'b'] });
 * await run('const s = stat("x"); s.tags.push("c"); return s', { globals: { stat } });
 */
export function copyOf<T>(value: T): Copied<T>;

/** Generated from the Rust type that reads it (src/napi/mod.rs). */
export type { ConfigureOptions } from './native/binding.js';
import type { ConfigureOptions } from './native/binding.js';

/**
 * Adjusts process-wide settings; returns the settings in force.
 * @throws {Error} with `code: 'INVALID_INPUT'` for unknown keys or values out of range.
 * @example
 * configure({ workers: 4, poolSize: 0 });
 */
export function configure(options: ConfigureOptions): { workers: number; poolSize: number };

/** Counters of the prepared-realm pool (`ready`, `size`, `taken`, `built`) and the memory of one realm. */

/** Counters of the prepared-realm pool. */
export function poolStats(): PoolStats;

/**
 * Memory as quickrealm's allocator counts it: `bytesPerRealm` for a plain run's realm (a context
 * derived from the thread's template realm), `bytesPerTemplate` for the template (once per thread),
 * `bytesPerOwnRealm` for a realm with a runtime of its own (live globals, workspace, deterministic).
 */
export function realmStats(): RealmStats;

// ---- tree-agent style editor -------------------------------------------------------------

export interface EditResult {
  type: 'success' | 'editingError';
  message: string;
}

export interface SandboxExecutorOptions {
  /**
   * Builds `context` from the tree (a fork of it, for `.run()` on a view). Default: `createContext`
   * of `quickrealm/tree`, which needs `@fluidframework/tree` installed. An error it throws goes to
   * the host (it is not an edit failure).
   */
  createContext?(tree: unknown): object;
  /** Extra live globals. The name 'context' is reserved (throws). */
  globals?: Map<string, unknown> | Record<string, unknown>;
  /** SES-shaped alias for extra globals, accepted as-is. */
  compartmentOptions?: { globals?: Map<string, unknown> };
  /** Accepted for drop-in parity: consoleTaming 'unsafe' prints guest console output on the host
   * console; errorTaming 'unsafe' keeps full guest stacks on thrown errors; other keys are ignored. */
  lockdownOptions?: Record<string, unknown>;
  limits?: Limits;
  mode?: RunOptions['mode'];
}

export interface SandboxEditExecutor<TSchema = unknown> {
  /**
   * tree-agent's AsynchronousEditor: edits `tree` in place; resolves on success, rejects when the
   * code fails (rolling back is the caller's part, as tree-agent runs it on a fork). An aborted
   * `signal` stops the edit (`CANCELLED`, or `TIMEOUT` for `AbortSignal.timeout()`). Host
   * mistakes (code that is not a string, unknown options, a failing `createContext`) reject too.
   */
  (tree: unknown, code: string, options?: { signal?: AbortSignal }): Promise<void>;
  /**
   * One edit that is all or nothing where the tree allows it: a view or branch (`fork`, `merge`,
   * `dispose`), or a node in one, is edited on a fork of that branch merged only on success. Other
   * trees are edited in place, and a failed edit's message says the tree was not reset. Resolves
   * with the edit result in tree-agent's wording plus the full RunResult whatever the code did;
   * rejects only for host mistakes, as the editor form does.
   */
  run(tree: unknown, code: string, options?: { signal?: AbortSignal }): Promise<EditResult & { result: RunResult }>;
  /** Phantom marker for the schema type parameter. */
  readonly __schema?: TSchema;
}

/**
 * A drop-in replacement for the SES edit executor, with a separate heap and hard limits. Bad
 * options throw here (TypeError or RangeError, code INVALID_INPUT), as does a missing
 * `@fluidframework/tree` when no `createContext` is given.
 * @throws {TypeError | RangeError} with `code: 'INVALID_INPUT'` for unknown or bad options.
 * @example
 * const executor = createSandboxExecutor({ limits: { timeoutMs: 2_000 } });
 * const outcome = await executor.run(view, 'context.root.items.insertAtEnd(context.create.Item({ name: "x" }))');
 * if (outcome.type === 'editingError') console.log(outcome.message);
 */
export function createSandboxExecutor<TSchema = unknown>(
  options?: SandboxExecutorOptions,
): SandboxEditExecutor<TSchema>;

// ----- Workspace -----

/**
 * Stable codes carried by errors thrown from ZipWorkspace (`err.code`). `INVALID_INPUT` errors
 * are TypeErrors; the others are plain Errors.
 */
export type WorkspaceErrorCode =
  | 'INVALID_INPUT'
  | 'DISPOSED'
  | 'PATH_INVALID'
  | 'NOT_FOUND'
  | 'EXISTS'
  | 'NOT_A_DIRECTORY'
  | 'IS_A_DIRECTORY'
  | 'NOT_EMPTY'
  | 'ZIP_INVALID'
  | 'ZIP_LIMIT'
  | 'CONFLICT'
  | 'RANGE'
  | 'QUOTA'
  | 'HISTORY'
  | 'HISTORY_INVALID'
  | 'NOT_TEXT'
  | 'IO'
  | 'POLICY_VIOLATION'
  /** Text matching (an `apply_patch` diff's context) would cost more than its work budget. */
  | 'TOO_COMPLEX'
  | 'INTERNAL';

/** What ZipWorkspace methods throw. */
export interface WorkspaceError extends Error {
  code: WorkspaceErrorCode;
}

/**
 * An in-memory tree of files and folders with a recorded history; zip is its import and export
 * format. History lives in a hidden `.time/` folder that no method can read or write but that
 * travels with `toZip`/`fromZip`. Every change records one history entry; mutating methods
 * return its id (null when nothing changed). Failures throw a WorkspaceError. Paths in results
 * are relative to the workspace root without a leading `~/` (`src/app.js`); arguments accept
 * `~/src/app.js`, `/src/app.js` and `src/app.js` alike. Declared in native/binding.d.ts,
 * generated from the Rust class with what lib/workspace.js adds.
 */
export { ZipWorkspace } from './native/binding.js';

// Generated from the Rust types that build them (src/napi/workspace/results.rs) and that read
// them (src/napi/workspace/args.rs).
export type {
  ExecErrorInfo,
  ExecStats,
  WorkspaceAccessRules,
  WorkspaceChange,
  WorkspaceEntry,
  WorkspaceHistoryEntry,
  WorkspaceLineRange,
  WorkspacePatchResult,
  WorkspaceSearchMatch,
  WorkspaceSearchResult,
  WorkspaceStat,
  WorkspaceSearchOptions,
  WorkspaceWalkEntry,
  ZipLimits,
} from './native/binding.js';

/** What `exec` resolves to: the generated result, whose `stats` are always set. */
export type ExecResult = Omit<NativeExecResult, 'stats'> & { stats: ExecStats };

/** What `setAccessRules` takes: pattern lists as arrays or Sets. */
export interface AccessRules {
  /** Paths that may be read (and the folders on the way to them). Left out: every path. */
  readPatterns?: readonly string[] | ReadonlySet<string> | null;
  /** Paths that may be created, changed or deleted. Left out: every path. */
  writePatterns?: readonly string[] | ReadonlySet<string> | null;
  /** Refuses every change. */
  readOnly?: boolean;
}

/**
 * Options of `ZipWorkspace.exec`. Inside the run: relative imports of workspace files (extension-
 * less specifiers try .ts, .js, .mjs, /index.ts, /index.js; './x.js' also finds x.ts), the `fs`,
 * `fs/promises`, `path` and `os` modules (also as `node:fs`, ...) with default and named imports,
 * and a minimal `process` (argv, env, exit, exitCode, cwd() === '~', stdout/stderr.write). Every
 * other import (packages, Node built-ins, absolute paths, URLs, paths leaving the workspace) is
 * refused with an error naming the specifier. TypeScript types are stripped with oxc (enums and
 * namespaces are compiled); error locations point into the original files.
 */
export interface ExecOptions extends NativeExecOptions {
  /**
   * Stops the run when aborted: the result is `CANCELLED`, or `TIMEOUT` when the signal's reason
   * is a `TimeoutError` (as with `AbortSignal.timeout(ms)`).
   */
  signal?: AbortSignal;
}

// Tools for models: the neutral form and the converters (also the quickrealm/tools entry).
export * from './tools/index.js';

// ----- Stateful components (declarations in component/index.d.ts) -----

export * from './component/index.js';

// ----- Sessions (declarations in session/index.d.ts) -----

export * from './session/index.js';

// ----- Persistent realms (declarations in repl/index.d.ts) -----

export * from './repl/index.js';

// ----- OpenTelemetry (declarations in telemetry/index.d.ts) -----

export * from './telemetry/index.js';
