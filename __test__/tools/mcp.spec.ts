// createMcpServer against the MCP SDK's own client, over an in-memory transport.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { describe, expect, it } from 'vitest';
import { codeTool, combineToolSets, createMcpServer, workspaceTools, ZipWorkspace } from '../../lib/index.js';
import { connect, textOf } from './mcp-client.js';

describe('createMcpServer', () => {
  it('lists the tools with their JSON Schemas and annotations', async () => {
    const ws = new ZipWorkspace();
    const set = combineToolSets(workspaceTools(ws), codeTool({ workspace: ws }));
    const server: McpServer = createMcpServer(set, { name: 'files', version: '1.2.3' });
    // @ts-expect-error the declared type is the SDK's McpServer, not any
    server.noSuchMethod;
    const client = await connect(server);
    expect(client.getServerVersion()).toMatchObject({ name: 'files', version: '1.2.3' });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(set.tools.map((t) => t.name));
    for (const [i, t] of tools.entries()) {
      const mine = set.tools[i]!;
      expect(t.inputSchema).toEqual(mine.inputSchema);
      expect(t.description).toBe(mine.description);
      expect(t.annotations).toEqual(mine.annotations);
    }
    expect(tools.find((t) => t.name === 'fs_delete')!.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
    });
    await client.close();
  });

  it('calls tools; bad arguments and unknown tools come back with isError', async () => {
    const ws = new ZipWorkspace();
    const server = createMcpServer(workspaceTools(ws, { exclude: ['fs_delete'] }), { name: 'files', version: '1' });
    const client = await connect(server);
    const written = await client.callTool({ name: 'fs_write', arguments: { path: 'a/b.txt', content: 'hi' } });
    expect(written.isError).toBe(false);
    expect(textOf(written)).toBe('wrote 2 bytes to ~/a/b.txt (history #1)');
    expect(ws.readText('a/b.txt')).toBe('hi');

    const bad = await client.callTool({ name: 'fs_read', arguments: { path: ['a'] } });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/^ERROR INVALID_INPUT: fs_read: path must be a string, got an array/);

    const excluded = await client.callTool({ name: 'fs_delete', arguments: { path: 'a', recursive: true } });
    expect(excluded.isError).toBe(true);
    expect(textOf(excluded)).toMatch(/^ERROR UNKNOWN_TOOL/);
    expect(ws.exists('a/b.txt')).toBe(true);

    const missing = await client.callTool({ name: 'fs_read', arguments: { path: 'nope' } });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/^ERROR NOT_FOUND: /);
    await client.close();
  });

  it('refuses bad options', () => {
    const set = workspaceTools(new ZipWorkspace());
    expect(() => createMcpServer(set, { name: '', version: '1' })).toThrow(/name/);
    expect(() => createMcpServer(set, { name: 'x', version: '1', extra: 1 } as never)).toThrow(/extra/);
  });
});
