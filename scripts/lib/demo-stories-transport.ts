// Demo stories (scripts/demo-outcomes.ts) that go wrong on the way: retries, scopes and tokens,
// sessions, busy and unavailable servers, JSON-RPC errors.
import { tools, ok, rpc, http, type Story } from './demo-story-kit';

export const transportStories: Story[] = [
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
];
