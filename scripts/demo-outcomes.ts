// Demo outcome records: realistic incidents that between them exercise every row of DESIGN.md's
// classification table, multi-attempt stories included, spread over the last seven days.
import { createHash } from 'node:crypto';
import type { Observed, Outcome, ToolAnnotations } from '@/lib/outcomes/schemas';

type Tool = { server: string; name: string; annotations?: ToolAnnotations };

const read = (server: string, name: string): Tool => ({
  server,
  name,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
});
const write = (server: string, name: string, destructive = true): Tool => ({
  server,
  name,
  annotations: { readOnlyHint: false, destructiveHint: destructive, idempotentHint: false, openWorldHint: true },
});

// billing-mcp and orders-mcp are trusted by the demo seed; crm-mcp is not, so its read-only
// hints are display-only and its tools count as writes.
export const DEMO_TRUSTED_SERVERS = ['billing-mcp', 'orders-mcp'];

const tools = {
  getOrder: read('orders-mcp', 'get_order'),
  listRefunds: read('billing-mcp', 'list_refunds'),
  refund: write('billing-mcp', 'refund_payment'),
  adminRefund: write('billing-mcp', 'admin_refund_any'),
  updateAddress: write('orders-mcp', 'update_shipping_address', false),
  cancelOrder: write('orders-mcp', 'cancel_order'),
  crmLookup: read('crm-mcp', 'lookup_customer'),
  crmNote: write('crm-mcp', 'add_customer_note', false),
};

const ok: Observed = { sent: true, httpStatus: 200, result: { isError: false, outputValidation: 'valid' } };
const toolError = (errorCategory?: string): Observed => ({
  sent: true,
  httpStatus: 200,
  result: { isError: true, errorCategory },
});
const rpc = (code: number): Observed => ({ sent: true, httpStatus: 200, jsonRpcErrorCode: code });
const http = (status: number, authError?: 'invalid_token' | 'insufficient_scope'): Observed => ({
  sent: true,
  httpStatus: status,
  authError,
});

type Step = {
  tool: Tool;
  observed: Observed;
  summary: string;
  key?: string;
  afterMs?: number;
  principal?: string;
  organization?: string;
  args?: string;
};
type Story = { ref: string; agent: string; principal: string; organization: string; steps: Step[] };

const stories: Story[] = [
  {
    ref: 'req_refund_4411',
    agent: 'support-bot',
    principal: 'user_193',
    organization: 'acme',
    steps: [
      { tool: tools.getOrder, observed: ok, summary: 'Read order 4411' },
      {
        tool: tools.refund,
        observed: { sent: true, clientError: 'timeout' },
        summary: 'Refund 40.00 EUR on order 4411',
        key: 'refund-4411-v1',
        afterMs: 2_000,
      },
      {
        tool: tools.listRefunds,
        observed: ok,
        summary: 'Check refunds on order 4411 after the timeout',
        afterMs: 30_000,
      },
      {
        tool: tools.refund,
        observed: ok,
        summary: 'Refund 40.00 EUR on order 4411 (replay, same key)',
        key: 'refund-4411-v1',
        args: 'Refund 40.00 EUR on order 4411',
        afterMs: 35_000,
      },
    ],
  },
  {
    ref: 'req_refund_5120',
    agent: 'support-bot',
    principal: 'user_207',
    organization: 'acme',
    steps: [
      {
        tool: tools.refund,
        observed: { sent: true, clientError: 'connection_lost' },
        summary: 'Refund 15.00 EUR on order 5120',
        key: 'refund-5120-v1',
      },
      {
        tool: tools.refund,
        observed: ok,
        summary: 'Refund 15.00 EUR on order 5120',
        key: 'refund-5120-retry',
        afterMs: 4_000,
      },
    ],
  },
  {
    ref: 'req_scope_7781',
    agent: 'billing-agent',
    principal: 'user_311',
    organization: 'globex',
    steps: [
      { tool: tools.refund, observed: http(403, 'insufficient_scope'), summary: 'Refund 250.00 USD on order 7781' },
      {
        tool: tools.adminRefund,
        observed: ok,
        summary: 'Refund 250.00 USD on order 7781 via admin tool',
        afterMs: 3_000,
      },
    ],
  },
  {
    ref: 'req_token_3302',
    agent: 'billing-agent',
    principal: 'user_311',
    organization: 'globex',
    steps: [
      { tool: tools.listRefunds, observed: http(401, 'invalid_token'), summary: 'List refunds for customer 3302' },
    ],
  },
  {
    ref: 'req_session_9001',
    agent: 'support-bot',
    principal: 'user_193',
    organization: 'acme',
    steps: [
      { tool: tools.getOrder, observed: http(404), summary: 'Read order 9001 on an expired session' },
      {
        tool: tools.getOrder,
        observed: ok,
        summary: 'Read order 9001 after re-initializing',
        args: 'Read order 9001 on an expired session',
        afterMs: 1_500,
      },
    ],
  },
  {
    ref: 'req_busy_6610',
    agent: 'support-bot',
    principal: 'user_402',
    organization: 'acme',
    steps: [
      { tool: tools.listRefunds, observed: http(429), summary: 'List refunds for order 6610' },
      { tool: tools.listRefunds, observed: http(429), summary: 'List refunds for order 6610', afterMs: 200 },
      { tool: tools.listRefunds, observed: http(429), summary: 'List refunds for order 6610', afterMs: 200 },
      { tool: tools.listRefunds, observed: http(429), summary: 'List refunds for order 6610', afterMs: 200 },
      { tool: tools.listRefunds, observed: http(503), summary: 'List refunds for order 6610', afterMs: 200 },
    ],
  },
  {
    ref: 'req_outage_8120',
    agent: 'fulfilment-agent',
    principal: 'user_515',
    organization: 'acme',
    steps: [
      { tool: tools.getOrder, observed: http(502), summary: 'Read order 8120' },
      {
        tool: tools.cancelOrder,
        observed: http(504),
        summary: 'Cancel order 8120',
        key: 'cancel-8120',
        afterMs: 5_000,
      },
      {
        tool: tools.cancelOrder,
        observed: http(500),
        summary: 'Cancel order 8120',
        key: 'cancel-8120',
        afterMs: 60_000,
      },
    ],
  },
  {
    ref: 'req_protocol_1000',
    agent: 'fulfilment-agent',
    principal: 'user_515',
    organization: 'acme',
    steps: [
      { tool: tools.getOrder, observed: rpc(-32700), summary: 'Read order 1000 (malformed request body)' },
      { tool: tools.getOrder, observed: rpc(-32600), summary: 'Read order 1000 (invalid request)', afterMs: 1_000 },
      { tool: tools.getOrder, observed: rpc(-32601), summary: 'Read order 1000 (method not found)', afterMs: 1_000 },
      { tool: tools.getOrder, observed: rpc(-32601), summary: 'Read order 1000 (method not found)', afterMs: 1_000 },
    ],
  },
  {
    ref: 'req_args_2231',
    agent: 'support-bot',
    principal: 'user_193',
    organization: 'acme',
    steps: [
      {
        tool: tools.updateAddress,
        observed: rpc(-32602),
        summary: 'Update shipping address on order 2231 (postcode missing)',
      },
      {
        tool: tools.updateAddress,
        observed: {
          sent: true,
          httpStatus: 200,
          jsonRpcErrorCode: -32602,
          result: { isError: true, errorCategory: 'unknown_tool' },
        },
        summary: 'Call update_address (no such tool)',
        afterMs: 2_000,
      },
      {
        tool: tools.updateAddress,
        observed: rpc(-32603),
        summary: 'Update shipping address on order 2231',
        key: 'addr-2231-v2',
        afterMs: 4_000,
      },
    ],
  },
  {
    ref: 'req_elicit_4020',
    agent: 'billing-agent',
    principal: 'user_311',
    organization: 'globex',
    steps: [
      {
        tool: tools.refund,
        observed: rpc(-32042),
        summary: 'Refund 80.00 USD on order 4020: customer must confirm in the browser',
      },
    ],
  },
  {
    ref: 'req_cancel_3390',
    agent: 'fulfilment-agent',
    principal: 'user_515',
    organization: 'acme',
    steps: [
      {
        tool: tools.cancelOrder,
        observed: { sent: true, clientError: 'cancelled' },
        summary: 'Cancel order 3390',
        key: 'cancel-3390',
      },
    ],
  },
  {
    ref: 'req_toolerrors_5555',
    agent: 'support-bot',
    principal: 'user_402',
    organization: 'acme',
    steps: [
      {
        tool: tools.updateAddress,
        observed: toolError('VALIDATION_ERROR'),
        summary: 'Update shipping address on order 5555 to an invalid postcode',
      },
      {
        tool: tools.updateAddress,
        observed: toolError('VALIDATION_ERROR'),
        summary: 'Update shipping address on order 5555 to an invalid postcode',
        afterMs: 500,
      },
      {
        tool: tools.refund,
        observed: toolError('PERMISSION_DENIED'),
        summary: 'Refund 999.00 EUR on order 5555',
        afterMs: 2_000,
      },
      {
        tool: tools.refund,
        observed: toolError('DENIED'),
        summary: 'Refund 999.00 EUR on order 5555 (policy)',
        afterMs: 2_000,
      },
      { tool: tools.getOrder, observed: toolError('NOT_FOUND'), summary: 'Read order 55555', afterMs: 1_000 },
      {
        tool: tools.updateAddress,
        observed: toolError('REVISION_CONFLICT'),
        summary: 'Update shipping address on order 5555 (stale revision)',
        key: 'addr-5555-r7',
        afterMs: 1_000,
      },
      {
        tool: tools.listRefunds,
        observed: toolError('RETRYABLE_UPSTREAM'),
        summary: 'List refunds for order 5555',
        afterMs: 1_000,
      },
      {
        tool: tools.listRefunds,
        observed: toolError('rate-limited'),
        summary: 'List refunds for order 5555',
        afterMs: 1_000,
      },
      {
        tool: tools.cancelOrder,
        observed: toolError(),
        summary: 'Cancel order 5555',
        key: 'cancel-5555',
        afterMs: 1_000,
      },
      {
        tool: tools.getOrder,
        observed: toolError(),
        summary: 'Read order 5555 (tool error without category)',
        afterMs: 1_000,
      },
    ],
  },
  {
    ref: 'req_schema_6001',
    agent: 'support-bot',
    principal: 'user_193',
    organization: 'acme',
    steps: [
      {
        tool: tools.getOrder,
        observed: { sent: true, httpStatus: 200, result: { isError: false, outputValidation: 'invalid' } },
        summary: 'Read order 6001 (result does not match the output schema)',
      },
      {
        tool: tools.getOrder,
        observed: { sent: true, httpStatus: 200, result: { isError: false, outputValidation: 'missing' } },
        summary: 'Read order 6001 (no structured content)',
        afterMs: 1_000,
      },
    ],
  },
  {
    ref: 'req_blocked_7002',
    agent: 'billing-agent',
    principal: 'user_311',
    organization: 'globex',
    steps: [
      {
        tool: tools.refund,
        observed: { sent: false, clientBlock: 'approval_required' },
        summary: 'Refund 60.00 USD on order 7002: waiting for approval',
      },
      {
        tool: tools.cancelOrder,
        observed: { sent: false, clientBlock: 'denied_by_policy' },
        summary: 'Cancel order 7002: blocked by policy',
        afterMs: 1_000,
      },
      {
        tool: tools.listRefunds,
        observed: { sent: false, clientBlock: 'no_credentials' },
        summary: 'List refunds for order 7002: no delegated credential',
        afterMs: 1_000,
      },
    ],
  },
  {
    ref: 'req_silent_8003',
    agent: 'fulfilment-agent',
    principal: 'user_515',
    organization: 'acme',
    steps: [{ tool: tools.cancelOrder, observed: { sent: true }, summary: 'Cancel order 8003', key: 'cancel-8003' }],
  },
  {
    ref: 'req_crm_9100',
    agent: 'support-bot',
    principal: 'user_207',
    organization: 'acme',
    steps: [
      { tool: tools.crmLookup, observed: ok, summary: 'Look up customer jane.doe@example.com in the CRM' },
      {
        tool: tools.crmNote,
        observed: ok,
        summary: 'Add a note to customer 9100: call back on +44 20 7946 0958',
        afterMs: 3_000,
      },
    ],
  },
  {
    ref: 'req_readonly_9200',
    agent: 'support-bot',
    principal: 'user_207',
    organization: 'acme',
    steps: [
      { tool: tools.getOrder, observed: http(500), summary: 'Read order 9200' },
      { tool: tools.getOrder, observed: rpc(-32603), summary: 'Read order 9200', afterMs: 2_000 },
      { tool: tools.getOrder, observed: ok, summary: 'Read order 9200', afterMs: 6_000 },
    ],
  },
];

// A small deterministic generator, so every machine gets the same demo data.
function prng(seed: number) {
  return () => {
    seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
}

const digest = (s: string) => 'sha256:' + createHash('sha256').update(s).digest('hex');

function recordsOf(story: Story, start: number, suffix = ''): Outcome[] {
  let at = start;
  const attempts = new Map<string, number>();
  return story.steps.map((step, i) => {
    at += step.afterMs ?? 0;
    const attemptKey = step.key ?? `${step.tool.server}/${step.tool.name}/${step.summary}`;
    attempts.set(attemptKey, (attempts.get(attemptKey) ?? 0) + 1);
    return {
      eventId: `demo_${story.ref}${suffix}_${i}`,
      occurredAt: new Date(at).toISOString(),
      durationMs: step.observed.clientError === 'timeout' ? 30_000 : 80 + ((i * 37) % 400),
      requestRef: story.ref + suffix,
      idempotencyKey: step.key,
      attempt: attempts.get(attemptKey),
      organization: step.organization ?? story.organization,
      principal: step.principal ?? story.principal,
      agent: story.agent,
      server: step.tool.server,
      serverVersion: '2.3.0',
      protocolVersion: '2025-11-25',
      tool: { name: step.tool.name, annotations: step.tool.annotations },
      mcpRequestId: i,
      argsDigest: digest(step.args ?? step.summary),
      summary: step.summary,
      observed: step.observed,
    };
  });
}

/** Every story once, recently, plus `background` repeats spread over the last seven days. */
export function demoOutcomes(now = Date.now(), background = 240): Outcome[] {
  const random = prng(42);
  const records: Outcome[] = [];
  stories.forEach((story, i) => records.push(...recordsOf(story, now - (stories.length - i) * 7 * 60_000)));
  for (let n = 0; n < background; n++) {
    const story = stories[Math.floor(random() * stories.length)];
    const start = now - 7 * 24 * 3_600_000 + Math.floor(random() * 7 * 24 * 3_600_000 - 3_600_000);
    records.push(...recordsOf(story, start, `_${n.toString().padStart(3, '0')}`));
  }
  return records;
}
