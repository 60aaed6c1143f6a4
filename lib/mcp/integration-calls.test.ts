// The wrapper end to end (testing/mcp-integration.ts): reads, results and admission.
import { afterEach, describe, expect, it } from 'vitest';
import { LEGACY_ORDER } from '../../scripts/demo-mcp-server';
import { call, cleanUp, setup, verdict } from '../../testing/mcp-integration';
import { classifyRecord } from '../outcomes/classify';
import { argsDigest } from './digest';

afterEach(cleanUp);

describe.each(['in-memory', 'streamable-http'] as const)('over %s', (kind) => {
  it('a trusted read: completed ok, no approval asked; the record carries a digest, never arguments or result', async () => {
    const { countersign, wrap } = await setup(kind);
    const agent = wrap();
    const r = await agent.callTool({ name: 'get_order', arguments: { orderId: '4412' } }, call('Look up an order'));
    expect(verdict(r)).toEqual({ boundary: 'none', delivery: 'completed', category: 'ok', retry: 'no' });
    expect(r.result?.structuredContent).toMatchObject({ orderId: '4412', amount: 125.5 });
    expect(countersign.approvals.size).toBe(0);
    await agent.flush();
    expect(countersign.outcomes).toHaveLength(1);
    const [stored] = countersign.outcomes;
    expect(stored).toMatchObject({
      argsDigest: argsDigest({ orderId: '4412' }),
      tool: { name: 'get_order', annotations: { readOnlyHint: true } },
      attempt: 1,
    });
    expect(JSON.stringify(stored)).not.toMatch(/4412|125\.5|delivered/);
    expect(classifyRecord(stored, true)).toEqual(r.classification);
    if (kind === 'streamable-http')
      expect(stored).toMatchObject({
        observed: { httpStatus: 200 },
        mcpRequestId: expect.any(Number),
        sessionId: expect.any(String),
        protocolVersion: expect.any(String),
      });
  });

  it('invalid arguments: rejected, invalid_arguments (folded -32602)', async () => {
    const { wrap } = await setup(kind);
    const r = await wrap().callTool({ name: 'get_order', arguments: { orderId: 4411 } }, call('Look up an order'));
    expect(verdict(r)).toEqual({
      boundary: 'protocol',
      delivery: 'rejected',
      category: 'invalid_arguments',
      retry: 'after_correction',
    });
    expect(r.record.observed).toMatchObject({ jsonRpcErrorCode: -32602 });
  });

  it('an output-schema violation: completed, output_schema_violation, the content withheld', async () => {
    const { wrap } = await setup(kind);
    const r = await wrap().callTool(
      { name: 'get_invoice', arguments: { orderId: LEGACY_ORDER } },
      call('Read an invoice'),
    );
    expect(verdict(r)).toEqual({
      boundary: 'tool',
      delivery: 'completed',
      category: 'output_schema_violation',
      retry: 'no',
    });
    expect(r.result).toBeUndefined();
    expect(r.record.observed.result).toEqual({ isError: false, outputValidation: 'invalid' });
  });
});

describe('over streamable-http only: admission', () => {
  it('a bad token: 401 invalid_token while connecting, rejected, unauthenticated', async () => {
    const { wrap } = await setup('streamable-http');
    const r = await wrap('bad').callTool(
      { name: 'get_order', arguments: { orderId: '4411' } },
      call('Look up an order'),
    );
    expect(r.record.observed).toEqual({ sent: true, httpStatus: 401, authError: 'invalid_token' });
    expect(verdict(r)).toEqual({
      boundary: 'admission',
      delivery: 'rejected',
      category: 'unauthenticated',
      retry: 'after_reauth',
    });
  });

  it('a token without the scope: 403 insufficient_scope on the call, rejected, forbidden; concurrent calls keep their own statuses', async () => {
    const { wrap } = await setup('streamable-http');
    const agent = wrap('ordersOnly');
    const [refused, allowed] = await Promise.all([
      agent.callTool({ name: 'list_refunds', arguments: { orderId: '4411' } }, call('List refunds')),
      agent.callTool({ name: 'get_order', arguments: { orderId: '4411' } }, call('Look up an order')),
    ]);
    expect(refused.record.observed).toEqual({ sent: true, httpStatus: 403, authError: 'insufficient_scope' });
    expect(verdict(refused)).toEqual({
      boundary: 'admission',
      delivery: 'rejected',
      category: 'forbidden',
      retry: 'after_approval',
    });
    expect(allowed.record.observed).toMatchObject({ httpStatus: 200, result: { outputValidation: 'valid' } });
  });

  it('Countersign down: reads still work and their records wait; writes are not sent without a grant; records arrive when it is back', async () => {
    const { harness, countersign, wrap } = await setup('streamable-http');
    countersign.setDown(true);
    const agent = wrap();
    const read = await agent.callTool({ name: 'get_order', arguments: { orderId: '4411' } }, call('Look up an order'));
    expect(verdict(read).category).toBe('ok');
    const write = await agent.callTool(
      { name: 'refund_payment', arguments: { orderId: '4411', amount: 1, currency: 'EUR', idempotencyKey: 'r-down' } },
      call('Refund 1.00 EUR', { idempotencyKey: 'r-down' }),
    );
    expect(verdict(write)).toMatchObject({ delivery: 'never_sent', category: 'approval_required' });
    expect(harness.store.refunds.size).toBe(0);
    expect(await agent.flush()).toEqual({ ok: false, buffered: 2 });
    countersign.setDown(false);
    expect(await agent.flush()).toEqual({ ok: true, buffered: 0 });
    expect(countersign.outcomes.map((o) => o.eventId)).toEqual([read.record.eventId, write.record.eventId]);
  });
});
