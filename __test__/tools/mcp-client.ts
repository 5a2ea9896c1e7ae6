// The MCP SDK's own client, for tests of servers: connected in memory to an McpServer, and the
// text of a tool call's result.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

export async function connect(server: McpServer): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

export const textOf = (r: Awaited<ReturnType<Client['callTool']>>): string =>
  (r.content as { type: string; text: string }[]).map((c) => c.text).join('');
