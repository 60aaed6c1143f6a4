// A 2025-only MCP server on SDK v1 over stdio for tests (never part of the app) that exits with
// status 1 on any request before `initialize`, as some 2025 servers do: the 2026-07-28 era's
// `server/discover` probe ends it. Otherwise it serves one tool, `echo`. Each start appends its
// process id to the file given by `--starts`, so that a test can count the starts and check that
// every one is gone. `--always` makes it exit on every request, `initialize` too (a server that
// always dies).
//   npx tsx testing/mcp-probe-exits.ts --starts /tmp/starts [--always]
import { appendFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const args = process.argv.slice(2);
const starts = args.includes('--starts') ? args[args.indexOf('--starts') + 1] : undefined;
const always = args.includes('--always');
if (starts) appendFileSync(starts, `${process.pid}\n`);

const server = new McpServer({ name: 'probe-exits', version: '1.0.0' });
server.registerTool(
  'echo',
  { inputSchema: { text: z.string() }, annotations: { readOnlyHint: true, openWorldHint: false } },
  async ({ text }) => ({ content: [{ type: 'text', text: `echo: ${text}` }] }),
);
const transport = new StdioServerTransport();
await server.connect(transport);
// Ahead of the SDK's own handler: a request before `initialize` ends the process before any answer.
const handle = transport.onmessage;
let initialized = false;
transport.onmessage = (message: JSONRPCMessage) => {
  if ('method' in message && 'id' in message) {
    if (always || (!initialized && message.method !== 'initialize')) {
      process.stderr.write(`probe-exits: ${message.method} before initialize: exiting\n`);
      process.exit(1);
    }
    if (message.method === 'initialize') initialized = true;
  }
  handle?.(message);
};
