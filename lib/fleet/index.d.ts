// quickrealm/fleet: sessions on PostgreSQL (the store of record). Needs the optional peer `pg`.
import type { Pool, PoolClient } from 'pg';
import type { AuditEntry, SessionOptions, SessionStore } from '../session/index.js';

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
  /** Runs `body` in one transaction on one pooled connection: committed when it resolves, rolled back when it throws. */
  transaction<T>(body: (client: PoolClient) => Promise<T>): Promise<T>;
  get(id: string): Promise<{ bytes: Buffer; version: number } | null>;
  put(
    id: string,
    bytes: Uint8Array,
    options: {
      expectedVersion: number | null;
      meta?: Record<string, unknown>;
      auditSince?: (seq: number) => AuditEntry[];
      approvals?: StoredApproval[];
    },
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
