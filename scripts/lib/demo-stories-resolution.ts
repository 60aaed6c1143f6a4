// Demo stories (scripts/demo-outcomes.ts) of unknowns that got resolved (docs/design.md "Resolving an
// unknown"): one by a later attempt of the same operation, one by a person's state check, which
// the seed records after ingesting (DEMO_STATE_CHECKS).
import { tools, ok, type Story } from './demo-story-kit';

const timeout = { sent: true, clientError: 'timeout' } as const;

export const resolutionStories: Story[] = [
  {
    // The refund timed out; the agent replayed it under the same key and arguments and it
    // completed: the first attempt is resolved by the second, "it happened".
    ref: 'req_resolved_by_retry_6120',
    agent: 'support-bot',
    principal: 'user_193',
    organization: 'acme',
    steps: [
      { tool: tools.refund, observed: timeout, summary: 'Refund 25.00 EUR on order 6120', key: 'refund-6120-v1' },
      {
        tool: tools.refund,
        observed: ok,
        summary: 'Refund 25.00 EUR on order 6120',
        key: 'refund-6120-v1',
        afterMs: 4_000,
      },
    ],
  },
  {
    // The cancellation timed out and the agent stopped; support checked the order system and
    // recorded that it did not happen.
    ref: 'req_resolved_by_check_6121',
    agent: 'support-bot',
    principal: 'user_204',
    organization: 'acme',
    steps: [{ tool: tools.cancelOrder, observed: timeout, summary: 'Cancel order 6121', key: 'cancel-6121-v1' }],
  },
];

/** State checks the seed records, by the demo record's event id (its first, recent copy). */
export const DEMO_STATE_CHECKS = [
  {
    eventId: 'demo_req_resolved_by_check_6121_0',
    by: 'support@countersign.local',
    verdict: 'did_not_happen' as const,
    note: 'Order 6121 is still open in the order system; no cancellation was recorded.',
  },
];
