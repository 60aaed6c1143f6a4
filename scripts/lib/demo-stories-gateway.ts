// Demo stories (scripts/demo-outcomes.ts) recorded by the Countersign gateway in front of a
// server, for a host that has no Countersign code of its own (npm run gateway -- … -- <server>).
import { tools, ok, type Story } from './demo-story-kit';

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
];
