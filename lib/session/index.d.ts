// Sessions (DESIGN §4.1): the host controls the loop. Declarations for lib/session/.

import type { Limits, RunResult, ZipWorkspace, ExecResult } from '../index.js';
import type { ToolSet } from '../tools/index.js';

/** Seed 002's policy shape. Operation lists take arrays or Sets; `*` is a wildcard in them. */
export interface SessionPolicy {
  /** Operations that may run (`world.read`, `llm.complete`, `tickets.*`); absent: all not denied. */
  allowedOperations?: ReadonlySet<string> | readonly string[] | null;
  /** Operations that never run; deny wins over allow. */
  deniedOperations?: ReadonlySet<string> | readonly string[];
  worldRules?: {
    /** Gitignore-style globs of readable paths. @defaultValue ['**\/*'] */
    readPatterns?: ReadonlySet<string> | readonly string[];
    /** Gitignore-style globs of writable paths. @defaultValue ['**\/*'] */
    writePatterns?: ReadonlySet<string> | readonly string[];
    /** Refuse every write. @defaultValue false */
    readOnly?: boolean;
    /** Stage writes as proposals for `commit()` / `rollback()`. @defaultValue false */
    proposalMode?: boolean;
  };
  llmRules?: {
    /** Whether `llm.complete` may run. @defaultValue true */
    allowComplete?: boolean;
    /**
     * Refuses an `llm.complete` call whose arguments ask for more tokens: every `maxTokens`,
     * `max_tokens`, `max_completion_tokens`, `maxOutputTokens`, `max_new_tokens` or
     * `max_tokens_to_sample` field (any case, `_` or `-`), at any depth; a count that is not a
     * finite number counts as unbounded.
     */
    maxTokensPerCall?: number | null;
  };
  executionRules?: {
    /** Whether `world.exec` may run. @defaultValue true */
    allowExec?: boolean;
    /** Whether operations registered with `network: true` may run. @defaultValue true */
    allowNetworkCalls?: boolean;
  };
}

/** A policy as the session holds it: arrays, every field present. */
export interface NormalizedPolicy {
  allowedOperations: string[] | null;
  deniedOperations: string[];
  worldRules: { readPatterns: string[]; writePatterns: string[]; readOnly: boolean; proposalMode: boolean };
  llmRules: { allowComplete: boolean; maxTokensPerCall: number | null };
  executionRules: { allowExec: boolean; allowNetworkCalls: boolean };
}

/** The shipped policies, as in seed 002 (Sets). */
export declare const policies: {
  /** Read-only: world.read/list/search/stat/fingerprint and llm.complete; no exec. */
  readonly SAFE_ANALYSIS: Readonly<SessionPolicy>;
  /** SAFE_ANALYSIS plus world.write/mkdir/delete under src/ and test/, in proposal mode. */
  readonly SAFE_EDIT: Readonly<SessionPolicy>;
};

/** What a budget limits: the native `BudgetName` enum's values (`turns`, `wallMs`, `hostCalls`, `bytesWritten`, `tokens`, `cost`). */
export type BudgetKind = `${import('../native/binding.js').BudgetName}`;
export type SessionBudget = Partial<Record<BudgetKind, number>>;

/** A host operation the guest can call (`llm.complete(...)` for the name `'llm.complete'`). */
export type OperationHandler = (...args: never[]) => unknown;
export interface OperationDefinition {
  /**
   * Runs the operation with the guest's arguments, copied as JSON data (plain objects and arrays,
   * no getters, never a `__proto__` key: a call carrying one is refused with a TypeError). May return
   * `{ value, usage: { tokens?, cost? } }` to report usage; the result reaches the guest as JSON data.
   */
  handler: OperationHandler;
  /** Pause the turn for a person's approval before running (always, or when the function says so). */
  needsApproval?: boolean | ((...args: never[]) => boolean);
  /** The operation makes network calls (refused when `executionRules.allowNetworkCalls` is false). */
  network?: boolean;
  /**
   * Running it twice with the same `idempotencyKey` (see `operationContext()`) has the effect of
   * running it once. When a turn is re-run after its worker died while this operation ran, an
   * idempotent operation runs again with the same key; any other is reported to the guest as
   * `OperationInterrupted` (it may have taken effect, so it is not run twice).
   */
  idempotent?: boolean;
  description?: string;
  inputSchema?: object;
}

export interface SessionOptions {
  /** The world. @defaultValue an empty workspace */
  workspace?: ZipWorkspace;
  /** @defaultValue policies.SAFE_ANALYSIS */
  policy?: SessionPolicy;
  budget?: SessionBudget;
  operations?: Record<string, OperationHandler | OperationDefinition>;
  /** Limits of each turn's run (timeoutMs defaults to 30 s, and never past the wallMs budget). */
  limits?: Limits;
  /** 1 to 128 letters, digits, `_`, `.` or `-`. @defaultValue a generated id */
  id?: string;
  /** Initial `env`: plain JSON data. */
  env?: Record<string, unknown>;
  /**
   * Signs snapshots (HMAC-SHA256, at least 16 characters or bytes): `Session.restore` with the same key
   * refuses any change to a snapshot (policy, approvals, budget, world) with SNAPSHOT_TAMPERED. The
   * signed bytes bind the session id, the store version and the purpose (`store` or `export`), so a
   * SessionManager refuses an older snapshot, another session's or an export. Use it when snapshots
   * are kept where others can write.
   */
  snapshotKey?: string | Uint8Array;
  /**
   * Operation calls (`world.*` included) one turn may make; past it the turn ends with
   * HOST_CALL_LIMIT (the session stays active). Bounds what one turn adds to the audit log and
   * the journal. @defaultValue 10000
   */
  callsPerTurn?: number;
  /** Who the session belongs to: listed and capped per tenant by stores that support it. */
  tenant?: string;
  /** A flat object of strings, numbers and booleans (at most 4,096 characters of JSON) kept with the session. */
  metadata?: Record<string, string | number | boolean>;
  /**
   * Keeps each turn's top-level bindings for the next turn (DESIGN §10). Turns then run as REPL
   * cells: a script with top-level `await` whose value is the value of its last expression
   * statement (`return` outside a function is a SyntaxError, explained as such in the outcome).
   * Top-level `let`/`const`/`var`/function/class declarations, and everything they reach
   * (closures with their variables included), are there in later turns; `env` works as before.
   * Live host values (`world`, `env`, `session`, `needs`, the operations), promises and timers
   * are not state, nor are objects read from `env` (views of the host's copy; keep
   * `JSON.parse(JSON.stringify(env.x))`): a turn whose bindings hold one fails with
   * INVALID_INPUT naming the binding.
   * A turn that fails keeps no bindings (nor anything else); one that pauses for approval re-runs
   * from the state before it on `resume()`; one that ends with `needs()` keeps its `env` and world
   * changes but not its bindings. The state is part of `snapshot()`, and so of every store,
   * sealed with `snapshotKey`; without one it is sealed with a key of this process and restores
   * only in this process (SNAPSHOT_TAMPERED elsewhere). @defaultValue false
   */
  persistState?: boolean;
}

/**
 * The context of a host operation call: the handler's `this`, and what `operationContext()`
 * answers while the handler (and what it awaits) runs.
 */
export interface OperationContext {
  readonly sessionId: string;
  readonly turnNumber: number;
  readonly operation: string;
  /** The call's place among the turn's operation calls (the same when the turn is re-run). */
  readonly seq: number;
  /** `<sessionId>:<turnNumber>:<seq>`: the same every time this call is run again. */
  readonly idempotencyKey: string;
  /** True when the call runs again after its worker died while it ran (idempotent operations only). */
  readonly rerun: boolean;
}

/** The context of the host operation whose handler is running; undefined outside one. */
export declare function operationContext(): OperationContext | undefined;

export interface ApprovalRequest {
  id: string;
  operation: string;
  args: unknown[];
}

export type TurnOutcome =
  | { tag: 'ok'; value: unknown }
  | { tag: 'proposed'; value: unknown }
  | {
      tag: 'error';
      /** EVAL_ERROR, TIMEOUT, ..., POLICY_VIOLATION, SESSION_STATE, SESSION_CONFLICT, REPLAY_DIVERGED, CONFLICT */
      code: string;
      message: string;
      name?: string;
      /** For POLICY_VIOLATION: the rule that refused. */
      rule?: string;
      line?: number;
      column?: number;
      frame?: string;
    }
  | { tag: 'nonconverged'; reason: 'budget'; code: 'BUDGET_EXCEEDED'; budget: BudgetKind; message: string }
  | { tag: 'needs'; question: unknown }
  | { tag: 'needs-approval'; requests: ApprovalRequest[] };

export interface Proposal {
  path: string;
  kind: 'create' | 'modify' | 'delete';
  dir: boolean;
  before: Uint8Array | null;
  after: Uint8Array | null;
  /** A unified diff for text files. */
  diff?: string;
}

export interface TurnResult {
  turnNumber: number;
  outcome: TurnOutcome;
  budgetRemaining: Record<BudgetKind, number | null>;
  proposals: Proposal[];
  result: RunResult;
}

export interface AuditEntry {
  seq: number;
  timestamp: number;
  turnNumber: number;
  operation: string;
  /** JSON text, cut to 4 KiB with a marker. */
  args: string;
  result?: string;
  error?: string;
  durationMs: number;
  tokensUsed?: number;
  prevHash: string;
  hash: string;
}

export interface AuditLog {
  entries(): AuditEntry[];
  forTurn(turnNumber: number): AuditEntry[];
  forOperation(operation: string): AuditEntry[];
  stats(): { totalOperations: number; operationCounts: Record<string, number>; totalTokens: number };
  /** JSON lines, one entry per line. */
  export(): string;
  /** Checks the chain up to the recorded head, or an `export()`'s chain. */
  verify(exported?: string): { ok: true; entries: number } | { ok: false; error: string };
}

export type SessionStatus = 'active' | 'paused' | 'completed' | 'aborted' | 'budget-exceeded';

export interface WorldApi {
  read(path: string): string;
  read(path: string, options: { encoding: null }): Uint8Array;
  write(path: string, data: string | Uint8Array): number;
  list(glob?: string): string[];
  search(query: string, options?: object): unknown;
  stat(path: string): { size: number; kind: 'file' | 'dir'; mtime: number };
  delete(path: string, options?: { recursive?: boolean }): true;
  mkdir(path: string): true;
  fingerprint(glob?: string): string;
  /**
   * The `ZipWorkspace#exec` result, less its timings and history entry id (the writes land with the turn).
   * The program runs deterministically: the turn's clock, and a seed derived from the turn's and the
   * program's place in the turn, so a resumed turn's programs print the same.
   */
  exec(
    entry: string,
    options?: { argv?: string[]; env?: Record<string, string> },
  ): Promise<Omit<ExecResult, 'historyId' | 'stats' | 'error'> & { error: ExecResult['error'] | null }>;
}

export declare class Session {
  constructor(options?: SessionOptions);
  /**
   * A session from `snapshot()` bytes; refuses a tampered audit log (AUDIT_TAMPERED), and with
   * `snapshotKey` a changed snapshot or one a SessionManager stored (SNAPSHOT_TAMPERED). A
   * `persistState` session's state must verify (SNAPSHOT_TAMPERED: changed, or sealed by another
   * process for want of a snapshotKey; SNAPSHOT_VERSION: written by another quickrealm build).
   */
  static restore(
    bytes: Uint8Array,
    options?: { operations?: SessionOptions['operations']; limits?: Limits; snapshotKey?: string | Uint8Array },
  ): Session;
  readonly id: string;
  /** Who the session belongs to (null: no tenant). */
  readonly tenant: string | null;
  /** The metadata the session was created with. */
  readonly metadata: Record<string, string | number | boolean>;
  readonly status: SessionStatus;
  readonly workspace: ZipWorkspace;
  readonly turnNumber: number;
  readonly policy: NormalizedPolicy;
  /** A copy of `env` as the last successful turn left it. */
  readonly env: Record<string, unknown>;
  /** Whether each turn's top-level bindings are kept for the next turn (`persistState`). */
  readonly persistState: boolean;
  readonly pendingApprovals: ApprovalRequest[];
  /** The turns so far; a turn that failed keeps why (message and frame cut at 2,048 characters). */
  readonly turns: {
    turnNumber: number;
    code: string;
    outcome: TurnOutcome['tag'];
    startedAt: number;
    wallMs: number;
    error?: {
      code: string;
      message: string;
      name?: string;
      line?: number;
      column?: number;
      frame?: string;
      /** The budget that ran out (`nonconverged` turns). */
      budget?: string;
    };
  }[];
  readonly audit: AuditLog;
  /** Never throws for guest, policy or budget errors. */
  executeTurn(code: string, options?: { signal?: AbortSignal }): Promise<TurnResult>;
  approve(requestId: string, decision?: { value?: unknown }): void;
  reject(requestId: string, reason?: string): void;
  /** Continues a turn paused for approval (re-run from its journal), or reactivates a paused session (null). */
  resume(options?: { signal?: AbortSignal }): Promise<TurnResult | null>;
  budgetRemaining(): Record<BudgetKind, number | null>;
  budgetRemaining(kind: BudgetKind): number | null;
  budgetUsed(): Record<BudgetKind, number>;
  consume(usage: { tokens?: number; cost?: number }): Record<BudgetKind, number | null>;
  allowed(operation: string): boolean;
  /** Whether another turn can run now: active, nothing waiting for approval, no budget used up. */
  canContinue(): boolean;
  proposals(): Proposal[];
  /** Applies the proposals as one history entry; its id, or null. */
  commit(): number | null;
  rollback(): void;
  abort(): void;
  complete(): void;
  pause(): void;
  /**
   * Zip bytes: world with history, proposals, env, turns, audit, budget, policy, status, approvals,
   * journal and, with `persistState`, the realm state; bound to this session's id with the purpose
   * `export`.
   */
  snapshot(): Buffer;
}

/**
 * Where a SessionManager keeps snapshots: bytes by id, with compare-and-set versions that count
 * the saves of a session (1 for the first `put`, then one more for each). Each snapshot is signed
 * with the version it is stored as, so a store must never answer an older version than it last
 * wrote (keep the version apart from the bytes; the folder store keeps a version record).
 */
export interface SessionStore {
  get(id: string): Promise<{ bytes: Uint8Array; version: number } | null>;
  /**
   * Returns the new version, `expectedVersion + 1` (1 when null). Throws an error coded
   * SESSION_CONFLICT when the stored version is not `expectedVersion`. A store that keeps audit
   * entries and approval requests as rows writes them with the version (`auditSince(seq)`: the
   * entries from the first sequence number it lacks; `approvals`: the requests waiting now);
   * others ignore both.
   */
  put(
    id: string,
    bytes: Uint8Array,
    options: {
      expectedVersion: number | null;
      meta?: Record<string, unknown>;
      auditSince?: (seq: number) => AuditEntry[];
      approvals?: { id: string; turnNumber: number; operation: string; args: unknown[]; status: string }[];
    },
  ): Promise<number>;
  delete(id: string): Promise<void>;
  list(): Promise<string[]>;
  /** The stored version alone, when the store can tell it cheaply. */
  version?(id: string): Promise<number | null>;
  /** The stored version and the metadata given to `put`, when the store can tell them cheaply. */
  head?(id: string): Promise<{ version: number; meta: Record<string, unknown> } | null>;
}

/**
 * One file per session in a folder, written atomically, locked for compare-and-set, with a version
 * record beside it (`<id>.version`): a session file older than its record is refused with
 * SNAPSHOT_TAMPERED. Whoever can replace both files can still roll a session back.
 */
export declare class FolderStore implements SessionStore {
  constructor(dir: string);
  readonly dir: string;
  /** The session's file. */
  file(id: string): string;
  /** The session's version record. */
  versionFile(id: string): string;
  get(id: string): Promise<{ bytes: Buffer; version: number } | null>;
  put(
    id: string,
    bytes: Uint8Array,
    options: { expectedVersion: number | null; meta?: Record<string, unknown> },
  ): Promise<number>;
  delete(id: string): Promise<void>;
  list(): Promise<string[]>;
  version(id: string): Promise<number | null>;
  head(id: string): Promise<{ version: number; meta: Record<string, unknown>; offset: number } | null>;
}

export declare class SessionManager {
  constructor(
    options: ({ dir: string } | { store: SessionStore }) & {
      operations?: SessionOptions['operations'];
      /** Signs every stored snapshot and refuses a changed one (see SessionOptions.snapshotKey). */
      snapshotKey?: string | Uint8Array;
    },
  );
  readonly store: SessionStore;
  create(options?: SessionOptions): Promise<Session>;
  get(id: string): Promise<Session | null>;
  list(): Promise<string[]>;
  /** Every stored session with its status, turn number and last save time (ms since the epoch). */
  summaries(): Promise<{ id: string; version: number; status: string; turnNumber: number; updatedAt: number }[]>;
  pause(id: string): Promise<void>;
  resume(id: string): Promise<TurnResult | null>;
  abort(id: string): Promise<void>;
  commit(id: string): Promise<number | null>;
  rollback(id: string): Promise<void>;
  complete(id: string): Promise<void>;
  approve(id: string, requestId: string, decision?: { value?: unknown }): Promise<void>;
  reject(id: string, requestId: string, reason?: string): Promise<void>;
  delete(id: string): Promise<void>;
}

/** The session's turn as a tool (`execute_turn`, argument `{ code }`) in the neutral tool form. */
export declare function sessionTools(session: Session, options?: { name?: string; description?: string }): ToolSet;
/** What a model reads about a turn. */
export declare function describeTurn(turn: TurnResult): string;

/** Why an audit log does or does not verify; `brokenAt`: the first entry that breaks the chain. */
export type AuditVerification =
  | { ok: true; entries: number }
  | { ok: false; entries: number; error: string; brokenAt: number | null };

/**
 * A read-only look into snapshot bytes, for review: also a snapshot `Session.restore` refuses
 * because its audit no longer verifies (`audit.verification` says where it breaks), and, with
 * `snapshotKey`, one whose signature or binding does not match (read unverified; `integrity`
 * says why). INVALID_INPUT for bytes that are not a snapshot.
 */
export declare function inspectSnapshot(
  bytes: Uint8Array,
  options?: {
    snapshotKey?: string | Uint8Array;
    /** What the snapshot must be bound to. @defaultValue { purpose: 'export' } */
    expected?: { id?: string; version?: number; purpose: 'store' | 'export' };
  },
): {
  id: string;
  status: string;
  tenant: string | null;
  metadata: Record<string, string | number | boolean>;
  createdAt: number | null;
  turnNumber: number;
  turns: Session['turns'];
  pendingApprovals: (ApprovalRequest & { turnNumber: number })[];
  proposals: Proposal[];
  budget: Record<BudgetKind, { used: number; limit: number | null }>;
  policy: NormalizedPolicy | null;
  audit: { entries: AuditEntry[]; verification: AuditVerification };
  /** With `persistState`: the size of the sealed realm state (0 before any turn kept one); its contents are not read. */
  state: { bytes: number } | null;
  /** null when the signature (with a key) and the binding held; else why not. */
  integrity: string | null;
};
