// Databases for fleet tests: each test file (or test) takes a fresh database of the suite's
// cluster, so files running at once never see each other's tables.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

/** The URL of the suite's cluster (its `postgres` database). */
export function clusterUrl(): string {
  const url = inject('pgUrl') ?? process.env.QUICKREALM_TEST_PG_URL;
  if (!url)
    throw new Error('the fleet suite runs through scripts/test-fleet.js (vitest.fleet.config.ts starts the cluster)');
  return url;
}

/** Creates an empty database on the suite's cluster; returns its URL and a function dropping it. */
export async function freshDatabase(prefix = 'test'): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const base = clusterUrl();
  const name = `${prefix.replace(/[^a-z0-9_]/gi, '_').toLowerCase()}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
