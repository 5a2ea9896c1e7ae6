'use strict';
// `quickrealm console --dir <folder> | --db <url> [--port N] [--host 127.0.0.1] [--base-path /]
// [--token-env NAME] [--snapshot-key-env NAME] [--schema S]`: the review console over a session
// folder or a PostgreSQL store. Read-only unless --token-env names a variable holding a token
// (16 characters or more); then every page and action needs it, as `Authorization: Bearer
// <token>` or the sign-in cookie set by `<base>/login`, and reviewers may approve, reject,
// commit and roll back.

const fs = require('node:fs');
const http = require('node:http');
const { createHash, createHmac, timingSafeEqual } = require('node:crypto');
const { ErrorCode } = require('../errors.js');
const { EXIT_FAILED, EXIT_INVALID, fail } = require('./io.js');

const LOGIN_COOKIE = 'quickrealm_login';
const MIN_TOKEN_CHARS = 16;
const MAX_LOGIN_FORM_BYTES = 4096;

/** @param {string} a @param {string} b */
function sameSecret(a, b) {
  // Digests first: equal lengths for timingSafeEqual, and the comparison leaks nothing of either.
  const da = createHash('sha256').update(a).digest();
  const db = createHash('sha256').update(b).digest();
  return timingSafeEqual(da, db);
}

/**
 * The console behind a token: `<base>/login` signs in (a cookie holding an HMAC of the token,
 * HttpOnly, SameSite=Strict), assets are public, everything else needs the bearer token or the
 * cookie.
 * @param {(request: Request) => Promise<Response>} handler
 * @param {string} token
 * @param {string} base
 */
function withToken(handler, token, base) {
  const { loginPage } = require('../console/views.js');
  const { CSP } = require('../console/handler.js');
  const login = createHmac('sha256', token).update('quickrealm-console-login').digest('base64url');
  const headers = {
    'content-security-policy': CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'cache-control': 'no-store',
  };
  /** @param {string | null} message @param {number} status */
  const loginResponse = (message, status) =>
    new Response(loginPage(base, message), {
      status,
      headers: { ...headers, 'content-type': 'text/html; charset=utf-8' },
    });

  /** @param {Request} request */
  const authorized = (request) => {
    const bearer = /^Bearer (.+)$/.exec(request.headers.get('authorization') ?? '')?.[1];
    if (bearer !== undefined && sameSecret(bearer, token)) return true;
    for (const part of (request.headers.get('cookie') ?? '').split(';')) {
      const [name, value] = part.trim().split('=');
      if (name === LOGIN_COOKIE && value && sameSecret(value, login)) return true;
    }
    return false;
  };
  return {
    authorized,
    /** @param {Request} request */
    handle: async (request) => {
      const url = new URL(request.url);
      if (url.pathname === `${base}/login`) {
        if (request.method !== 'POST') return loginResponse(null, 200);
        const site = request.headers.get('sec-fetch-site');
        if (site && site !== 'same-origin' && site !== 'none') return loginResponse('Sign in from this page.', 403);
        const body = await request.text();
        const given = body.length <= MAX_LOGIN_FORM_BYTES ? new URLSearchParams(body).get('token') : null;
        if (!given || !sameSecret(given, token)) return loginResponse('That token is not right.', 403);
        const secure = url.protocol === 'https:' ? '; Secure' : '';
        return new Response(null, {
          status: 303,
          headers: {
            ...headers,
            location: `${base}/`,
            'set-cookie': `${LOGIN_COOKIE}=${login}; Path=${base || '/'}; HttpOnly; SameSite=Strict${secure}`,
          },
        });
      }
      if (url.pathname.startsWith(`${base}/assets/`) || authorized(request)) return handler(request);
      if (url.pathname.startsWith(`${base}/api/`)) {
        return new Response(
          JSON.stringify({ error: { code: ErrorCode.Unauthorized, message: 'a bearer token is needed' } }),
          {
            status: 401,
            headers: { ...headers, 'content-type': 'application/json; charset=utf-8', 'www-authenticate': 'Bearer' },
          },
        );
      }
      return loginResponse(null, 401);
    },
  };
}

/**
 * @param {{ dir?: string, db?: string, schema?: string, port?: string, host?: string, basePath?: string,
 *   tokenEnv?: string, snapshotKeyEnv?: string }} options
 * @returns {Promise<void> | void}
 */
function commandConsole(options) {
  if ((options.dir === undefined) === (options.db === undefined))
    return fail(
      ErrorCode.InvalidInput,
      'quickrealm console needs --dir <folder> or --db <url> (one of them)',
      EXIT_INVALID,
    );
  if (options.schema !== undefined && options.db === undefined)
    return fail(ErrorCode.InvalidInput, '--schema goes with --db', EXIT_INVALID);
  const port = Number(options.port ?? 8787);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    return fail(ErrorCode.InvalidInput, `--port must be a port number (0 to 65535), not ${options.port}`, EXIT_INVALID);
  const host = options.host ?? '127.0.0.1';
  /** @param {string | undefined} name @param {string} what */
  const secretFrom = (name, what) => {
    if (name === undefined) return undefined;
    const value = process.env[name];
    if (!value || value.length < MIN_TOKEN_CHARS)
      throw Object.assign(new Error(`${what}: the variable ${name} must hold at least ${MIN_TOKEN_CHARS} characters`), {
        code: ErrorCode.InvalidInput,
      });
    return value;
  };
  let token;
  let snapshotKey;
  try {
    token = secretFrom(options.tokenEnv, '--token-env');
    snapshotKey = secretFrom(options.snapshotKeyEnv, '--snapshot-key-env');
  } catch (e) {
    return fail(ErrorCode.InvalidInput, /** @type {Error} */ (e).message, EXIT_INVALID);
  }
  if (options.dir !== undefined && !fs.statSync(options.dir, { throwIfNoEntry: false })?.isDirectory())
    return fail(ErrorCode.NotFound, `--dir ${options.dir} is not a folder`, EXIT_INVALID);
  return serveConsole({ ...options, port, host, token, snapshotKey });
}

/**
 * @param {{ dir?: string, db?: string, schema?: string, port: number, host: string, basePath?: string,
 *   token?: string, snapshotKey?: string }} options
 */
async function serveConsole(options) {
  const { createConsole, toNodeListener } = require('../console/index.js');
  /** @type {any} */
  let store;
  if (options.db !== undefined) {
    const { PostgresStore } = require('../fleet/index.js');
    store = new PostgresStore({ connectionString: options.db }, { schema: options.schema });
  } else {
    const { FolderStore } = require('../session/store.js');
    store = new FolderStore(/** @type {string} */ (options.dir));
  }
  let handler;
  let base;
  try {
    base = (options.basePath ?? '/').replace(/\/+$/, '');
    /** @type {{ authorized(request: Request): boolean, handle(request: Request): Promise<Response> } | null} */
    let gate = null;
    const consoleHandler = createConsole({
      store,
      snapshotKey: options.snapshotKey,
      basePath: options.basePath ?? '/',
      ...(options.token ? { authorize: (/** @type {Request} */ request) => gate?.authorized(request) === true } : {}),
    });
    gate = options.token ? withToken(consoleHandler, options.token, base) : null;
    handler = gate ? gate.handle : consoleHandler;
  } catch (e) {
    await store.close?.();
    const err = /** @type {{ code?: string, message?: string }} */ (e);
    return fail(err.code ?? ErrorCode.InvalidInput, err.message ?? String(e), EXIT_INVALID);
  }
  const server = http.createServer(toNodeListener(handler));
  try {
    await new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => resolve(undefined));
    });
  } catch (e) {
    await store.close?.();
    return fail(
      ErrorCode.Unavailable,
      `cannot listen on ${options.host}:${options.port}: ${/** @type {Error} */ (e).message}`,
      EXIT_FAILED,
    );
  }
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  process.stderr.write(
    `quickrealm console: http://${shown}:${address.port}${base}/ (${options.token ? 'sign in with the token' : 'read-only'})\n`,
  );
  await new Promise((resolve) => {
    const stop = () => server.close(() => resolve(undefined));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await store.close?.();
}

module.exports = { commandConsole, withToken };
