// The fleet suite's ground: it runs on Node 24, the addon built for the machine's Node loads
// there (N-API), and the suite's PostgreSQL cluster answers.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as fleet from '../../lib/fleet/index.js';
import { runSync } from '../../lib/index.js';
import { freshDatabase } from './helpers';

describe('fleet suite runtime', () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  beforeAll(async () => {
    db = await freshDatabase('runtime');
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('runs on Node 24', () => {
    expect(process.versions.node.split('.')[0]).toBe('24');
  });

  it('loads the native addon and runs a realm', () => {
    expect(runSync('return 1 + 2').value).toBe(3);
  });

  it('has a database of its own on the cluster', async () => {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT current_database() AS name, current_setting($1) AS fsync', ['fsync']);
      expect(rows[0]).toEqual({ name: db.name, fsync: 'off' });
    } finally {
      await client.end();
    }
  });

  it('exports quickrealm/fleet to require and import alike', async () => {
    const esm = await import('../../lib/fleet/index.mjs');
    expect(esm.PostgresStore).toBe(fleet.PostgresStore);
    expect(esm.importSessions).toBe(fleet.importSessions);
    const pkg = await import('../../package.json', { with: { type: 'json' } });
    expect(pkg.default.exports['./fleet']).toEqual({
      types: './lib/fleet/index.d.ts',
      import: './lib/fleet/index.mjs',
      require: './lib/fleet/index.js',
      default: './lib/fleet/index.js',
    });
  });
});
