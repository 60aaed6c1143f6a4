// The vocabulary of the demo stories (scripts/demo-outcomes.ts): the demo tools with their hints,
// what a call observed, and a story's steps.
import type { Observed, ToolAnnotations } from '@/lib/outcomes/schemas';

export type Tool = { server: string; name: string; annotations?: ToolAnnotations };

export const read = (server: string, name: string): Tool => ({
  server,
  name,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
});
export const write = (server: string, name: string, destructive = true): Tool => ({
  server,
  name,
  annotations: { readOnlyHint: false, destructiveHint: destructive, idempotentHint: false, openWorldHint: true },
});

export const tools = {
  getOrder: read('orders-mcp', 'get_order'),
  listRefunds: read('billing-mcp', 'list_refunds'),
  refund: write('billing-mcp', 'refund_payment'),
  adminRefund: write('billing-mcp', 'admin_refund_any'),
  updateAddress: write('orders-mcp', 'update_shipping_address', false),
  cancelOrder: write('orders-mcp', 'cancel_order'),
  crmLookup: read('crm-mcp', 'lookup_customer'),
  crmNote: write('crm-mcp', 'add_customer_note', false),
};

export const ok: Observed = { sent: true, httpStatus: 200, result: { isError: false, outputValidation: 'valid' } };
export const toolError = (errorCategory?: string): Observed => ({
  sent: true,
  httpStatus: 200,
  result: { isError: true, errorCategory },
});
export const rpc = (code: number): Observed => ({ sent: true, httpStatus: 200, jsonRpcErrorCode: code });
export const http = (status: number, authError?: 'invalid_token' | 'insufficient_scope'): Observed => ({
  sent: true,
  httpStatus: status,
  authError,
});

export type Step = {
  tool: Tool;
  observed: Observed;
  summary: string;
  key?: string;
  afterMs?: number;
  principal?: string;
  organization?: string;
  args?: string;
  /** The grant redeemed for this call (a held write, approved). */
  grantId?: string;
};
export type Story = { ref: string; agent: string; principal: string; organization: string; steps: Step[] };
