// The gateway's read guards (read-guard.ts) on records made as the gateway makes them: the calls
// of a request reference are counted, not kept, and a success only matters after failures of the
// same call. Expected decisions are written by hand from docs/design.md's table.
import { describe, expect, it } from 'vitest';
import type { Outcome } from '@/lib/outcomes/schemas';
import { DEFAULT_BUDGETS } from '@/lib/guards/budgets';
import { ReadGuard } from './read-guard';

const OK = { sent: true, httpStatus: 200, result: { isError: false, outputValidation: 'valid' } } as const;
const FAILED = { sent: true, httpStatus: 200, result: { isError: true, errorCategory: 'unavailable' } } as const;

let n = 0;
const read = (ref: string, digest: string, observed: Outcome['observed']): Outcome => ({
  eventId: `evt_${++n}`,
  occurredAt: '2026-12-07T12:00:00Z',
  requestRef: ref,
  organization: 'acme',
  principal: 'p',
  server: 's',
  tool: { name: 'get_order', annotations: { readOnlyHint: true } },
  argsDigest: digest,
  observed,
});
const call = (ref: string, digest: string) => ({
  requestRef: ref,
  principal: 'p',
  server: 's',
  toolName: 'get_order',
  digest: () => digest,
});
const D = (c: string) => `sha256:${c.repeat(64)}`;

describe('ReadGuard', () => {
  it('counts every call of a request: with a budget of 3 calls, the 4th is refused, whatever the arguments', () => {
    const guard = new ReadGuard();
    const budgets = { ...DEFAULT_BUDGETS, calls: 3 };
    for (const c of ['1', '2', '3']) {
      expect(guard.decide(call('r', D(c)), budgets)).toEqual({ decision: 'allow' });
      guard.note(read('r', D(c), OK));
    }
    expect(guard.decide(call('r', D('4')), budgets)).toMatchObject({
      decision: 'refuse',
      category: 'budget_exhausted',
    });
    expect(guard.decide(call('other', D('4')), budgets)).toEqual({ decision: 'allow' });
  });

  it('a failure asks for the backoff; a success of the same call after it ends the run', () => {
    let now = 1_000_000;
    const guard = new ReadGuard(undefined, () => now);
    guard.note(read('r', D('a'), FAILED));
    expect(guard.decide(call('r', D('a')), DEFAULT_BUDGETS)).toEqual({
      decision: 'refuse',
      category: 'retry_too_soon',
      retry: 'backoff',
      recordId: `evt_${n}`,
      retryAfterMs: 1000,
    });
    now += 1000;
    guard.note(read('r', D('a'), OK));
    guard.note(read('r', D('a'), FAILED));
    // One failure in the run again (the success ended the first): 1 s, not 2 s.
    expect(guard.decide(call('r', D('a')), DEFAULT_BUDGETS)).toMatchObject({ retryAfterMs: 1000 });
  });

  it("a guard's own refusal is no call", () => {
    const guard = new ReadGuard();
    const budgets = { ...DEFAULT_BUDGETS, calls: 1 };
    guard.note(read('r', D('a'), { sent: false, clientBlock: 'retry_too_soon' }));
    expect(guard.decide(call('r', D('a')), budgets)).toEqual({ decision: 'allow' });
  });
});
