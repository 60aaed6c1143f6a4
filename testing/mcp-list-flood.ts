// A 2025-only MCP server on SDK v1 over stdio for tests (never part of the app) that floods its
// client with list changes: its `flood_changes` tool sends `count` tools/list_changed
// notifications unasked, then answers; `echo` answers at once. A test cannot reach into a child
// process, so the flood is asked for by a call.
//   npx tsx testing/mcp-list-flood.ts
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer(
  { name: 'list-flood', version: '1.0.0' },
  { capabilities: { tools: { listChanged: true } } },
);
const readOnly = { readOnlyHint: true, openWorldHint: false };
server.registerTool(
  'flood_changes',
  { inputSchema: { count: z.number().int().min(0).max(1_000_000) }, annotations: readOnly },
  async ({ count }) => {
    for (let i = 0; i < count; i++) {
      server.sendToolListChanged();
      // Yield now and then, as a real server writing to a pipe does.
      if (i % 500 === 0) await new Promise((r) => setImmediate(r));
    }
    return { content: [{ type: 'text', text: `sent ${count}` }] };
  },
);
server.registerTool('echo', { inputSchema: { text: z.string() }, annotations: readOnly }, async ({ text }) => ({
  content: [{ type: 'text', text }],
}));
void server.connect(new StdioServerTransport());
