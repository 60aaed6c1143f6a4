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
import { isInitializeRequest, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

export const DEMO_SERVER_NAME = 'billing-mcp';
export const LEGACY_ORDER = '4999';

type Order = { orderId: string; amount: number; currency: string; status: string };
export type Refund = { refundId: string; orderId: string; amount: number; currency: string; idempotencyKey: string };
export type Credit = { creditId: string; orderId: string; amount: number; currency: string; idempotencyKey: string };

export interface DemoStore {
  orders: Map<string, Order>;
  /** By idempotency key. */
  refunds: Map<string, Refund>;
  /** By idempotency key. */
  credits: Map<string, Credit>;
  /** Idempotency keys of credits being issued right now (the slow part is running). */
  pendingCredits: Set<string>;
}

export function createDemoStore(): DemoStore {
  const orders = new Map<string, Order>();
  for (const [orderId, amount, status] of [
    ['4411', 40, 'delivered'],
    ['4412', 125.5, 'delivered'],
    ['4413', 18, 'shipped'],
    [LEGACY_ORDER, 99, 'delivered'],
  ] as const) {
    orders.set(orderId, { orderId, amount, currency: 'EUR', status });
  }
  return { orders, refunds: new Map(), credits: new Map(), pendingCredits: new Set() };
}

export const TOOL_SCOPES: Record<string, string> = {
  get_order: 'orders:read',
  get_invoice: 'orders:read',
  list_refunds: 'refunds:read',
  refund_payment: 'refunds:write',
  issue_credit: 'credits:write',
};

const money = { amount: z.number().positive(), currency: z.string().regex(/^[A-Z]{3}$/) };
const orderId = z
  .string()
  .regex(/^\d{1,10}$/)
  .describe('The order number, e.g. "4411"');

const text = (t: string) => [{ type: 'text' as const, text: t }];
// Tools with an output schema declare their error category in _meta: the SDK client checks any
// structuredContent against the success schema, errors included.
const toolError = (category: string, message: string, structured: boolean): CallToolResult =>
  structured
    ? { isError: true, content: text(message), structuredContent: { error: { category, message } } }
    : { isError: true, content: text(message), _meta: { errorCategory: category } };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One McpServer with the demo tools over `store`. One per session (an McpServer has one transport). */
export function createDemoMcpServer(store: DemoStore, options: { slowMs?: number } = {}): McpServer {
  const slowMs = options.slowMs ?? 1500;
  const server = new McpServer({ name: DEMO_SERVER_NAME, version: '2.3.0' });

  server.registerTool(
    'get_order',
    {
      title: 'Get order',
      description: 'Reads one order: amount, currency and status. Changes nothing.',
      inputSchema: { orderId },
      outputSchema: { orderId: z.string(), amount: z.number(), currency: z.string(), status: z.string() },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ orderId }) => {
      const order = store.orders.get(orderId);
      if (!order) return toolError('NOT_FOUND', `No order ${orderId}.`, false);
      return {
        content: text(`Order ${orderId}: ${order.amount.toFixed(2)} ${order.currency}, ${order.status}.`),
        structuredContent: { ...order },
      };
    },
  );

  server.registerTool(
    'get_invoice',
    {
      title: 'Get invoice',
      description: 'Reads the invoice of an order. Changes nothing.',
      inputSchema: { orderId },
      outputSchema: { invoiceId: z.string(), orderId: z.string(), total: z.number(), currency: z.string() },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ orderId }) => {
      const order = store.orders.get(orderId);
      if (!order) return toolError('NOT_FOUND', `No order ${orderId}.`, false);
      const invoice: Record<string, unknown> = {
        invoiceId: `inv_${orderId}`,
        orderId,
        total: order.amount,
        currency: order.currency,
      };
      if (orderId === LEGACY_ORDER) invoice.legacyTaxCode = 'DE-19-OLD';
      return { content: text(`Invoice inv_${orderId}.`), structuredContent: invoice };
    },
  );

  server.registerTool(
    'list_refunds',
    {
      title: 'List refunds',
      description: 'Lists the refunds of an order. Changes nothing.',
      inputSchema: { orderId },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ orderId }) => {
      if (!store.orders.has(orderId)) return toolError('NOT_FOUND', `No order ${orderId}.`, true);
      const refunds = [...store.refunds.values()]
        .filter((r) => r.orderId === orderId)
        .map(({ idempotencyKey: _key, ...r }) => r);
      return {
        content: text(`${refunds.length} refund(s) on order ${orderId}.`),
        structuredContent: { orderId, refunds },
      };
    },
  );

  server.registerTool(
    'refund_payment',
    {
      title: 'Refund payment',
      description:
        'Refunds money on an order to the original payment method. Irreversible. The same idempotencyKey with the same input returns the first refund.',
      inputSchema: {
        orderId,
        ...money,
        idempotencyKey: z.string().min(1).max(255),
        reason: z.string().max(500).optional(),
      },
      outputSchema: {
        refundId: z.string(),
        orderId: z.string(),
        amount: z.number(),
        currency: z.string(),
        status: z.literal('refunded'),
        replayed: z.boolean(),
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ orderId, amount, currency, idempotencyKey }) => {
      const existing = store.refunds.get(idempotencyKey);
      if (existing) {
        if (existing.orderId !== orderId || existing.amount !== amount || existing.currency !== currency) {
          return toolError('VALIDATION_ERROR', 'This idempotency key was used for another refund.', false);
        }
        return refundResult(existing, true);
      }
      const order = store.orders.get(orderId);
      if (!order) return toolError('NOT_FOUND', `No order ${orderId}.`, false);
      const refunded = [...store.refunds.values()]
        .filter((r) => r.orderId === orderId)
        .reduce((sum, r) => sum + r.amount, 0);
      if (currency !== order.currency || refunded + amount > order.amount + 1e-9) {
        return toolError(
          'VALIDATION_ERROR',
          `At most ${(order.amount - refunded).toFixed(2)} ${order.currency} can be refunded.`,
          false,
        );
      }
      const refund = { refundId: `rf_${randomUUID().slice(0, 8)}`, orderId, amount, currency, idempotencyKey };
      store.refunds.set(idempotencyKey, refund);
      return refundResult(refund, false);
    },
  );

  server.registerTool(
    'issue_credit',
    {
      title: 'Issue store credit',
      description: 'Issues store credit on an order (slow upstream). The same idempotencyKey returns the first credit.',
      inputSchema: { orderId, ...money, idempotencyKey: z.string().min(1).max(255) },
      outputSchema: {
        creditId: z.string(),
        orderId: z.string(),
        amount: z.number(),
        currency: z.string(),
        replayed: z.boolean(),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async ({ orderId, amount, currency, idempotencyKey }) => {
      if (!store.orders.has(orderId)) return toolError('NOT_FOUND', `No order ${orderId}.`, false);
      const before = store.credits.get(idempotencyKey);
      if (before) return creditResult(before, true);
      // The upstream is slow and does not stop when the caller cancels: the write happens anyway.
      store.pendingCredits.add(idempotencyKey);
      await sleep(slowMs);
      store.pendingCredits.delete(idempotencyKey);
      const raced = store.credits.get(idempotencyKey);
      if (raced) return creditResult(raced, true);
      const credit = { creditId: `cr_${randomUUID().slice(0, 8)}`, orderId, amount, currency, idempotencyKey };
      store.credits.set(idempotencyKey, credit);
      return creditResult(credit, false);
    },
  );

  return server;
}

function refundResult(r: Refund, replayed: boolean): CallToolResult {
  const out = {
    refundId: r.refundId,
    orderId: r.orderId,
    amount: r.amount,
    currency: r.currency,
    status: 'refunded' as const,
    replayed,
  };
  return {
    content: text(`Refunded ${r.amount.toFixed(2)} ${r.currency} on order ${r.orderId} (${r.refundId}).`),
    structuredContent: out,
  };
}

function creditResult(c: Credit, replayed: boolean): CallToolResult {
  const out = { creditId: c.creditId, orderId: c.orderId, amount: c.amount, currency: c.currency, replayed };
  return {
    content: text(`Credited ${c.amount.toFixed(2)} ${c.currency} on order ${c.orderId} (${c.creditId}).`),
    structuredContent: out,
  };
}

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
  const port = Number(option('--port') ?? process.env.PORT ?? 4410);
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
