// The review console's handler without a browser: routes, escaping, headers, CSRF and
// authorization, the JSON API and the Node listener.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeEach, describe, expect, it } from 'vitest';
import { createConsole, toNodeListener } from '../../lib/console/index.js';
import { SessionManager } from '../../lib/session/index.js';
import { decodeSnapshot } from '../../lib/session/snapshot.js';
import { HOSTILE_IMG, HOSTILE_NAME, HOSTILE_SCRIPT, makeSessions } from './fixtures.js';

const ORIGIN = 'http://console.test';

let fixture: Awaited<ReturnType<typeof makeSessions>>;
beforeEach(async () => {
  fixture = await makeSessions();
});

function get(handler: (r: Request) => Promise<Response>, path: string, headers: Record<string, string> = {}) {
  return handler(new Request(`${ORIGIN}${path}`, { headers }));
}

/** The CSRF cookie a page sets and the token its forms carry. */
async function csrfOf(handler: (r: Request) => Promise<Response>, path: string) {
  const res = await get(handler, path);
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0];
  const token = /name="csrf" value="([^"]+)"/.exec(await res.text())?.[1];
  expect(cookie).toMatch(/^quickrealm_csrf=/);
  expect(token).toBeTruthy();
  return { cookie, token: token as string };
}

function post(handler: (r: Request) => Promise<Response>, path: string, form: Record<string, string>, headers = {}) {
  return handler(
    new Request(`${ORIGIN}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(form).toString(),
    }),
  );
}

/** The decisions on the paused turn's requests, as stored. */
async function decisions(id: string) {
  const stored = await fixture.manager.store.get(id);
  const snapshot = decodeSnapshot(stored?.bytes, undefined, { id, version: stored?.version, purpose: 'store' });
  snapshot.world.dispose();
  return snapshot.meta.pending.requests.map((r: { id: string; status: string }) => ({ id: r.id, status: r.status }));
}

/** A fresh manager's view of the store (nothing cached from the console's). */
function fresh() {
  return new SessionManager({ dir: fixture.dir, operations: fixture.operations });
}

describe('pages', () => {
  it('lists sessions with status, tenant and turns, filtered by status and tenant', async () => {
    const handler = createConsole({ manager: fixture.manager });
    const all = await (await get(handler, '/')).text();
    for (const id of ['edits', 'asks', 'broken']) expect(all).toContain(`href="/sessions/${id}"`);
    expect(all).toContain('status-paused');
    const paused = await (await get(handler, '/?status=paused')).text();
    expect(paused).toContain('/sessions/asks"');
    expect(paused).not.toContain('/sessions/edits"');
    const acme = await (await get(handler, '/?tenant=acme')).text();
    expect(acme).toContain('/sessions/edits"');
    expect(acme).toContain('/sessions/broken"');
    expect(acme).not.toContain('/sessions/asks"');
  });

  it('pages through the sessions', async () => {
    for (let i = 0; i < 55; i++) await fixture.manager.create({ id: `bulk-${String(i).padStart(2, '0')}` });
    const handler = createConsole({ manager: fixture.manager });
    const first = await (await get(handler, '/api/sessions')).json();
    expect(first.sessions).toHaveLength(50);
    const second = await (await get(handler, `/api/sessions?after=${first.next}`)).json();
    expect(second.sessions.map((s: { id: string }) => s.id)).not.toContain(first.sessions[0].id);
    expect(first.sessions.length + second.sessions.length).toBe(58);
    expect(second.next).toBeNull();
  });

  it('shows proposals as diffs and failed turns with their frame, all model text escaped', async () => {
    const handler = createConsole({ manager: fixture.manager });
    const res = await get(handler, '/sessions/edits');
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).not.toContain(HOSTILE_SCRIPT);
    expect(page).not.toContain(HOSTILE_IMG);
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).toContain(`<code class="path">src/&lt;img src=x onerror=alert(2)&gt;.js</code>`);
    expect(page).toContain('<span class="d-add">+export const greeting = &quot;&lt;script&gt;');
    expect(page).toContain('<span class="d-del">-export const greeting = &quot;hello&quot;;\n</span>');
    expect(page).toContain('EVAL_ERROR');
    expect(page).toContain('at line 2');
    expect(page).toMatch(/<pre class="frame">[^<]*null\.boom/);
  });

  it('shows a waiting approval with its arguments and the line of the turn that asked', async () => {
    const handler = createConsole({ manager: fixture.manager });
    const page = await (await get(handler, '/sessions/asks')).text();
    expect(page).toContain('<code class="operation">tickets.create</code>');
    expect(page).toContain('request 1.0, turn 1');
    expect(page).toContain('&quot;title&quot;: &quot;&lt;script&gt;alert(1)&lt;/script&gt;&quot;');
    expect(page).toContain('Asked at line 2 of turn 1');
    expect(page).not.toContain(HOSTILE_SCRIPT);
  });

  it('sends a strict Content-Security-Policy and no inline script', async () => {
    const handler = createConsole({ manager: fixture.manager });
    for (const path of ['/', '/sessions/edits', '/sessions/edits/audit', '/nowhere', '/api/sessions']) {
      const res = await get(handler, path);
      expect(res.headers.get('content-security-policy')).toBe(
        "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
      );
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      const text = await res.text();
      expect(text).not.toMatch(/<script(?![^>]*\ssrc=)/);
      expect(text).not.toMatch(/\sstyle=/);
    }
    const css = await get(handler, '/assets/console.css');
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
  });

  it('opens a session whose audit was changed, read-only, saying where the chain breaks', async () => {
    const handler = createConsole({ manager: fixture.manager, authorize: () => true });
    const res = await get(handler, '/sessions/broken');
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain('The audit chain is broken at entry 1');
    expect(page).not.toContain('method="post"');
    const audit = await (await get(handler, '/sessions/broken/audit')).text();
    expect(audit).toContain('Chain broken at entry 1');
    expect(audit).toContain('<tr class="broken"><td class="n">1</td>');
    const intact = await (await get(handler, '/sessions/edits/audit')).text();
    expect(intact).toContain('Chain intact: 2 entries verified.');
  });

  it('downloads the stored snapshot', async () => {
    const handler = createConsole({ manager: fixture.manager });
    const res = await get(handler, '/sessions/edits/snapshot');
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="edits-v\d+\.session\.zip"$/);
    const stored = await fixture.manager.store.get('edits');
    expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(stored?.bytes ?? []))).toBe(true);
  });

  it('mounts under a base path', async () => {
    const handler = createConsole({ manager: fixture.manager, basePath: '/review/' });
    const page = await (await get(handler, '/review')).text();
    expect(page).toContain('href="/review/sessions/edits"');
    expect(page).toContain('href="/review/assets/console.css"');
    expect((await get(handler, '/sessions/edits')).status).toBe(404);
    expect((await get(handler, '/review/sessions/edits')).status).toBe(200);
    expect(() => createConsole({ manager: fixture.manager, basePath: 'review' })).toThrow(/basePath/);
  });

  it('answers 404 for an unknown session and refuses an id that cannot name one', async () => {
    const handler = createConsole({ manager: fixture.manager });
    expect((await get(handler, '/sessions/nope')).status).toBe(404);
    expect((await get(handler, '/sessions/..%2F..%2Fetc')).status).toBe(404);
    expect((await get(handler, '/api/sessions/nope')).status).toBe(404);
    expect((await get(handler, '/sessions/%E0%A4%A')).status).toBe(400);
    expect((await get(handler, '/api/sessions/%E0%A4%A')).status).toBe(400);
    expect((await get(handler, '/sessions/%25E0%25A4')).status).toBe(404);
  });
});

describe('actions', () => {
  it('is read-only without authorize: no forms, every POST refused', async () => {
    const handler = createConsole({ manager: fixture.manager });
    const page = await (await get(handler, '/sessions/asks')).text();
    expect(page).not.toContain('<form method="post"');
    expect(page).toContain('read-only');
    const res = await post(handler, '/sessions/asks/approve', { request: '1.0', csrf: 'x' });
    expect(res.status).toBe(403);
    expect((await fresh().get('asks'))?.pendingApprovals.map((r) => r.id)).toEqual(['1.0']);
  });

  it('approves with the CSRF token, and refuses a missing, wrong or cross-site one', async () => {
    const handler = createConsole({ manager: fixture.manager, authorize: () => true });
    const { cookie, token } = await csrfOf(handler, '/sessions/asks');
    const version = await fixture.manager.store.version?.('asks');
    expect((await post(handler, '/sessions/asks/approve', { request: '1.0' }, { cookie })).status).toBe(403);
    expect((await post(handler, '/sessions/asks/approve', { request: '1.0', csrf: token })).status).toBe(403);
    const wrong = `${token.slice(0, -2)}AA`;
    expect((await post(handler, '/sessions/asks/approve', { request: '1.0', csrf: wrong }, { cookie })).status).toBe(
      403,
    );
    const crossSite = { cookie, 'sec-fetch-site': 'cross-site' };
    expect((await post(handler, '/sessions/asks/approve', { request: '1.0', csrf: token }, crossSite)).status).toBe(
      403,
    );
    expect(await fixture.manager.store.version?.('asks')).toBe(version);

    const ok = await post(handler, '/sessions/asks/approve', { request: '1.0', csrf: token }, { cookie });
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toBe('/sessions/asks?done=approve&request=1.0');
    expect((await fresh().get('asks'))?.pendingApprovals).toEqual([]);
    expect(await decisions('asks')).toEqual([{ id: '1.0', status: 'approved' }]);
  });

  it('rejects with a reason', async () => {
    const handler = createConsole({ manager: fixture.manager, authorize: () => true });
    const { cookie, token } = await csrfOf(handler, '/sessions/asks');
    const res = await post(handler, '/sessions/asks/reject', { request: '1.0', reason: 'no', csrf: token }, { cookie });
    expect(res.status).toBe(303);
    expect((await fresh().get('asks'))?.pendingApprovals).toEqual([]);
    expect(await decisions('asks')).toEqual([{ id: '1.0', status: 'rejected' }]);
  });

  it('commits and rolls back proposals', async () => {
    const handler = createConsole({ manager: fixture.manager, authorize: () => true });
    const { cookie, token } = await csrfOf(handler, '/sessions/edits');
    expect((await post(handler, '/sessions/edits/commit', { csrf: token }, { cookie })).status).toBe(303);
    const committed = await fresh().get('edits');
    expect(committed?.proposals()).toEqual([]);
    expect(committed?.workspace.readText(HOSTILE_NAME)).toContain(HOSTILE_SCRIPT);

    const asks = await fresh().get('asks');
    expect(asks?.status).toBe('paused');
    const refused = await post(handler, '/sessions/asks/rollback', { csrf: token }, { cookie });
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain('SESSION_STATE');
  });

  it('asks authorize for each action and refuses when it says no', async () => {
    const asked: [string, string][] = [];
    const handler = createConsole({
      manager: fixture.manager,
      authorize: (request, action, id) => {
        asked.push([action, id]);
        return request.headers.get('x-reviewer') === 'alice';
      },
    });
    const { cookie, token } = await csrfOf(handler, '/sessions/edits');
    const version = await fixture.manager.store.version?.('edits');
    expect((await post(handler, '/sessions/edits/commit', { csrf: token }, { cookie })).status).toBe(403);
    expect(await fixture.manager.store.version?.('edits')).toBe(version);
    expect(asked).toEqual([['commit', 'edits']]);
    const ok = await post(handler, '/sessions/edits/commit', { csrf: token }, { cookie, 'x-reviewer': 'alice' });
    expect(ok.status).toBe(303);
  });

  it('refuses actions on a session whose audit is broken', async () => {
    const handler = createConsole({ manager: fixture.manager, authorize: () => true });
    const { cookie, token } = await csrfOf(handler, '/sessions/edits');
    const res = await post(handler, '/sessions/broken/rollback', { csrf: token }, { cookie });
    expect(res.status).toBe(409);
    expect(await res.text()).toContain('AUDIT_TAMPERED');
  });
});

describe('JSON API', () => {
  it('answers sessions, one session, its audit and approvals', async () => {
    const handler = createConsole({ manager: fixture.manager });
    const list = await (await get(handler, '/api/sessions?status=paused')).json();
    expect(list.sessions.map((s: { id: string }) => s.id)).toEqual(['asks']);
    expect(list.sessions[0]).toMatchObject({ status: 'paused', tenant: 'globex', turnNumber: 1 });
    const edits = await (await get(handler, '/api/sessions/edits')).json();
    expect(edits.proposals.files.map((f: { path: string }) => f.path).sort()).toEqual(
      [HOSTILE_NAME, 'src/app.js'].sort(),
    );
    expect(edits.turns[1].error).toMatchObject({ code: 'EVAL_ERROR', line: 2 });
    expect(edits.audit).toEqual({ ok: true, entries: 2 });
    const audit = await (await get(handler, '/api/sessions/broken/audit')).json();
    expect(audit.verification).toMatchObject({ ok: false, brokenAt: 1 });
    expect(audit.entries[0].seq).toBe(1);
    const approvals = await (await get(handler, '/api/sessions/asks/approvals')).json();
    expect(approvals.approvals[0]).toMatchObject({
      id: '1.0',
      operation: 'tickets.create',
      args: [{ title: HOSTILE_SCRIPT, body: HOSTILE_IMG }],
      askedAt: [{ line: 2 }],
    });
  });

  it("answers the inbox in Agent Inbox's HumanInterrupt shape", async () => {
    const handler = createConsole({ manager: fixture.manager });
    const inbox = await (await get(handler, '/api/inbox')).json();
    expect(inbox.items).toHaveLength(1);
    const [item] = inbox.items;
    expect(item).toMatchObject({ sessionId: 'asks', requestId: '1.0' });
    expect(item.interrupt.action_request).toEqual({
      action: 'tickets.create',
      args: { arguments: [{ title: HOSTILE_SCRIPT, body: HOSTILE_IMG }] },
    });
    expect(item.interrupt.config).toEqual({
      allow_ignore: true,
      allow_respond: false,
      allow_edit: false,
      allow_accept: true,
    });
    expect(item.interrupt.description).toContain('request 1.0');
  });
});

describe('toNodeListener', () => {
  it('serves the handler over HTTP, with its cookies, and refuses an oversized body', async () => {
    const server = createServer(toNodeListener(createConsole({ manager: fixture.manager, authorize: () => true })));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const page = await fetch(`${base}/sessions/edits`);
      expect(page.status).toBe(200);
      expect(page.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Strict/);
      expect(await page.text()).toContain('Commit');
      const big = await fetch(`${base}/sessions/edits/commit`, { method: 'POST', body: 'x'.repeat(100_000) });
      expect(big.status).toBe(413);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('quickrealm/console entry', () => {
  it('is exported to require and import alike, with inspectSnapshot', async () => {
    const esm = await import('../../lib/console/index.mjs');
    const cjs = await import('../../lib/console/index.js');
    expect(esm.createConsole).toBe(cjs.createConsole);
    expect(esm.toNodeListener).toBe(cjs.toNodeListener);
    expect(esm.inspectSnapshot).toBe((await import('../../lib/session/index.js')).inspectSnapshot);
    const pkg = await import('../../package.json', { with: { type: 'json' } });
    expect(pkg.default.exports['./console']).toEqual({
      types: './lib/console/index.d.ts',
      import: './lib/console/index.mjs',
      require: './lib/console/index.js',
      default: './lib/console/index.js',
    });
  });
});
