// Public types of quickrealm. The native binding's own declarations are in binding.d.ts.

/** Hard limits for one run. Every field is optional; defaults are shown. */
export interface Limits {
  /** Wall clock for the whole run, promise jobs included. Default 5000. */
  timeoutMs?: number;
  /** QuickJS heap cap in bytes. Default 64 MiB (min 1 MiB, max 4 GiB). */
  memoryBytes?: number;
  /** Native stack for guest frames in bytes. Default 1 MiB (min 64 KiB, max 64 MiB). */
  stackBytes?: number;
  /** Cap on emit() output plus captured console text, in bytes. Default 64 KiB. */
  outputBytes?: number;
}

export type ErrorCode =
  | 'EVAL_ERROR'
  | 'TIMEOUT'
  | 'MEMORY_LIMIT'
  | 'OUTPUT_LIMIT'
  | 'CANCELLED'
  | 'INVALID_INPUT'
  | 'POLICY_VIOLATION'
  | 'INTERNAL';

export interface SandboxErrorInfo {
  code: ErrorCode;
  /** The guest error's name (TypeError, SyntaxError, ...) or the limit's error name. */
  name: string;
  message: string;
  /** 1-based line in the caller's source (no wrapper offset). */
  line?: number;
  /** 1-based column in the caller's source. */
  column?: number;
  /** Guest frames only; never host paths. */
  stack?: string;
  /** A few source lines around the failing line, with a caret under the column. */
  frame?: string;
}

export type LogLevel = 'log' | 'info' | 'warn' | 'error' | 'debug';

export interface LogEntry {
  level: LogLevel;
  message: string;
}

export interface RunStats {
  wallMs: number;
  /** Peak QuickJS heap use in bytes. */
  heapBytes: number;
  hostCalls: number;
}

export interface RunResult {
  ok: boolean;
  /** Completion value (script), return value (function) or exports namespace (module), copied out. */
  value?: unknown;
  /** What emit() wrote, truncated at outputBytes. */
  output: string;
  /** Captured console lines; unhandled promise rejections appear here at level 'error'. */
  logs: LogEntry[];
  error?: SandboxErrorInfo;
  stats: RunStats;
}

export interface RunOptions {
  /**
   * 'function' (default): the body of an async function, so `return` and top-level `await` work.
   * 'script': a classic script; the result is its completion value.
   * 'module': an ES module; the result is its exports namespace.
   */
  mode?: 'function' | 'script' | 'module';
  /** Shown in stacks. Default 'sandbox.js'. */
  filename?: string;
  /** What read_input() returns. */
  input?: string;
  /**
   * Deep-copied into the realm as globals: JSON-like data plus undefined, bigint, Date, Map, Set,
   * ArrayBuffer and typed arrays. Functions, symbols and cycles are INVALID_INPUT.
   */
  data?: Record<string, unknown>;
  limits?: Limits;
  /** Aborting stops the run with CANCELLED. */
  signal?: AbortSignal;
  /**
   * 'capture' (default): console lines go to `logs`. 'inherit': they are printed to the host
   * console when the run ends. 'off': console exists and prints nowhere. 'none': no console global.
   */
  console?: 'capture' | 'inherit' | 'off' | 'none';
}

/** Runs guest code on a quickrealm worker thread. Never rejects for guest errors. */
export function run(source: string, options?: RunOptions): Promise<RunResult>;

/** Runs guest code on the calling thread. Never throws for guest errors. */
export function runSync(source: string, options?: RunOptions): RunResult;

export interface ConfigureOptions {
  /** Worker threads used by run(); default one per core. */
  workers?: number;
}

/** Adjusts process-wide settings; returns the settings in force. */
export function configure(options: ConfigureOptions): { workers: number };
