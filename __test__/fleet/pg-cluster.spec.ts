// The throwaway cluster the fleet tests stand on (scripts/pg-cluster.js): it starts, survives an
// immediate restart with its data, and stop() removes its folder; without PostgreSQL it says so.
import { existsSync } from 'node:fs';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { startCluster } from '../../scripts/pg-cluster.js';

async function query(url: string, text: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows;
  } finally {
    await client.end();
  }
}

describe('scripts/pg-cluster.js', () => {
  it('starts a cluster that keeps committed data over an immediate restart, and removes it on stop', async () => {
    const cluster = await startCluster();
    try {
      expect(cluster.url).toBe(`postgres://postgres@127.0.0.1:${cluster.port}/postgres`);
      expect(cluster.startMs).toBeGreaterThan(0);
      await query(cluster.url, 'CREATE TABLE kept (n int); INSERT INTO kept VALUES (7)');
      await cluster.restart({ mode: 'immediate' });
      expect(await query(cluster.url, 'SELECT n FROM kept')).toEqual([{ n: 7 }]);
      const status = await cluster.pgCtl(['status']);
      expect(status.stdout).toMatch(/server is running/);
    } finally {
      await cluster.stop();
    }
    expect(existsSync(cluster.dir)).toBe(false);
    await expect(query(cluster.url, 'SELECT 1')).rejects.toThrow(/ECONNREFUSED/);
  });

  it('says PostgreSQL is not installed when its programs are missing', async () => {
    await expect(startCluster({ binDir: '/nonexistent/bin' })).rejects.toThrow(
      /PostgreSQL is not installed: .*initdb, pg_ctl.* in \/nonexistent\/bin; install the Debian package `postgresql`/,
    );
  });
});
