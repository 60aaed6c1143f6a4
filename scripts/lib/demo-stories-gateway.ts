// Demo stories (scripts/demo-outcomes.ts) recorded by the Countersign gateway in front of a
// server, for a host that has no Countersign code of its own (npm run gateway -- … -- <server>).
import { tools, ok, toolError, type Story } from './demo-story-kit';

export const GATEWAY_AGENT = 'claude-desktop via countersign-gateway';

export const gatewayStories: Story[] = [
  {
    ref: 'req_gateway_4490',
    agent: GATEWAY_AGENT,
    principal: 'user_193',
    organization: 'acme',
    steps: [
      // A read goes straight through.
      { tool: tools.listRefunds, observed: ok, summary: 'list_refunds (through the Countersign gateway)' },
      // The refund was held by the gateway until a reviewer approved it, then forwarded once
      // with the grant redeemed right before.
      {
        tool: tools.refund,
        observed: ok,
        summary: 'Refund 32.00 EUR on order 4490 (through the Countersign gateway)',
        key: 'refund-4490-gw',
        grantId: 'grt_demo_gateway_4490',
        afterMs: 95_000,
      },
      // The catalog blocks the admin tool: the gateway answered denied_by_policy, the server never saw it.
      {
        tool: tools.adminRefund,
        observed: { sent: false, clientBlock: 'denied_by_policy' },
        summary: 'admin_refund_any (through the Countersign gateway)',
        afterMs: 20_000,
      },
    ],
  },
  // The guards refused what the agent tried after a lost answer (docs/design.md "Guards at the
  // point of execution"): the server never saw any of the refused calls.
  {
    ref: 'req_gateway_4512',
    agent: GATEWAY_AGENT,
    principal: 'user_207',
    organization: 'acme',
    steps: [
      // The refund went out and the connection broke before its answer: unknown.
      {
        tool: tools.refund,
        observed: { sent: true, clientError: 'connection_lost' },
        summary: 'Refund 15.00 EUR on order 4512 (through the Countersign gateway)',
        key: 'refund-4512',
        grantId: 'grt_demo_gateway_4512',
      },
      // The client re-issued it without the operation's key: refused until someone checks.
      {
        tool: tools.refund,
        observed: { sent: false, clientBlock: 'outcome_unknown' },
        summary: 'Refund 15.00 EUR on order 4512 (through the Countersign gateway)',
        afterMs: 3_000,
      },
      // The same key with another amount: another operation under a key that names this one.
      {
        tool: tools.refund,
        observed: { sent: false, clientBlock: 'idempotency_key_reused' },
        summary: 'Refund 150.00 EUR on order 4512 (through the Countersign gateway)',
        key: 'refund-4512',
        afterMs: 4_000,
      },
      // The listing failed, and the agent asked again at once: too soon.
      {
        tool: tools.listRefunds,
        observed: toolError('unavailable'),
        summary: 'list_refunds (through the Countersign gateway)',
        afterMs: 5_000,
      },
      {
        tool: tools.listRefunds,
        observed: { sent: false, clientBlock: 'retry_too_soon' },
        summary: 'list_refunds (through the Countersign gateway)',
        afterMs: 200,
      },
      // The order number was invalid; the unchanged call again cannot succeed.
      {
        tool: tools.getOrder,
        observed: toolError('validation'),
        summary: 'get_order (through the Countersign gateway)',
        args: 'order 45l2',
        afterMs: 6_000,
      },
      {
        tool: tools.getOrder,
        observed: { sent: false, clientBlock: 'not_retryable' },
        summary: 'get_order (through the Countersign gateway)',
        args: 'order 45l2',
        afterMs: 1_000,
      },
    ],
  },
  {
    ref: 'req_gateway_4530',
    agent: GATEWAY_AGENT,
    principal: 'user_193',
    organization: 'acme',
    steps: [
      {
        tool: tools.cancelOrder,
        observed: ok,
        summary: 'Cancel order 4530 (through the Countersign gateway)',
        grantId: 'grt_demo_gateway_4530',
      },
      // The same cancellation again in the same request: already done.
      {
        tool: tools.cancelOrder,
        observed: { sent: false, clientBlock: 'already_done' },
        summary: 'Cancel order 4530 (through the Countersign gateway)',
        afterMs: 8_000,
      },
      // Five failed look-ups of the customer, then the budget of failed attempts is spent.
      ...[0, 1, 2, 3, 4].map((n) => ({
        tool: tools.crmLookup,
        observed: toolError('unavailable'),
        summary: 'lookup_customer (through the Countersign gateway)',
        afterMs: 2_000 * 2 ** n,
      })),
      {
        tool: tools.crmLookup,
        observed: { sent: false, clientBlock: 'budget_exhausted' },
        summary: 'lookup_customer (through the Countersign gateway)',
        afterMs: 70_000,
      },
    ],
  },
];
