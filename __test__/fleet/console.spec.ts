// The review console over a PostgresStore: listing filtered in SQL, a session's page, and an
// approval decided through the Fleet (the decision and the resuming turn in one transaction).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConsole } from '../../lib/console/index.js';
import { Fleet, PostgresStore } from '../../lib/fleet/index.js';
import { policies, SessionManager } from '../../lib/session/index.js';
import { freshDatabase } from './helpers';

const operations = {
  'tickets.create': { handler: (ticket: unknown) => ({ id: 7, ticket }), needsApproval: true },
};
const policy = {
  ...policies.SAFE_EDIT,
  allowedOperations: [...(policies.SAFE_EDIT.allowedOperations ?? []), 'tickets.create'],
};
const ORIGIN = 'http://console.test';

describe('review console over PostgreSQL', () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let store: PostgresStore;
  let fleet: Fleet;
  let handler: (request: Request) => Promise<Response>;
  beforeAll(async () => {
    db = await freshDatabase('console');
    store = new PostgresStore({ connectionString: db.url });
    await store.migrate();
    const manager = new SessionManager({ store, operations });
    const edits = await manager.create({ id: 'edits', policy, tenant: 'acme' });
    edits.workspace.writeFile('src/app.js', 'export const a = 1;\n');
    await edits.executeTurn("world.write('src/app.js', 'export const a = \"<b>2</b>\";\\n');");
    const asks = await manager.create({ id: 'asks', policy, tenant: 'globex' });
    await asks.executeTurn("const n = 1;\ntickets.create({ title: '<script>alert(1)</script>' });");
    fleet = new Fleet({ store, operations });
    handler = createConsole({ manager, fleet, authorize: () => true });
  });
  afterAll(async () => {
    await fleet?.stop();
    await store?.close();
    await db?.drop();
  });

  const get = (path: string, headers: Record<string, string> = {}) =>
    handler(new Request(`${ORIGIN}${path}`, { headers }));

  it('lists sessions filtered by tenant and status', async () => {
    const all = await (await get('/api/sessions')).json();
    expect(all.sessions.map((s: { id: string }) => s.id)).toEqual(['asks', 'edits']);
    const acme = await (await get('/api/sessions?tenant=acme')).json();
    expect(acme.sessions).toMatchObject([{ id: 'edits', tenant: 'acme', status: 'active', turnNumber: 1 }]);
    const paused = await (await get('/?status=paused')).text();
    expect(paused).toContain('href="/sessions/asks"');
    expect(paused).not.toContain('href="/sessions/edits"');
  });

  it('shows a session with its diff and its intact audit', async () => {
    const page = await (await get('/sessions/edits')).text();
    expect(page).toContain('<span class="d-add">+export const a = &quot;&lt;b&gt;2&lt;/b&gt;&quot;;\n</span>');
    expect(page).toContain('intact (1 entries)');
  });

  it('approves through the fleet: the decision and the resuming turn are stored together', async () => {
    const page = await get('/sessions/asks');
    const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0];
    const html = await page.text();
    expect(html).toContain('Asked at line 2 of turn 1');
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
    const res = await handler(
      new Request(`${ORIGIN}/sessions/asks/approve`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf, request: '1.0' }).toString(),
      }),
    );
    expect(res.status).toBe(303);
    expect((await store.approvals('asks')).map((a) => [a.id, a.status])).toEqual([['1.0', 'approved']]);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query(
        `SELECT kind, status FROM quickrealm.turns WHERE session_id = 'asks' AND kind = 'resume'`,
      );
      expect(rows).toEqual([{ kind: 'resume', status: 'queued' }]);
    } finally {
      await client.end();
    }
  });
});
