'use strict';
// The review console as a Fetch-API handler: routes under a base path, pages and JSON, static
// assets, and the reviewer's actions (approve, reject, commit, roll back) as POST forms that
// need the host's `authorize` and a CSRF token. Every response carries a strict
// Content-Security-Policy; no page has inline script or style.

const { createHmac, randomBytes, timingSafeEqual } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { ErrorCode } = require('../errors.js');
const { sessionError } = require('../session/errors.js');
const { ConsoleSource, validId, PAGE_SIZE } = require('./source.js');
const views = require('./views.js');
const { sessionJson, approvalsJson, inboxItems, auditSlice } = require('./api.js');

const CSP =
  "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
const SECURITY_HEADERS = {
  'content-security-policy': CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};
const CSRF_COOKIE = 'quickrealm_csrf';
/** A form body is a few fields; anything larger is refused unread. */
const MAX_FORM_BYTES = 16 * 1024;
/** Sessions of the inbox per page (each is read and inspected). */
const INBOX_PAGE = 20;
const ACTIONS = /** @type {const} */ (['approve', 'reject', 'commit', 'rollback']);

/** @type {Record<string, { type: string, body: Buffer }>} */
const ASSETS = Object.fromEntries(
  [
    ['console.css', 'text/css; charset=utf-8'],
    ['console.js', 'text/javascript; charset=utf-8'],
  ].map(([name, type]) => [name, { type, body: fs.readFileSync(path.join(__dirname, 'assets', name)) }]),
);

/**
 * @typedef {'approve' | 'reject' | 'commit' | 'rollback'} ConsoleAction
 * @typedef {{ manager?: import('../session/manager.js').SessionManager, store?: any,
 *   snapshotKey?: Uint8Array | string, operations?: any, basePath?: string,
 *   authorize?: (request: Request, action: ConsoleAction, sessionId: string) => boolean | Promise<boolean>,
 *   fleet?: { approve: Function, reject: Function }, csrfSecret?: Uint8Array | string }} ConsoleOptions
 */

/** @param {unknown} basePath */
function normalizeBase(basePath) {
  if (basePath === undefined) return '';
  if (typeof basePath !== 'string' || !/^\/[\w\-./~]*$/.test(basePath) || basePath.includes('//'))
    throw sessionError(
      ErrorCode.InvalidInput,
      `createConsole: basePath must be a path starting with / (got ${JSON.stringify(basePath)})`,
      TypeError,
    );
  return basePath.replace(/\/+$/, '');
}

/**
 * @param {BodyInit | null} body
 * @param {number} status
 * @param {Record<string, string>} headers
 */
function respond(body, status, headers) {
  return new Response(body, { status, headers: { ...SECURITY_HEADERS, ...headers } });
}

/** @param {unknown} value @param {number} [status] */
function json(value, status = 200) {
  return respond(JSON.stringify(value), status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
  });
}

/** @param {string} text @param {number} [status] @param {Record<string, string>} [headers] */
function htmlResponse(text, status = 200, headers = {}) {
  return respond(text, status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', ...headers });
}

/** @param {Request} request */
function cookies(request) {
  /** @type {Map<string, string>} */
  const out = new Map();
  for (const part of (request.headers.get('cookie') ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) out.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  return out;
}

/** A path segment decoded, or null when it is not valid percent-encoding. @param {string} segment */
function decodeSegment(segment) {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/** The status an error's code answers with. @param {unknown} e */
function statusOf(e) {
  switch (/** @type {{ code?: string }} */ (e)?.code) {
    case ErrorCode.NotFound:
      return 404;
    case ErrorCode.InvalidInput:
      return 400;
    case ErrorCode.SessionState:
    case ErrorCode.SessionConflict:
    case ErrorCode.Conflict:
    case ErrorCode.AuditTampered:
    case ErrorCode.SnapshotTampered:
      return 409;
    default:
      return 500;
  }
}

/**
 * Reads a urlencoded form, refusing one larger than MAX_FORM_BYTES.
 * @param {Request} request
 */
async function readForm(request) {
  const length = Number(request.headers.get('content-length') ?? 0);
  if (length > MAX_FORM_BYTES) return null;
  if (!request.body) return new URLSearchParams();
  const reader = request.body.getReader();
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_FORM_BYTES) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/**
 * The review console (DESIGN §9) as `(Request) => Promise<Response>`.
 * @param {ConsoleOptions} options
 * @returns {(request: Request) => Promise<Response>}
 */
function createConsole(options) {
  if (options === null || typeof options !== 'object' || (!options.manager && !options.store))
    throw sessionError(ErrorCode.InvalidInput, 'createConsole({ manager | store, ... })', TypeError);
  if (options.authorize !== undefined && typeof options.authorize !== 'function')
    throw sessionError(ErrorCode.InvalidInput, 'createConsole: authorize must be a function', TypeError);
  const base = normalizeBase(options.basePath);
  const source = new ConsoleSource(options);
  const authorize = options.authorize;
  const secret = options.csrfSecret ?? randomBytes(32);
  const cookiePath = base || '/';

  /** @param {string} nonce */
  const tokenFor = (nonce) => createHmac('sha256', secret).update(`csrf\n${nonce}`).digest('base64url');

  /**
   * The page context of a request, with the CSRF cookie to set when the browser has none.
   * @param {Request} request
   * @param {string | null} [notice]
   */
  const contextOf = (request, notice = null) => {
    if (!authorize) return { ctx: { base, csrf: null, canAct: false, notice }, headers: {} };
    let nonce = cookies(request).get(CSRF_COOKIE);
    /** @type {Record<string, string>} */
    const headers = {};
    if (!nonce || !/^[\w-]{43}$/.test(nonce)) {
      nonce = randomBytes(32).toString('base64url');
      const secure = new URL(request.url).protocol === 'https:' ? '; Secure' : '';
      headers['set-cookie'] = `${CSRF_COOKIE}=${nonce}; Path=${cookiePath}; HttpOnly; SameSite=Strict${secure}`;
    }
    return { ctx: { base, csrf: tokenFor(nonce), canAct: true, notice }, headers };
  };

  /** @param {Request} request @param {number} status @param {string} message */
  const errorPage = (request, status, message) => {
    const { ctx, headers } = contextOf(request);
    return htmlResponse(views.errorPage(ctx, status, message), status, headers);
  };

  /**
   * Whether a POST carries the token of its CSRF cookie and does not come from another site.
   * @param {Request} request
   * @param {URLSearchParams} form
   */
  const csrfValid = (request, form) => {
    const site = request.headers.get('sec-fetch-site');
    if (site && site !== 'same-origin' && site !== 'none') return false;
    const nonce = cookies(request).get(CSRF_COOKIE);
    const given = form.get('csrf');
    if (!nonce || !given) return false;
    const expected = Buffer.from(tokenFor(nonce));
    const actual = Buffer.from(given);
    return actual.length === expected.length && timingSafeEqual(actual, expected);
  };

  /**
   * @param {Request} request
   * @param {string} id
   * @param {string} action
   */
  const act = async (request, id, action) => {
    if (!authorize) return errorPage(request, 403, 'This console is read-only.');
    if (!(/** @type {readonly string[]} */ (ACTIONS).includes(action)))
      return errorPage(request, 404, 'No such action.');
    const form = await readForm(request);
    if (!form) return errorPage(request, 413, 'The form is too large.');
    if (!csrfValid(request, form))
      return errorPage(
        request,
        403,
        'The form is stale or came from another site (CSRF check failed). Reload the page and try again.',
      );
    if ((await authorize(request, /** @type {ConsoleAction} */ (action), id)) !== true)
      return errorPage(request, 403, `You may not ${action} in session ${id}.`);
    if ((action === 'approve' || action === 'reject') && !form.get('request'))
      return errorPage(request, 400, 'Which request? The form has no request id.');
    try {
      await source.act(/** @type {ConsoleAction} */ (action), id, {
        request: form.get('request') ?? undefined,
        reason: (form.get('reason') ?? '').slice(0, 500),
      });
    } catch (e) {
      const err = /** @type {{ code?: string, message?: string }} */ (e);
      return errorPage(request, statusOf(e), `${err?.code ? `${err.code}: ` : ''}${err?.message ?? String(e)}`);
    }
    const done = new URLSearchParams({ done: action });
    const requestId = form.get('request');
    if (requestId) done.set('request', requestId);
    return respond(null, 303, {
      location: `${base}/sessions/${encodeURIComponent(id)}?${done}`,
      'cache-control': 'no-store',
    });
  };

  /**
   * @param {string} rest the path under `<base>/api`
   * @param {URL} url
   */
  const api = async (rest, url) => {
    const q = url.searchParams;
    if (rest === '/sessions') {
      const page = await source.list({
        status: q.get('status') ?? undefined,
        tenant: q.get('tenant') ?? undefined,
        after: q.get('after') ?? undefined,
        limit: Number(q.get('limit') ?? PAGE_SIZE),
      });
      return json(page);
    }
    if (rest === '/inbox') {
      const page = await source.list({ status: 'paused', after: q.get('after') ?? undefined, limit: INBOX_PAGE });
      const items = [];
      for (const s of page.sessions) {
        const view = await source.inspect(s.id).catch(() => null);
        if (view) items.push(...inboxItems(view));
      }
      return json({ items, next: page.next });
    }
    const m = /^\/sessions\/([^/]+)(\/audit|\/approvals)?$/.exec(rest);
    if (!m) return json({ error: { code: ErrorCode.NotFound, message: 'no such API path' } }, 404);
    const id = decodeSegment(m[1]) ?? '';
    const view = validId(id) ? await source.inspect(id) : null;
    if (!view) return json({ error: { code: ErrorCode.NotFound, message: `no session ${id}` } }, 404);
    if (m[2] === '/audit') {
      const slice = auditSlice(view.audit.entries, Number(q.get('from') ?? 1));
      return json({ verification: view.audit.verification, ...slice });
    }
    if (m[2] === '/approvals') return json({ approvals: approvalsJson(view) });
    return json(sessionJson(view));
  };

  /** @param {Request} request */
  const route = async (request) => {
    const url = new URL(request.url);
    let pathname;
    try {
      pathname = decodeURI(url.pathname);
    } catch {
      return errorPage(request, 400, 'The address is not valid.');
    }
    if (base && pathname !== base && !pathname.startsWith(`${base}/`)) return errorPage(request, 404, 'Not here.');
    const rest = pathname.slice(base.length) || '/';
    const method = request.method.toUpperCase();
    const session = /^\/sessions\/([^/]+)(?:\/([a-z]+))?\/?$/.exec(rest);

    if (method === 'POST') {
      if (!session?.[2]) return errorPage(request, 405, 'Only actions are posted.');
      const id = decodeSegment(session[1]);
      if (id === null || !validId(id)) return errorPage(request, 404, 'No such session.');
      return act(request, id, session[2]);
    }
    if (method !== 'GET' && method !== 'HEAD') return errorPage(request, 405, 'Method not allowed.');

    if (rest.startsWith('/assets/')) {
      const asset = ASSETS[rest.slice('/assets/'.length)];
      if (!asset) return errorPage(request, 404, 'No such asset.');
      return respond(new Uint8Array(asset.body), 200, { 'content-type': asset.type, 'cache-control': 'no-cache' });
    }
    if (rest === '/api' || rest.startsWith('/api/')) return api(rest.slice(4), url);
    if (rest === '/') {
      const filter = {
        status: url.searchParams.get('status') || undefined,
        tenant: url.searchParams.get('tenant') || undefined,
        after: url.searchParams.get('after') || undefined,
      };
      const result = await source.list(filter);
      const { ctx, headers } = contextOf(request);
      return htmlResponse(views.listPage(ctx, result, filter), 200, headers);
    }
    if (!session) return errorPage(request, 404, 'No such page.');
    const id = decodeSegment(session[1]);
    if (id === null || !validId(id)) return errorPage(request, 404, 'No such session.');
    const sub = session[2];
    if (sub === 'snapshot') {
      const stored = await source.snapshot(id);
      if (!stored) return errorPage(request, 404, `No session ${id}.`);
      return respond(new Uint8Array(stored.bytes), 200, {
        'content-type': 'application/zip',
        'content-disposition': `attachment; filename="${id}-v${stored.version}.session.zip"`,
        'cache-control': 'no-store',
      });
    }
    if (sub !== undefined && sub !== 'audit') return errorPage(request, 404, 'No such page.');
    const view = await source.inspect(id);
    if (!view) return errorPage(request, 404, `No session ${id}.`);
    const done = url.searchParams.get('done');
    const notice =
      done && ACTIONS.includes(/** @type {any} */ (done)) ? noticeOf(done, url.searchParams.get('request')) : null;
    const { ctx, headers } = contextOf(request, notice);
    if (sub === 'audit') {
      const slice = auditSlice(view.audit.entries, Number(url.searchParams.get('from') ?? 1));
      return htmlResponse(views.auditPage(ctx, view, slice), 200, headers);
    }
    return htmlResponse(views.sessionPage(ctx, view), 200, headers);
  };

  return async (request) => {
    try {
      const response = await route(request);
      return request.method.toUpperCase() === 'HEAD' ? new Response(null, response) : response;
    } catch (e) {
      const err = /** @type {{ code?: string, message?: string }} */ (e);
      const message = `${err?.code ? `${err.code}: ` : ''}${err?.message ?? String(e)}`;
      const status = statusOf(e);
      if (new URL(request.url).pathname.startsWith(`${base}/api/`))
        return json({ error: { code: err?.code ?? ErrorCode.Internal, message } }, status);
      return errorPage(request, status, message);
    }
  };
}

/** @param {string} action @param {string | null} request */
function noticeOf(action, request) {
  switch (action) {
    case 'approve':
      return `Request ${request ?? ''} approved.`;
    case 'reject':
      return `Request ${request ?? ''} rejected.`;
    case 'commit':
      return 'Proposals committed.';
    default:
      return 'Proposals rolled back.';
  }
}

module.exports = { createConsole, CSP };
