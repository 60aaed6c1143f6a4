// The guards in the agent SDK (`withCountersign`, lib/mcp/guard.ts), asked with the staging of a
// write, against the fake console with a scripted answer: a write the guards refuse is neither staged nor sent, comes back with the
// refusal and its classification, and is not reported again (the console stored it); a console
// that cannot be asked blocks the write. Trusted reads are decided by the wrapper on its own reads,
// without asking (lib/guards/read-guard.ts). The console's own decisions
// are tested against the real console (lib/server/guards, lib/gateway/gateway-guards.test.ts).
import { afterEach, describe, expect, it } from 'vitest';
import { call, cleanUp, setup, verdict } from '../../testing/mcp-integration';
import { argsDigest } from './digest';

afterEach(cleanUp);

const ARGS = { orderId: '4411', amount: 40, currency: 'EUR', idempotencyKey: 'refund-4411-v1' };
const UNKNOWN = '00000000-0000-4000-8000-000000000001';

describe.each(['in-memory', 'streamable-http'] as const)('over %s', (kind) => {
  it('a refused write: not staged, not sent, the refusal returned, its record the console stored', async () => {
    const { harness, countersign, wrap } = await setup(kind, undefined, (q) => ({
      decision: 'refuse',
      category: 'outcome_unknown',
      retry: 'after_state_check',
      recordId: UNKNOWN,
      text: 'An earlier attempt may have taken effect; check its state first.',
      record: { id: '00000000-0000-4000-8000-000000000002', eventId: q.eventId },
    }));
    const agent = wrap();
    const r = await agent.callTool({ name: 'refund_payment', arguments: ARGS }, call('Refund 40.00 EUR'));
    expect(r.refused).toEqual({
      category: 'outcome_unknown',
      retry: 'after_state_check',
      recordId: UNKNOWN,
      text: 'An earlier attempt may have taken effect; check its state first.',
    });
    expect(verdict(r)).toEqual({
      boundary: 'client',
      delivery: 'never_sent',
      category: 'outcome_unknown',
      retry: 'after_state_check',
    });
    expect(r.record.observed).toEqual({ sent: false, clientBlock: 'outcome_unknown' });
    expect(countersign.guardChecks).toEqual([
      expect.objectContaining({
        eventId: r.record.eventId,
        requestRef: 'req_integration',
        argsDigest: argsDigest(ARGS),
        tool: expect.objectContaining({ name: 'refund_payment' }),
      }),
    ]);
    expect(countersign.approvals.size).toBe(0);
    expect(harness.store.refunds.size).toBe(0);
    await agent.flush();
    expect(countersign.outcomes.map((o) => o.eventId)).not.toContain(r.record.eventId);
  });

  it('a console that cannot be asked: the write is blocked, never sent', async () => {
    const { harness, countersign, wrap } = await setup(kind);
    const agent = wrap();
    countersign.setDown(true);
    const r = await agent.callTool({ name: 'refund_payment', arguments: ARGS }, call('Refund 40.00 EUR'));
    expect(verdict(r)).toMatchObject({ delivery: 'never_sent', category: 'approval_required' });
    // The guards are asked with the staging, which could not be made: nothing was asked, nothing sent.
    expect(r.approval?.blockedBecause).toMatch(/^the approval request failed/);
    expect(harness.store.refunds.size).toBe(0);
    countersign.setDown(false);
  });

  it('a trusted read is not asked about', async () => {
    const { countersign, wrap } = await setup(kind, undefined, () => {
      throw new Error('a read was asked about');
    });
    const r = await wrap().callTool({ name: 'get_order', arguments: { orderId: '4411' } }, call('Order 4411'));
    expect(verdict(r).category).toBe('ok');
    expect(countersign.guardChecks).toEqual([]);
  });

  it('a trusted read refused by its server, called again unchanged: refused by the wrapper itself, the console not asked', async () => {
    const { countersign, wrap } = await setup(kind);
    const agent = wrap();
    const first = await agent.callTool({ name: 'get_order', arguments: { orderId: '9999' } }, call('Order 9999'));
    expect(verdict(first)).toMatchObject({ delivery: 'rejected', category: 'not_found', retry: 'after_correction' });
    const again = await agent.callTool({ name: 'get_order', arguments: { orderId: '9999' } }, call('Order 9999'));
    expect(again.refused).toMatchObject({ category: 'not_retryable', retry: 'after_correction' });
    expect(again.record.observed).toEqual({ sent: false, clientBlock: 'not_retryable' });
    expect(verdict(again)).toMatchObject({ delivery: 'never_sent', category: 'not_retryable' });
    // Another order is another call.
    const other = await agent.callTool({ name: 'get_order', arguments: { orderId: '4411' } }, call('Order 4411'));
    expect(verdict(other).category).toBe('ok');
    expect(countersign.guardChecks).toEqual([]);
  });
});
