// The wrapper end to end (testing/mcp-integration.ts): writes, approvals, grants, uncertain writes and retries.
import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_SERVER_NAME } from '../../scripts/demo-mcp-server';
import { call, cleanUp, setup, SLOW_MS, until, verdict } from '../../testing/mcp-integration';
import { argsDigest } from './digest';
import { callToolWithRetry } from './retry';

afterEach(cleanUp);

describe.each(['in-memory', 'streamable-http'] as const)('over %s', (kind) => {
  it('a write: approval requested, grant redeemed right before the call, completed with the grant; a replay with the same key needs a new grant and does not refund twice', async () => {
    const { harness, countersign, wrap } = await setup(kind);
    const agent = wrap();
    const args = { orderId: '4411', amount: 40, currency: 'EUR', idempotencyKey: 'refund-4411-v1' };
    const first = await agent.callTool(
      { name: 'refund_payment', arguments: args },
      call('Refund 40.00 EUR', { idempotencyKey: 'refund-4411-v1' }),
    );
    expect(verdict(first)).toEqual({ boundary: 'none', delivery: 'completed', category: 'ok', retry: 'no' });
    expect(first.record.grantId).toBe(first.approval?.grantId);
    const [approval] = countersign.approvals.values();
    expect(approval).toMatchObject({
      status: 'redeemed',
      redemptions: 1,
      body: {
        server: DEMO_SERVER_NAME,
        tool: { name: 'refund_payment' },
        argsDigest: argsDigest(args),
        principal: 'user_193',
        // The arguments the tool ran with, sent beside their digest; the fake checks they agree.
        arguments: { orderId: '4411', amount: 40, currency: 'EUR', idempotencyKey: 'refund-4411-v1' },
      },
      arguments: null,
      argumentsNote: expect.stringMatching(/^erased when its grant was redeemed at \d{4}-/),
    });

    const replay = await agent.callTool(
      { name: 'refund_payment', arguments: args },
      call('Refund 40.00 EUR', { idempotencyKey: 'refund-4411-v1', attempt: 2 }),
    );
    expect(verdict(replay).category).toBe('ok');
    expect(replay.result?.structuredContent).toMatchObject({
      replayed: true,
      refundId: (first.result?.structuredContent as { refundId?: string } | undefined)?.refundId,
    });
    expect(countersign.approvals.size).toBe(2);
    expect(harness.store.refunds.size).toBe(1);
  });

  it('a denied write is never sent: never_sent, denied_by_policy, and the tool did not run', async () => {
    const { harness, countersign, wrap } = await setup(kind, () => 'deny');
    const r = await wrap().callTool(
      {
        name: 'refund_payment',
        arguments: { orderId: '4413', amount: 18, currency: 'EUR', idempotencyKey: 'refund-4413' },
      },
      call('Refund 18.00 EUR', { idempotencyKey: 'refund-4413' }),
    );
    expect(verdict(r)).toEqual({
      boundary: 'client',
      delivery: 'never_sent',
      category: 'denied_by_policy',
      retry: 'after_approval',
    });
    expect(r.record.observed).toEqual({ sent: false, clientBlock: 'denied_by_policy' });
    expect(r.record.grantId).toBeUndefined();
    expect(harness.store.refunds.size).toBe(0);
    const [approval] = countersign.approvals.values();
    expect(approval.body.arguments).toEqual({
      orderId: '4413',
      amount: 18,
      currency: 'EUR',
      idempotencyKey: 'refund-4413',
    });
    expect(approval).toMatchObject({
      arguments: null,
      argumentsNote: expect.stringMatching(/^erased when denied at /),
    });
  });

  it('no decision in time: never_sent, approval_required', async () => {
    const { harness, wrap } = await setup(kind, () => 'never');
    const client = wrap();
    (client as unknown as { options: { approval: { maxWaitMs: number } } }).options.approval.maxWaitMs = 100;
    const r = await client.callTool(
      { name: 'issue_credit', arguments: { orderId: '4411', amount: 5, currency: 'EUR', idempotencyKey: 'c-wait' } },
      call('Credit 5.00 EUR'),
    );
    expect(verdict(r)).toMatchObject({ delivery: 'never_sent', category: 'approval_required' });
    expect(harness.store.credits.size).toBe(0);
  });

  it('a client timeout after which the server completes the write: unknown, timeout, check state first', async () => {
    const { harness, wrap } = await setup(kind);
    const r = await wrap().callTool(
      { name: 'issue_credit', arguments: { orderId: '4412', amount: 10, currency: 'EUR', idempotencyKey: 'credit-1' } },
      call('Credit 10.00 EUR', { idempotencyKey: 'credit-1', timeoutMs: 100 }),
    );
    expect(verdict(r)).toEqual({
      boundary: 'client',
      delivery: 'unknown',
      category: 'timeout',
      retry: 'after_state_check',
    });
    expect(r.record.grantId).toEqual(expect.any(String));
    expect(harness.store.credits.has('credit-1')).toBe(false);
    await until(() => harness.store.credits.has('credit-1'), SLOW_MS + 1000);
  });

  it('the connection is lost during a write: unknown, connection_lost', async () => {
    const { harness, wrap } = await setup(kind);
    const agent = wrap();
    const pending = agent.callTool(
      {
        name: 'issue_credit',
        arguments: { orderId: '4411', amount: 5, currency: 'EUR', idempotencyKey: 'credit-lost' },
      },
      call('Credit 5.00 EUR', { idempotencyKey: 'credit-lost', timeoutMs: 5000 }),
    );
    // Cut the connection while the slow tool runs.
    await until(() => harness.store.pendingCredits.has('credit-lost'), 3000);
    harness.loseConnection();
    const r = await pending;
    expect(verdict(r)).toEqual({
      boundary: 'client',
      delivery: 'unknown',
      category: 'connection_lost',
      retry: 'after_state_check',
    });
  });

  it('retry helper: after the unknown, a state check that finds the write done stops; replays reuse the key and input and the server writes once', async () => {
    const { harness, wrap, countersign } = await setup(kind);
    const agent = wrap();
    const params = {
      name: 'issue_credit',
      arguments: { orderId: '4413', amount: 3, currency: 'EUR', idempotencyKey: 'credit-retry' },
    };
    const checked = await callToolWithRetry(
      agent,
      params,
      call('Credit 3.00 EUR', { idempotencyKey: 'credit-retry', timeoutMs: 100 }),
      {
        initialDelayMs: 10,
        stateCheck: async () =>
          (await until(() => harness.store.credits.has('credit-retry'), SLOW_MS + 1000).then(
            () => true,
            () => false,
          ))
            ? 'done'
            : 'unknown',
      },
    );
    expect(checked).toMatchObject({ stopped: 'state_done', state: 'done', stateReported: 200 });
    expect(checked.attempts).toHaveLength(1);
    // The verdict was posted (docs/api.md state-check): the unknown is resolved as happened.
    expect(countersign.resolutionOf(checked.final.record.eventId)).toMatchObject({
      by: 'state_check',
      verdict: 'happened',
    });

    // A state check that cannot see the write says "not done": every replay reuses the key and the
    // input, each with its own grant, and the server credits once.
    const replay = {
      name: 'issue_credit',
      arguments: { orderId: '4413', amount: 4, currency: 'EUR', idempotencyKey: 'credit-replay' },
    };
    const replayed = await callToolWithRetry(
      agent,
      replay,
      call('Credit 4.00 EUR', { idempotencyKey: 'credit-replay', timeoutMs: 250 }),
      {
        maxAttempts: 5,
        initialDelayMs: 150,
        stateCheck: async () => 'not_done',
      },
    );
    expect(replayed.stopped).toBe('succeeded');
    expect(replayed.stateReported).toBe(200);
    expect(countersign.resolutionOf(replayed.attempts[0].record.eventId)).toMatchObject({ verdict: 'did_not_happen' });
    expect(replayed.attempts.length).toBeGreaterThanOrEqual(2);
    expect(replayed.attempts.map((a) => a.record.attempt)).toEqual(replayed.attempts.map((_, i) => i + 1));
    expect(new Set(replayed.attempts.map((a) => `${a.record.idempotencyKey} ${a.record.argsDigest}`)).size).toBe(1);
    expect(new Set(replayed.attempts.map((a) => a.record.grantId)).size).toBe(replayed.attempts.length);
    expect(replayed.final.result?.structuredContent).toMatchObject({ replayed: true });
    expect([...harness.store.credits.values()].filter((c) => c.idempotencyKey === 'credit-replay')).toHaveLength(1);
  });
});
