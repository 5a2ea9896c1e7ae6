'use strict';
// The fleet's tables in PostgreSQL, as numbered migrations. Each migration runs in its own
// transaction under a transaction-level advisory lock keyed by the schema, and is recorded in
// `schema_migrations`: running `migrate` again, or from several processes at once, applies each
// migration exactly once. Add a migration at the end; never edit one that has shipped.

/**
 * @typedef {{ version: number, name: string, up: (schema: string) => string }} Migration
 */

/** @type {Migration[]} */
const MIGRATIONS = [
  {
    version: 1,
    name: 'sessions, audit, approvals, journal, turns, tenant caps',
    up: (s) => `
      CREATE TABLE ${s}.sessions (
        id text PRIMARY KEY,
        version integer NOT NULL CHECK (version > 0),
        snapshot bytea NOT NULL,
        status text,
        tenant text,
        turn_number integer,
        metadata jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX sessions_tenant_status ON ${s}.sessions (tenant, status);

      CREATE TABLE ${s}.audit (
        session_id text NOT NULL REFERENCES ${s}.sessions (id) ON DELETE CASCADE,
        seq integer NOT NULL,
        turn_number integer NOT NULL,
        operation text NOT NULL,
        entry jsonb NOT NULL,
        hash text NOT NULL,
        prev_hash text NOT NULL,
        PRIMARY KEY (session_id, seq)
      );

      CREATE TABLE ${s}.approvals (
        session_id text NOT NULL REFERENCES ${s}.sessions (id) ON DELETE CASCADE,
        id text NOT NULL,
        turn_number integer NOT NULL,
        operation text NOT NULL,
        args jsonb,
        status text NOT NULL,
        decision jsonb,
        reason text,
        created_at timestamptz NOT NULL DEFAULT now(),
        decided_at timestamptz,
        PRIMARY KEY (session_id, id)
      );
      CREATE INDEX approvals_status ON ${s}.approvals (status);

      CREATE TABLE ${s}.journal (
        session_id text NOT NULL REFERENCES ${s}.sessions (id) ON DELETE CASCADE,
        turn_number integer NOT NULL,
        seq integer NOT NULL,
        operation text NOT NULL,
        args text,
        state text NOT NULL CHECK (state IN ('started', 'done')),
        entry text,
        idempotency_key text,
        attempt integer NOT NULL DEFAULT 1,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (session_id, turn_number, seq)
      );

      CREATE TABLE ${s}.turns (
        id text PRIMARY KEY,
        session_id text NOT NULL,
        tenant text,
        kind text NOT NULL CHECK (kind IN ('turn', 'resume')),
        code text,
        status text NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
        result jsonb,
        attempt integer NOT NULL DEFAULT 0,
        claimed_by text,
        created_at timestamptz NOT NULL DEFAULT now(),
        started_at timestamptz,
        finished_at timestamptz
      );
      CREATE INDEX turns_session ON ${s}.turns (session_id);
      CREATE INDEX turns_status ON ${s}.turns (status);

      CREATE TABLE ${s}.tenant_caps (
        tenant text PRIMARY KEY,
        max_concurrent_turns integer,
        max_tokens bigint,
        max_cost double precision
      );
    `,
  },
  {
    version: 2,
    name: 'fleet turns: paused turns, turn numbers, submit keys; budget use per session',
    up: (s) => `
      ALTER TABLE ${s}.turns DROP CONSTRAINT IF EXISTS turns_status_check;
      ALTER TABLE ${s}.turns ADD CONSTRAINT turns_status_check
        CHECK (status IN ('queued', 'running', 'paused', 'done', 'failed'));
      ALTER TABLE ${s}.turns ADD COLUMN turn_number integer;
      ALTER TABLE ${s}.turns ADD COLUMN idempotency_key text;
      CREATE UNIQUE INDEX turns_submit_key ON ${s}.turns (session_id, idempotency_key)
        WHERE idempotency_key IS NOT NULL;
      CREATE INDEX turns_tenant_running ON ${s}.turns (tenant) WHERE status = 'running';
      ALTER TABLE ${s}.sessions ADD COLUMN tokens_used double precision NOT NULL DEFAULT 0;
      ALTER TABLE ${s}.sessions ADD COLUMN cost_used double precision NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 3,
    name: 'turns keep the order they were submitted in',
    up: (s) => `
      ALTER TABLE ${s}.turns ADD COLUMN seq bigserial;
      CREATE INDEX turns_session_order ON ${s}.turns (session_id, seq) WHERE status IN ('queued', 'running');
    `,
  },
  {
    // jsonb cannot hold a NUL character, which model-written strings may carry: these columns
    // keep the exact JSON text (cast to jsonb in queries where it has none).
    version: 4,
    name: 'audit entries, approval arguments and decisions, turn results as exact JSON text',
    up: (s) => `
      ALTER TABLE ${s}.audit ALTER COLUMN entry TYPE text USING entry::text;
      ALTER TABLE ${s}.approvals ALTER COLUMN args TYPE text USING args::text;
      ALTER TABLE ${s}.approvals ALTER COLUMN decision TYPE text USING decision::text;
      ALTER TABLE ${s}.turns ALTER COLUMN result TYPE text USING result::text;
    `,
  },
];

/**
 * Applies the migrations `schema` lacks, in order; returns the versions applied now.
 * @param {import('pg').Pool} pool
 * @param {string} schema an identifier already checked by the store
 * @returns {Promise<number[]>}
 */
async function migrate(pool, schema) {
  const s = `"${schema}"`;
  const applied = [];
  const client = await pool.connect();
  try {
    for (const migration of MIGRATIONS) {
      await client.query('begin');
      try {
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`quickrealm.migrate.${schema}`]);
        await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
        await client.query(
          `CREATE TABLE IF NOT EXISTS ${s}.schema_migrations (
             version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
        );
        const done = await client.query(`SELECT 1 FROM ${s}.schema_migrations WHERE version = $1`, [migration.version]);
        if (done.rowCount === 0) {
          await client.query(migration.up(s));
          await client.query(`INSERT INTO ${s}.schema_migrations (version, name) VALUES ($1, $2)`, [
            migration.version,
            migration.name,
          ]);
          applied.push(migration.version);
        }
        await client.query('commit');
      } catch (e) {
        await client.query('rollback').catch(() => {});
        throw e;
      }
    }
  } finally {
    client.release();
  }
  return applied;
}

module.exports = { MIGRATIONS, migrate };
