'use strict';
// A Fetch-API handler served by `http.createServer`: the request becomes a `Request` (its body
// cut off past a limit), the `Response` is written back with every Set-Cookie kept.

/** Request bodies larger than this are refused (413) before the handler sees them. */
const MAX_BODY_BYTES = 64 * 1024;

/**
 * @param {(request: Request) => Promise<Response>} handler
 * @returns {(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void}
 */
function toNodeListener(handler) {
  return (req, res) => {
    serve(handler, req, res).catch((e) => {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end(`internal error: ${e instanceof Error ? e.message : String(e)}`);
      } else res.destroy();
    });
  };
}

/**
 * @param {(request: Request) => Promise<Response>} handler
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 */
async function serve(handler, req, res) {
  const method = req.method ?? 'GET';
  /** @type {Buffer | undefined} */
  let body;
  if (method !== 'GET' && method !== 'HEAD') {
    const chunks = [];
    let size = 0;
    for await (const chunk of req) {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        res.writeHead(413, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
        res.end('request body too large');
        req.destroy();
        return;
      }
      chunks.push(chunk);
    }
    body = Buffer.concat(chunks);
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(':')) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  const secure = /** @type {{ encrypted?: boolean }} */ (req.socket).encrypted === true;
  const host = req.headers.host && /^[\w.:[\]-]+$/.test(req.headers.host) ? req.headers.host : 'localhost';
  const request = new Request(`${secure ? 'https' : 'http'}://${host}${req.url ?? '/'}`, {
    method,
    headers,
    ...(body !== undefined ? { body: new Uint8Array(body) } : {}),
  });
  const response = await handler(request);
  /** @type {Record<string, string | string[]>} */
  const out = {};
  response.headers.forEach((value, name) => {
    if (name !== 'set-cookie') out[name] = value;
  });
  const setCookies = response.headers.getSetCookie();
  if (setCookies.length) out['set-cookie'] = setCookies;
  res.writeHead(response.status, out);
  res.end(response.body ? Buffer.from(await response.arrayBuffer()) : undefined);
}

module.exports = { toNodeListener };
