'use strict';
// A tool set as an MCP server (`@modelcontextprotocol/sdk`, an optional peer dependency loaded
// on first use). The tools are served with their own JSON Schemas: McpServer.registerTool takes
// Zod schemas only, so `tools/list` and `tools/call` are answered by handlers on the server's
// underlying protocol object, and arguments are checked by the set's dispatch.

const { invalidInput } = require('../errors.js');
const { checkToolSet, isPlainObject } = require('./toolset.js');
const { loadPeer } = require('./peers.js');

/**
 * @typedef {import('./index.js').ToolSet} ToolSet
 * @typedef {import('./index.js').McpServerOptions} McpServerOptions
 */

/**
 * A result's data and failure code as `structuredContent` (an object, as MCP wants it): what a
 * client can act on without reading the text. Nothing when there is neither, or when the data
 * is not JSON.
 * @param {import('./index.js').ToolResult} r
 * @returns {{ structuredContent?: Record<string, unknown> }}
 */
function structuredOf(r) {
  const code = !r.ok && typeof r.code === 'string' ? { code: r.code } : {};
  let data = {};
  if (isPlainObject(r.data)) {
    try {
      data = JSON.parse(JSON.stringify(r.data));
    } catch {
      data = {};
    }
  }
  const structured = { ...data, ...code };
  return Object.keys(structured).length ? { structuredContent: structured } : {};
}

/**
 * An McpServer offering the tools of `set`; connect it to a transport to serve them. Results
 * are one text block, with `isError: true` for failures (bad arguments and unknown tools
 * included); a result's data and a failure's code also come as `structuredContent`.
 * @param {ToolSet} set
 * @param {McpServerOptions} options
 * @returns {any}
 */
function createMcpServer(set, options) {
  checkToolSet(set, 'createMcpServer()');
  if (!isPlainObject(options)) throw invalidInput('createMcpServer() takes options { name, version }');
  for (const key of Object.keys(options)) {
    if (key !== 'name' && key !== 'version' && key !== 'instructions') {
      throw invalidInput(`unknown createMcpServer() option '${key}' (expected: name, version, instructions)`);
    }
  }
  const { name, version, instructions } = options;
  if (typeof name !== 'string' || name === '')
    throw invalidInput('createMcpServer() options.name must be a non-empty string');
  if (typeof version !== 'string' || version === '') {
    throw invalidInput('createMcpServer() options.version must be a non-empty string');
  }
  if (instructions !== undefined && typeof instructions !== 'string') {
    throw invalidInput('createMcpServer() options.instructions must be a string');
  }
  const { McpServer } = loadPeer(
    '@modelcontextprotocol/sdk/server/mcp.js',
    '@modelcontextprotocol/sdk',
    'createMcpServer()',
  );
  const { ListToolsRequestSchema, CallToolRequestSchema } = loadPeer(
    '@modelcontextprotocol/sdk/types.js',
    '@modelcontextprotocol/sdk',
    'createMcpServer()',
  );
  const server = new McpServer({ name, version }, instructions === undefined ? {} : { instructions });
  const protocol = server.server;
  protocol.registerCapabilities({ tools: {} });
  protocol.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: set.tools.map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema,
      annotations: { ...t.annotations },
    })),
  }));
  protocol.setRequestHandler(
    CallToolRequestSchema,
    /**
     * @param {{ params: { name: string, arguments?: Record<string, unknown> } }} request
     * @param {{ signal?: AbortSignal }} extra
     */
    async (request, extra) => {
      const r = await set.dispatch(
        request.params.name,
        request.params.arguments ?? {},
        extra?.signal ? { signal: extra.signal } : {},
      );
      return { content: [{ type: 'text', text: r.content }], isError: !r.ok, ...structuredOf(r) };
    },
  );
  return server;
}

module.exports = { createMcpServer };
