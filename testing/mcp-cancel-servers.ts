// Two MCP servers for cancellation tests (never part of the app), one 2025-only on SDK v1 and one
// on SDK v2 (which serves 2026-07-28), each with the same write: `transfer` runs for `ms` unless
// its request is cancelled first, and notes each transfer's state by its `id` (running, then
// cancelled or finished). In process, `seen` holds the states; as a child over stdio, each state
// is appended to a file as a JSON line, so that the test reads what the child saw.
//   npx tsx testing/mcp-cancel-servers.ts stdio v1|v2 FILE
import { appendFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { McpServer as V1Server } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

export type TransferState = 'running' | 'cancelled' | 'finished';
export type Seen = Map<string, TransferState>;

/** Runs one transfer: `ms`, or until `signal` aborts; `note` hears each state. */
async function transfer(id: string, ms: number, signal: AbortSignal, note: (id: string, s: TransferState) => void) {
  note(id, 'running');
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
  note(id, signal.aborted ? 'cancelled' : 'finished');
  return { content: [{ type: 'text' as const, text: `transfer ${id} done` }] };
}

const description = 'Moves funds; takes `ms` milliseconds.';

/** The 2025-only server (SDK v1). */
export function cancelV1Server(note: (id: string, s: TransferState) => void): V1Server {
  const server = new V1Server({ name: 'cancel-v1', version: '1.0.0' });
  server.registerTool(
    'transfer',
    { description, inputSchema: { id: z.string(), ms: z.number().int() } },
    ({ id, ms }, extra) => transfer(id, ms, extra.signal, note),
  );
  return server;
}

/** The SDK v2 server (both eras; 2026-07-28 to an SDK v2 client). */
export function cancelV2Server(note: (id: string, s: TransferState) => void): McpServer {
  const server = new McpServer({ name: 'cancel-v2', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.registerTool(
    'transfer',
    { description, inputSchema: z.object({ id: z.string(), ms: z.number().int() }) },
    ({ id, ms }, ctx) => transfer(id, ms, ctx.mcpReq.signal, note),
  );
  return server;
}

export const noteIn = (seen: Seen) => (id: string, s: TransferState) => void seen.set(id, s);

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href && process.argv[2] === 'stdio') {
  const file = process.argv[4];
  const note = (id: string, state: TransferState) => appendFileSync(file, `${JSON.stringify({ id, state })}\n`);
  if (process.argv[3] === 'v1') void cancelV1Server(note).connect(new StdioServerTransport());
  else {
    const handle = serveStdio(() => cancelV2Server(note));
    process.on('SIGTERM', () => void handle.close());
  }
}
