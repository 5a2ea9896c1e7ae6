// quickrealm/fleet: sessions on PostgreSQL (the store of record). Needs the optional peer `pg`.
import type { Pool, PoolClient } from 'pg';
import type { RunResult } from '../index.js';
import type { AuditEntry, BudgetKind, SessionOptions, SessionStore, TurnOutcome } from '../session/index.js';

export interface StoredApproval {
  id: string;
  turnNumber: number;
  operation: string;
  args: unknown;
  status: string;
}

export interface SessionRow {
  id: string;
  version: number;
  status: string | null;
  tenant: string | null;
  turnNumber: number | null;
  metadata: unknown;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * Sessions in PostgreSQL: a `sessions` row per session with a version column (compare-and-set),
 * the snapshot as bytea, status, tenant, turn number and metadata as columns; the audit entries of
 * each save as rows written in the same transaction (still one hash chain); waiting approval
 * requests as rows. Bad ids and malformed connection strings are INVALID_INPUT; a server that
 * cannot be reached is UNAVAILABLE (the driver's error as `cause`).
 */
export declare class PostgresStore implements SessionStore {
  constructor(
    connection: { connectionString: string; connectionTimeoutMillis?: number; max?: number } | { pool: Pool },
    options?: { schema?: string },
  );
  readonly schema: string;
  readonly pool: Pool;
  /** Creates or updates the tables; idempotent and safe from several processes at once. The versions applied now. */
  migrate(): Promise<number[]>;
  /**
   * Runs `body` in one transaction on one pooled connection: committed when it resolves, rolled
   * back when it throws. A `put` given its `client` commits with it (or not at all).
   */
  transaction<T>(body: (client: PoolClient) => Promise<T>): Promise<T>;
  get(id: string): Promise<{ bytes: Buffer; version: number } | null>;
  /** SessionStore's `put`; with `client` (from `transaction`) it saves inside that transaction. */
  put(
    id: string,
    bytes: Uint8Array,
    options: Parameters<SessionStore['put']>[2] & { client?: PoolClient },
  ): Promise<number>;
  /** Inserts a session at `version` when the store does not have it (SESSION_CONFLICT otherwise). */
  importVersion(
    id: string,
    bytes: Uint8Array,
    version: number,
    meta?: Record<string, unknown>,
    extra?: { auditSince?: (seq: number) => AuditEntry[]; approvals?: StoredApproval[] },
  ): Promise<number>;
  delete(id: string): Promise<void>;
  list(): Promise<string[]>;
  version(id: string): Promise<number | null>;
  head(id: string): Promise<{ version: number; meta: Record<string, unknown> } | null>;
  /** Filtered and paged in SQL, ordered by id; `after`: the last id of the previous page. */
  /**
   * A tenant's caps, enforced by the fleet when a turn is claimed: turns running at once across
   * all workers (a turn waits for a slot), and totals of tokens and cost its sessions may have
   * used (a turn past them does not run: BUDGET_EXCEEDED). `null` lifts a cap.
   */
  setTenantCaps(
    tenant: string,
    caps: { maxConcurrentTurns?: number | null; maxTokens?: number | null; maxCost?: number | null },
  ): Promise<void>;
  /** A tenant's caps (null: none) and what its sessions have used. */
  tenantUsage(tenant: string): Promise<{
    caps: { maxConcurrentTurns: number | null; maxTokens: number | null; maxCost: number | null };
    used: { tokens: number; cost: number; sessions: number };
  }>;
  listSessions(filter?: { tenant?: string; status?: string; limit?: number; after?: string }): Promise<SessionRow[]>;
  /** The audit rows of a session, oldest first. */
  auditEntries(id: string): Promise<AuditEntry[]>;
  /** The approval rows of a session (`pending`, or the decision written). */
  approvals(id: string): Promise<(StoredApproval & { decidedAt: Date | null })[]>;
  /** Ends the pool the store made; a pool it was given stays open. */
  close(): Promise<void>;
}

/** One migration of the fleet's schema (applied in order, each once). */
export declare const MIGRATIONS: readonly { version: number; name: string; up(schema: string): string }[];

/**
 * Copies sessions (all, or `ids`) from any store into a PostgresStore at their current versions,
 * with their snapshots unchanged, their columns, audit rows and waiting approvals. Sessions the
 * target already has are skipped with SESSION_CONFLICT.
 */
export declare function importSessions(options: {
  from: SessionStore;
  to: PostgresStore;
  ids?: string[];
  snapshotKey?: Uint8Array | string;
  operations?: SessionOptions['operations'];
}): Promise<{ imported: { id: string; version: number }[]; skipped: { id: string; code: string; message: string }[] }>;

/** A turn's result as the fleet keeps it: the session's TurnResult without the proposals' bytes. */
export interface FleetTurnResult {
  /** `done`, `failed` (the attempts ran out) or `paused` (waiting for approval). */
  status: 'done' | 'failed' | 'paused';
  turnNumber: number | null;
  outcome: TurnOutcome | { tag: string; recovered?: boolean; [key: string]: unknown };
  budgetRemaining: Record<BudgetKind, number | null> | null;
  proposals: { path: string; kind: 'create' | 'modify' | 'delete'; diff?: string }[];
  result?: RunResult;
}

export interface FleetOptions {
  store: PostgresStore;
  operations?: SessionOptions['operations'];
  snapshotKey?: string | Uint8Array;
  /** @defaultValue 'quickrealm-turns' (its dead-letter queue is `<queue>-dead`) */
  queue?: string;
  /** How often a running turn's worker proves it is alive (≥ 10). @defaultValue 10 */
  heartbeatSeconds?: number;
  /** The longest a turn's attempt may run before it is retried. @defaultValue 900 */
  expireInSeconds?: number;
  /** Attempts after the first before a turn fails for good (and goes to the dead-letter queue). @defaultValue 5 */
  retryLimit?: number;
  /** @defaultValue 1 */
  retryDelaySeconds?: number;
  /** How often lost heartbeats are looked for. @defaultValue 2 */
  superviseIntervalSeconds?: number;
  /**
   * How often an idle worker process looks for turns when no notification arrives (one of its
   * idle slots looks; queued turns wake them at once). @defaultValue 1
   */
  pollingIntervalSeconds?: number;
  /** How often `result()` looks at the turn when no notification arrives (its fallback). @defaultValue 1000 */
  resultPollMs?: number;
  /** Names this process in `turns.claimed_by`. @defaultValue host:pid:random */
  workerId?: string;
  /** pg-boss's connection options, when they differ from the store's pool. */
  connection?: Record<string, unknown>;
}

/**
 * Turns of sessions in a PostgresStore, spread over worker processes by pg-boss (Node 22 or
 * later): one job per turn, never two turns of a session at once, operations journalled in
 * PostgreSQL as they complete (a turn re-run after a crash does not repeat them), decisions on
 * approvals committed with the job that resumes the turn.
 */
export declare class Fleet {
  constructor(options: FleetOptions);
  readonly queue: string;
  /** Queues a turn (NOT_FOUND for an unknown session). The same `idempotencyKey` answers the same turn. */
  submit(sessionId: string, code: string, options?: { idempotencyKey?: string }): Promise<{ turnId: string }>;
  /** The turn's result once it has one; TIMEOUT after `timeoutMs` (default 60 s), NOT_FOUND for an unknown id. */
  result(turnId: string, options?: { timeoutMs?: number }): Promise<FleetTurnResult>;
  /** Decides a request; the turn resumes on a worker once no request waits (its id, else null). */
  approve(sessionId: string, approvalId: string, decision?: { value?: unknown }): Promise<{ turnId: string | null }>;
  reject(sessionId: string, approvalId: string, reason?: string): Promise<{ turnId: string | null }>;
  /** Makes this process a worker; `stop()` lets running turns finish. */
  work(options?: { concurrency?: number }): Promise<{ stop(): Promise<void> }>;
  /** Stops the workers of this object and closes its connections (not the store's pool). */
  stop(): Promise<void>;
  /** The pg-boss instance behind the queue, started with the queues created (for operations work). */
  boss(): Promise<import('pg-boss').PgBoss>;
}
