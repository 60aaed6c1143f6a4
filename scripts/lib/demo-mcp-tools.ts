// The demo MCP server's tools (scripts/demo-mcp-server.ts) over an in-memory store of orders,
// invoices, refunds and credits. The tools and the scope each needs are listed there.
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
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
