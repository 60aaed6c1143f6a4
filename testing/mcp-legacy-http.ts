// A 2025-only MCP server over streamable HTTP, as SDK v1 serves one: a session per client, each
// session its own server instance (made by `serverFor`). For the gateway's tests of a 2026-07-28
// client in front of a 2025 server. Closed by the test's cleanup list.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';

/** Anything SDK v1 serves over a transport: a low-level Server or an McpServer. */
type Serving = { connect(transport: Transport): Promise<void> };

export async function startLegacyHttp(
  serverFor: () => Serving,
  cleanUp: { push(close: () => Promise<void>): void },
): Promise<{ url: string; sessionsOpened: () => number }> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const parsed: unknown = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
    const id = req.headers['mcp-session-id'];
    const known = typeof id === 'string' ? sessions.get(id) : undefined;
    if (known) return known.handleRequest(req, res, parsed);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (sid) => void sessions.set(sid, transport),
    });
    await serverFor().connect(transport);
    await transport.handleRequest(req, res, parsed);
  };
  const http = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  cleanUp.push(async () => {
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  });
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    // Sessions initialized so far (none is forgotten).
    sessionsOpened: () => sessions.size,
  };
}
