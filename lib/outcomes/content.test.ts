import { describe, expect, it } from 'vitest';
import { outcomeContent } from './content';
import { outcomeSchema } from './schemas';

// The content text whose keyed hash every stored record carries: a record ingested before lib/json
// must still be a replay of itself (not idempotency_key_reused), so the text is pinned, by hand.
describe('outcomeContent, as stored hashes have it', () => {
  it('keys sorted at every depth, null members left out, JSON spelling', () => {
    const record = outcomeSchema.parse({
      eventId: 'evt_1',
      occurredAt: '2026-11-30T12:00:00Z',
      requestRef: 'req_1',
      organization: 'acme',
      principal: 'user_193',
      server: 'billing-mcp',
      agent: null,
      summary: 'Refund "€40"\n',
      tool: { name: 'refund_payment', annotations: { readOnlyHint: false, title: null } },
      observed: { sent: true, httpStatus: 200 },
    });
    expect(outcomeContent(record)).toBe(
      '{"eventId":"evt_1","observed":{"httpStatus":200,"sent":true},"occurredAt":"2026-11-30T12:00:00Z",' +
        '"organization":"acme","principal":"user_193","requestRef":"req_1","server":"billing-mcp",' +
        '"summary":"Refund \\"€40\\"\\n","tool":{"annotations":{"readOnlyHint":false},"name":"refund_payment"}}',
    );
  });
});
