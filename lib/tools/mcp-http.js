'use strict';
// An MCP server over the SDK's Streamable HTTP transport, stateless: every POST gets a new
// server and transport, so no state lives between requests (tools name their workspace or
// session in their arguments) and any number of clients or processes can serve the same tools.
// Answers are JSON, not event streams. The SDK's transport checks the Host and Origin headers
// (against DNS rebinding: a web page that makes its own name resolve to 127.0.0.1 must not reach
// a local server) and caps the request body; a bearer token, when one is set, is checked first.

const http = require('node:http');
const { createHash, timingSafeEqual } = require('node:crypto');
const { loadPeer } = require('./peers.js');

/** The largest request body read (a `fs_write` of a big file fits; a flood does not). */
const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** The path the server answers on; anything else is 404. */
const MCP_PATH = '/mcp';

/** @param {string} host */
const isLoopback = (host) => host === '127.0.0.1' || host === 'localhost' || host === '::1' || host === '[::1]';

/** @param {string} host */
const isWildcard = (host) => host === '0.0.0.0' || host === '::' || host === '[::]';

/**
 * The Host header values a client may send: the names of a loopback address, or the host the
 * server was told to listen on, each with the port. Listening on every address, the server
 * cannot know the name clients use: no Host check (the CLI requires a token then).
 * @param {string} host
 * @param {number} port
 * @returns {string[]}
 */
function allowedHosts(host, port) {
  if (isWildcard(host)) return [];
  const names = isLoopback(host) ? ['127.0.0.1', 'localhost', '[::1]'] : [host.includes(':') ? `[${host}]` : host];
  return names.map((name) => `${name}:${port}`);
}

/**
 * Compares a presented token with the expected one in time that does not depend on where they
 * differ (both hashed first, so their lengths do not leak either).
 * @param {string} presented
 * @param {string} expected
 */
function sameToken(presented, expected) {
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/**
 * @param {import('node:http').ServerResponse} res
 * @param {number} status
 * @param {string} message
 * @param {Record<string, string>} [headers]
 */
function refuse(res, status, message, headers = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

/**
 * Serves MCP over HTTP at `http://<host>:<port>/mcp` until `close()`.
 * @param {{ createServer: () => any, host?: string, port?: number, token?: string,
 *   maxBodyBytes?: number, onError?: (e: Error) => void }} options
 *   `createServer`: a new, unconnected McpServer (called once per request); `port` 0 picks a free one
 * @returns {Promise<{ url: string, port: number, close(): Promise<void> }>}
 */
async function serveMcpHttp(options) {
  const { StreamableHTTPServerTransport } = loadPeer(
    '@modelcontextprotocol/sdk/server/streamableHttp.js',
    '@modelcontextprotocol/sdk',
    'quickrealm mcp --http',
  );
  const host = options.host ?? '127.0.0.1';
  const token = options.token;
  const maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
  /** @type {{ hosts: string[], origins: string[] }} */
  let allowed = { hosts: [], origins: [] };

  /**
   * @param {import('node:http').IncomingMessage} req
   * @param {import('node:http').ServerResponse} res
   */
  async function handle(req, res) {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== MCP_PATH) return refuse(res, 404, `not found: MCP is served at ${MCP_PATH}`);
    if (token !== undefined) {
      const header = req.headers.authorization ?? '';
      const match = /^Bearer ([^\s]+)$/i.exec(header);
      if (!match || !sameToken(match[1] ?? '', token)) {
        return refuse(res, 401, 'a valid bearer token is required', {
          'www-authenticate': 'Bearer realm="quickrealm", error="invalid_token"',
        });
      }
    }
    // Stateless: no event stream to open (GET) and no session to end (DELETE).
    if (req.method !== 'POST') return refuse(res, 405, 'this stateless server answers POST only', { allow: 'POST' });
    const server = options.createServer();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      enableDnsRebindingProtection: true,
      allowedHosts: allowed.hosts,
      allowedOrigins: allowed.origins,
      maxRequestBodySize: maxBodyBytes,
    });
    res.on('close', () => {
      transport.close().catch(() => {});
      server.close().catch(() => {});
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  }

  const httpServer = http.createServer((req, res) => {
    handle(req, res).catch((e) => {
      options.onError?.(e instanceof Error ? e : new Error(String(e)));
      if (!res.headersSent) refuse(res, 500, 'internal error');
      else res.end();
    });
  });
  await new Promise((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(options.port ?? 0, host, () => {
      httpServer.off('error', reject);
      resolve(undefined);
    });
  });
  const address = /** @type {import('node:net').AddressInfo} */ (httpServer.address());
  const port = address.port;
  const hosts = allowedHosts(host, port);
  allowed = { hosts, origins: hosts.map((h) => `http://${h}`) };
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}${MCP_PATH}`,
    port,
    /** Stops taking requests, lets the running ones finish, then resolves. */
    close: () =>
      new Promise((resolve) => {
        // A kept-alive connection turns idle when its request is answered: closed then, not at
        // the client's keep-alive timeout.
        const idle = setInterval(() => httpServer.closeIdleConnections(), 50);
        httpServer.close(() => {
          clearInterval(idle);
          resolve();
        });
        httpServer.closeIdleConnections();
      }),
  };
}

module.exports = { serveMcpHttp, isWildcard, MAX_BODY_BYTES, MCP_PATH };
