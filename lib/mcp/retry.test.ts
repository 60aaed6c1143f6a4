import { describe, expect, it } from 'vitest';
import { classifyOutcome } from '../outcomes/classify';
import { retryValues, type Observed, type Outcome, type Retry } from '../outcomes/schemas';
import type { CallOptions, GuardedCallResult } from './countersign-client';
import { callToolWithRetry, retryStep, type StateCheckVerdict } from './retry';

const OK: Observed = { sent: true, result: { isError: false, outputValidation: 'valid' } };
const TIMEOUT: Observed = { sent: true, clientError: 'timeout' };
const UNAVAILABLE: Observed = { sent: true, httpStatus: 503 };
const INVALID: Observed = { sent: true, jsonRpcErrorCode: -32602 };
const UNAUTHENTICATED: Observed = { sent: true, httpStatus: 401 };
const FORBIDDEN: Observed = { sent: true, httpStatus: 403, authError: 'insufficient_scope' };
const BLOCKED: Observed = { sent: false, clientBlock: 'approval_required' };
const DENIED: Observed = { sent: true, result: { isError: true, errorCategory: 'denied' } };
const ELICIT: Observed = { sent: true, jsonRpcErrorCode: -32042 };

/** A scripted tool caller that records exactly what each attempt sent. */
function scripted(observations: Observed[], readOnly = false) {
  const calls: { params: { name: string; arguments?: Record<string, unknown> }; call: CallOptions }[] = [];
  return {
    calls,
    async callTool(
      params: { name: string; arguments?: Record<string, unknown> },
      call: CallOptions,
    ): Promise<GuardedCallResult> {
      calls.push({ params: structuredClone(params), call: { ...call } });
      const observed = observations[Math.min(calls.length - 1, observations.length - 1)];
      const classification = classifyOutcome({
        observed,
        annotations: { readOnlyHint: readOnly },
        serverTrusted: true,
      });
      return { classification, record: { observed } as Outcome };
    },
  };
}

const CALL: CallOptions = { requestRef: 'req_1', idempotencyKey: 'refund-4411-v1', summary: 'Refund 40.00 EUR' };
const PARAMS = { name: 'refund_payment', arguments: { orderId: '4411', amount: 40 } };
const noWait = { sleep: async () => {}, random: () => 0 };

describe('retryStep', () => {
  const expected: Record<Retry, string> = {
    no: 'stop',
    backoff: 'backoff',
    after_state_check: 'check_state',
    after_correction: 'stop',
    after_reauth: 'stop',
    after_approval: 'stop',
    after_input: 'stop',
  };
  it.each(retryValues.map((r) => [r, expected[r]]))('%s → %s', (retry, step) => {
    expect(retryStep({ retry: retry as Retry })).toBe(step);
  });
});

describe('callToolWithRetry', () => {
  it.each([
    ['invalid arguments', INVALID],
    ['unauthenticated', UNAUTHENTICATED],
    ['forbidden', FORBIDDEN],
    ['blocked for approval', BLOCKED],
    ['denied by the tool', DENIED],
    ['input required', ELICIT],
  ])('never retries %s automatically', async (_name, observed) => {
    const tool = scripted([observed, OK]);
    const out = await callToolWithRetry(tool, PARAMS, CALL, noWait);
    expect(tool.calls).toHaveLength(1);
    expect(out.stopped).toBe('not_retryable');
  });

  it('a success stops at once', async () => {
    const tool = scripted([OK]);
    expect(await callToolWithRetry(tool, PARAMS, CALL, noWait)).toMatchObject({ stopped: 'succeeded', attempts: [{}] });
  });

  it('backs off on a retryable refusal with growing waits, bounded in attempts, numbering each attempt', async () => {
    const waits: number[] = [];
    const tool = scripted([UNAVAILABLE]);
    const out = await callToolWithRetry(tool, PARAMS, CALL, {
      maxAttempts: 4,
      initialDelayMs: 100,
      maxDelayMs: 10_000,
      random: Math.random,
      sleep: async (ms) => void waits.push(ms),
    });
    expect(out.stopped).toBe('attempts_exhausted');
    expect(tool.calls.map((c) => c.call.attempt)).toEqual([1, 2, 3, 4]);
    expect(waits).toHaveLength(3);
    for (let i = 1; i < waits.length; i++) expect(waits[i]).toBeGreaterThan(waits[i - 1]);
    expect(waits[0]).toBeGreaterThanOrEqual(100);
  });

  it('an uncertain write without a state check is not replayed', async () => {
    const tool = scripted([TIMEOUT, OK]);
    const out = await callToolWithRetry(tool, PARAMS, CALL, noWait);
    expect(out.stopped).toBe('no_state_check');
    expect(tool.calls).toHaveLength(1);
  });

  it.each([
    ['done', 'state_done', 1],
    ['unknown', 'state_unknown', 1],
    ['not_done', 'succeeded', 2],
  ] as const)('after an uncertain write the state check says %s → %s', async (verdict, stopped, calls) => {
    const tool = scripted([TIMEOUT, OK]);
    const seen: GuardedCallResult[] = [];
    const out = await callToolWithRetry(tool, PARAMS, CALL, {
      ...noWait,
      stateCheck: async (last) => {
        seen.push(last);
        return verdict as StateCheckVerdict;
      },
    });
    expect(out).toMatchObject({ stopped, state: verdict });
    expect(tool.calls).toHaveLength(calls);
    expect(seen[0].classification).toMatchObject({ delivery: 'unknown', retry: 'after_state_check' });
  });

  it('a replay sends the SAME input under the SAME idempotency key, even if the caller mutates its object', async () => {
    const tool = scripted([TIMEOUT, TIMEOUT, OK]);
    const params = { name: 'refund_payment', arguments: { orderId: '4411', amount: 40 } };
    const out = callToolWithRetry(tool, params, CALL, { ...noWait, stateCheck: async () => 'not_done' });
    params.arguments.amount = 400;
    await out;
    expect(tool.calls).toHaveLength(3);
    for (const c of tool.calls) {
      expect(c.params).toEqual({ name: 'refund_payment', arguments: { orderId: '4411', amount: 40 } });
      expect(c.call.idempotencyKey).toBe('refund-4411-v1');
      expect(c.call.requestRef).toBe('req_1');
    }
  });

  it('an uncertain trusted read is retried with backoff, no state check needed', async () => {
    const tool = scripted([TIMEOUT, OK], true);
    const out = await callToolWithRetry(tool, { name: 'get_order', arguments: { orderId: '4411' } }, CALL, noWait);
    expect(out.stopped).toBe('succeeded');
    expect(tool.calls).toHaveLength(2);
  });

  it('an abort stops between attempts', async () => {
    const controller = new AbortController();
    const tool = scripted([UNAVAILABLE]);
    const out = await callToolWithRetry(tool, PARAMS, CALL, {
      signal: controller.signal,
      sleep: async () => controller.abort(),
    });
    expect(out.stopped).toBe('aborted');
    expect(tool.calls).toHaveLength(1);
  });
});
