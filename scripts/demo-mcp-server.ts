// A real MCP server for the agent-integration demo and tests: McpServer over Streamable HTTP on
// loopback, with orders, invoices, refunds and credits kept in memory.
//
//   npm run demo:mcp-server -- [--port 4410] [--slow-ms 1500]
//
// Tools (scope each needs in brackets):
//   get_order      read-only, output schema                          [orders:read]
//   get_invoice    read-only, output schema; for the legacy order 4999 it adds a field its
//                  declared schema forbids (a real drift: McpServer checks the output with the
//                  zod schema, which allows extra keys; clients check the advertised JSON Schema,
//                  which does not), so clients see an output-schema violation  [orders:read]
//   list_refunds   read-only, no output schema                       [refunds:read]
//   refund_payment destructive, output schema; keyed by idempotencyKey, so a replay with the
//                  same key returns the first refund instead of refunding twice  [refunds:write]
//   issue_credit   a write that takes `slowMs` (longer than a short client timeout) and completes
//                  even when the client has given up; keyed by idempotencyKey  [credits:write]
//
// Bearer tokens: a bad one gets 401 with `WWW-Authenticate: Bearer error="invalid_token"`; a
// good one lacking a tool's scope gets 403 with `error="insufficient_scope"` on that tools/call.
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { pathToFileURL } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import {
  createDemoMcpServer,
  createDemoStore,
  DEMO_SERVER_NAME,
  TOOL_SCOPES,
  type DemoStore,
} from './lib/demo-mcp-tools';
import { config } from '../lib/config';

// The tools and their store, for the agent demo and the tests that drive this server.
export {
  createDemoMcpServer,
  createDemoStore,
  DEMO_SERVER_NAME,
  LEGACY_ORDER,
  TOOL_SCOPES,
  type Credit,
  type DemoStore,
  type Refund,
} from './lib/demo-mcp-tools';

// ── HTTP ─────────────────────────────────────────────────────────────────────────────────────

export interface DemoMcpServerOptions {
  /** Default 0: any free port. */
  port?: number;
  slowMs?: number;
  store?: DemoStore;
}

export interface DemoMcpServer {
  url: URL;
  port: number;
  store: DemoStore;
  /** `full` may call every tool; `ordersOnly` has `orders:read` only. Random per start. */
  tokens: { full: string; ordersOnly: string };
  /** Cuts every open connection at once, as a crash or a network failure would. */
  dropConnections(): void;
  close(): Promise<void>;
}

export async function startDemoMcpServer(options: DemoMcpServerOptions = {}): Promise<DemoMcpServer> {
  const store = options.store ?? createDemoStore();
  const tokens = {
    full: `demo_${randomBytes(16).toString('hex')}`,
    ordersOnly: `demo_${randomBytes(16).toString('hex')}`,
  };
  const scopes = new Map<string, Set<string>>([
    [tokens.full, new Set(Object.values(TOOL_SCOPES))],
    [tokens.ordersOnly, new Set(['orders:read'])],
  ]);
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: McpServer }>();
  const sockets = new Set<Socket>();

  const http = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) json(res, 500, { error: 'internal' });
      else res.end();
    });
  });
  http.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    if (new URL(req.url ?? '/', 'http://127.0.0.1').pathname !== '/mcp') return json(res, 404, { error: 'not_found' });
    const token = /^Bearer (\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const granted = token ? scopes.get(token) : undefined;
    if (!granted) {
      // RFC 6750: no error code when no token came at all.
      const challenge = token
        ? 'Bearer realm="demo-billing", error="invalid_token", error_description="The access token is not valid"'
        : 'Bearer realm="demo-billing"';
      return json(res, 401, { error: 'unauthorized' }, { 'www-authenticate': challenge });
    }

    let body: unknown;
    if (req.method === 'POST') {
      try {
        body = JSON.parse(await readBody(req));
      } catch {
        return json(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
      }
      const needed = missingScope(body, granted);
      if (needed) {
        const challenge = `Bearer realm="demo-billing", error="insufficient_scope", scope="${needed}", error_description="This token lacks ${needed}"`;
        return json(res, 403, { error: 'insufficient_scope' }, { 'www-authenticate': challenge });
      }
    }

    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = sessions.get(sessionId);
      if (!session)
        return json(res, 404, { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } });
      return session.transport.handleRequest(req, res, body);
    }
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      return json(res, 400, {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, message: 'No session: initialize first' },
      });
    }
    const server = createDemoMcpServer(store, { slowMs: options.slowMs });
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, server });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (http.address() as { port: number }).port;

  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    port,
    store,
    tokens,
    dropConnections() {
      for (const socket of sockets) socket.destroy();
    },
    async close() {
      for (const { server } of sessions.values()) await server.close().catch(() => {});
      sessions.clear();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

// The scope a tools/call in this body needs and the token lacks, if any.
function missingScope(body: unknown, granted: Set<string>): string | null {
  for (const message of Array.isArray(body) ? body : [body]) {
    const m = message as { method?: unknown; params?: { name?: unknown } } | null;
    if (m?.method !== 'tools/call' || typeof m.params?.name !== 'string') continue;
    const scope = TOOL_SCOPES[m.params.name];
    if (scope && !granted.has(scope)) return scope;
  }
  return null;
}

function readBody(req: IncomingMessage, limit = 1024 * 1024): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new Error('body too large'));
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

async function main() {
  const args = process.argv.slice(2);
  const option = (name: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const port = Number(option('--port') ?? config().PORT ?? 4410);
  const slowMs = Number(option('--slow-ms') ?? 1500);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`--port must be a port number, got ${option('--port')}`);
  const server = await startDemoMcpServer({ port, slowMs });
  console.log(`Demo MCP server "${DEMO_SERVER_NAME}" on ${server.url}`);
  console.log(`  token with every scope:  ${server.tokens.full}`);
  console.log(`  token with orders:read:  ${server.tokens.ordersOnly}`);
  const stop = () => void server.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((err) => {
    console.error('[demo-mcp-server]', err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
