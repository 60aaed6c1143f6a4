// decideGuard against docs/design.md's guard table, row by row. The expected answers are written by
// hand from the table, not derived from the code.
import { describe, expect, it } from 'vitest';
import { DEFAULT_BUDGETS } from './budgets';
import { decideGuard, guardText, type GuardCall, type GuardDecision, type GuardRecord } from './decide';

const D1 = `sha256:${'1'.repeat(64)}`;
const D2 = `sha256:${'2'.repeat(64)}`;
const NOW = new Date('2026-12-08T12:00:00.000Z');
const ago = (ms: number) => new Date(NOW.getTime() - ms);

let seq = 0;
/** An earlier record of the same principal, server and tool, digest D1, request req-1, received a minute ago. */
const rec = (id: string, over: Partial<GuardRecord> = {}): GuardRecord => ({
  id,
  requestRef: 'req-1',
  principal: 'user-1',
  server: 'billing-mcp',
  toolName: 'refund_payment',
  argsDigest: D1,
  idempotencyKey: null,
  taskId: null,
  delivery: 'completed',
  category: 'ok',
  retry: 'no',
  readOnly: false,
  resolutionBy: null,
  resolutionVerdict: null,
  receivedAt: ago(60_000),
  receivedSeq: ++seq,
  ...over,
});
const unknown = (id: string, over: Partial<GuardRecord> = {}) =>
  rec(id, { delivery: 'unknown', category: 'timeout', retry: 'after_state_check', ...over });
const failed = (id: string, over: Partial<GuardRecord> = {}) =>
  rec(id, { delivery: 'rejected', category: 'unavailable', retry: 'backoff', ...over });
const guardRefusal = (id: string, category: GuardRecord['category'], over: Partial<GuardRecord> = {}) =>
  rec(id, { delivery: 'never_sent', category, retry: 'no', ...over });

const write: GuardCall = {
  requestRef: 'req-1',
  principal: 'user-1',
  server: 'billing-mcp',
  toolName: 'refund_payment',
  argsDigest: D1,
  idempotencyKey: null,
  readOnly: false,
};
const read: GuardCall = { ...write, readOnly: true };
const allow: GuardDecision = { decision: 'allow' };
const refuse = (category: string, retry: string, recordId?: string, retryAfterMs?: number) => ({
  decision: 'refuse',
  category,
  retry,
  ...(recordId ? { recordId } : {}),
  ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
});

// [case, history, call, expected]
const TABLE: [string, GuardRecord[], GuardCall, unknown][] = [
  ['no history', [], write, allow],
  [
    'an earlier ok in another request (writes are not deduplicated across requests)',
    [rec('a', { requestRef: 'req-0' })],
    write,
    allow,
  ],

  // Row 1: outcome_unknown.
  ['1: an unresolved unknown, same digest', [unknown('u')], write, refuse('outcome_unknown', 'after_state_check', 'u')],
  [
    '1: in another request reference too',
    [unknown('u', { requestRef: 'req-0' })],
    write,
    refuse('outcome_unknown', 'after_state_check', 'u'),
  ],
  [
    '1: the unknown carried a key, this call another',
    [unknown('u', { idempotencyKey: 'k1' })],
    { ...write, idempotencyKey: 'k2' },
    refuse('outcome_unknown', 'after_state_check', 'u'),
  ],
  [
    "1: this call carries the unknown attempt's key: a safe replay",
    [unknown('u', { idempotencyKey: 'k1' })],
    { ...write, idempotencyKey: 'k1' },
    allow,
  ],
  ['1: an unknown of other arguments is another operation', [unknown('u', { argsDigest: D2 })], write, allow],
  ["1: an unknown of another principal is not this one's", [unknown('u', { principal: 'user-2' })], write, allow],
  [
    '1: a state check did_not_happen releases it',
    [unknown('u', { resolutionBy: 'state_check', resolutionVerdict: 'did_not_happen' })],
    write,
    allow,
  ],
  [
    '1: a later record that settled it releases it too',
    [unknown('u', { resolutionBy: 'record', resolutionVerdict: 'did_not_happen' })],
    write,
    allow,
  ],
  ['1: a trusted read-only call is not guarded by it', [unknown('u')], read, allow],

  // Row 2: already_done.
  [
    '2: a state check said happened (same request)',
    [unknown('u', { resolutionBy: 'state_check', resolutionVerdict: 'happened' })],
    write,
    refuse('already_done', 'no', 'u'),
  ],
  [
    '2: happened, but in another request reference',
    [unknown('u', { requestRef: 'req-0', resolutionBy: 'state_check', resolutionVerdict: 'happened' })],
    write,
    allow,
  ],
  ['2: an earlier attempt completed ok in this request', [rec('ok1')], write, refuse('already_done', 'no', 'ok1')],
  [
    '2: completed with an output-schema violation is not ok',
    [rec('v', { category: 'output_schema_violation' })],
    write,
    allow,
  ],
  ['2: a read may be repeated', [rec('ok1', { readOnly: true })], read, allow],
  [
    '2: the same key again is the same operation',
    [rec('ok1', { idempotencyKey: 'k1' })],
    { ...write, idempotencyKey: 'k1' },
    refuse('already_done', 'no', 'ok1'),
  ],
  [
    '2: a call without a key repeats the completed operation, whatever its key was',
    [rec('ok1', { idempotencyKey: 'k1' })],
    write,
    refuse('already_done', 'no', 'ok1'),
  ],
  [
    '2: a key of its own is another operation with the same arguments',
    [rec('ok1', { idempotencyKey: 'k1' }), rec('ok2')],
    { ...write, idempotencyKey: 'k2' },
    allow,
  ],

  // Row 3: idempotency_key_reused.
  [
    '3: the same key with another digest',
    [rec('k', { argsDigest: D2, idempotencyKey: 'k1', requestRef: 'req-0' })],
    { ...write, idempotencyKey: 'k1' },
    refuse('idempotency_key_reused', 'after_correction', 'k'),
  ],
  [
    '3: the same key and digest is its replay',
    [failed('k', { idempotencyKey: 'k1', receivedAt: ago(600_000) })],
    { ...write, idempotencyKey: 'k1' },
    allow,
  ],
  [
    '3: an earlier record without a digest matches nothing',
    [rec('k', { argsDigest: null, idempotencyKey: 'k1' })],
    { ...write, idempotencyKey: 'k1' },
    allow,
  ],
  [
    '3: reads are not guarded by keys',
    [rec('k', { argsDigest: D2, idempotencyKey: 'k1', readOnly: true })],
    { ...read, idempotencyKey: 'k1' },
    allow,
  ],

  // Row 4: not_retryable, with the earlier refusal's retry.
  [
    '4: after validation (after_correction)',
    [rec('v', { delivery: 'rejected', category: 'validation', retry: 'after_correction' })],
    write,
    refuse('not_retryable', 'after_correction', 'v'),
  ],
  [
    '4: after forbidden (after_approval)',
    [rec('f', { delivery: 'rejected', category: 'forbidden', retry: 'after_approval' })],
    write,
    refuse('not_retryable', 'after_approval', 'f'),
  ],
  [
    '4: a protocol error is about the message, not the call: its corrected message may go',
    [rec('p', { delivery: 'rejected', category: 'protocol_error', retry: 'no' })],
    write,
    allow,
  ],
  [
    '5: no backoff after a protocol error',
    [rec('p', { delivery: 'rejected', category: 'protocol_error', retry: 'no', receivedAt: ago(10) })],
    write,
    allow,
  ],
  [
    '4: after denied (no), a read too',
    [rec('d', { delivery: 'rejected', category: 'denied', retry: 'no', readOnly: true })],
    read,
    refuse('not_retryable', 'no', 'd'),
  ],
  [
    '4: other arguments are another call',
    [rec('v', { delivery: 'rejected', category: 'validation', retry: 'after_correction', argsDigest: D2 })],
    read,
    allow,
  ],
  [
    '4: a later attempt that went through lifts it',
    [
      rec('f', { delivery: 'rejected', category: 'forbidden', retry: 'after_approval', readOnly: true }),
      rec('ok1', { readOnly: true }),
    ],
    read,
    allow,
  ],
  [
    '4: a local block is no refusal by the server',
    [rec('b', { delivery: 'never_sent', category: 'approval_required', retry: 'after_approval' })],
    write,
    allow,
  ],
  [
    '4: a guard refusal with retry no is no refusal either',
    [guardRefusal('g', 'budget_exhausted', { requestRef: 'req-0' })],
    write,
    allow,
  ],

  // Row 5: retry_too_soon (1 s doubling, at most 60 s), since the last failure's receipt.
  [
    '5: one failure 400 ms ago: 600 ms left',
    [failed('f1', { receivedAt: ago(400) })],
    read,
    refuse('retry_too_soon', 'backoff', 'f1', 600),
  ],
  ['5: one failure 1 s ago: allowed', [failed('f1', { receivedAt: ago(1000) })], read, allow],
  [
    '5: three failures in a row, the last 3 s ago: 4 s wanted',
    [
      failed('f1', { receivedAt: ago(20_000) }),
      failed('f2', { receivedAt: ago(10_000) }),
      failed('f3', { receivedAt: ago(3000) }),
    ],
    read,
    refuse('retry_too_soon', 'backoff', 'f3', 1000),
  ],
  [
    '5: at most 60 s: ten failures, the last 59 s ago',
    Array.from({ length: 10 }, (_, i) =>
      failed(`f${i}`, { requestRef: `req-${i}`, receivedAt: ago(i === 9 ? 59_000 : 900_000 - i * 1000) }),
    ),
    read,
    refuse('retry_too_soon', 'backoff', 'f9', 1000),
  ],
  [
    '5: at most 60 s: ten failures, the last 60 s ago',
    Array.from({ length: 10 }, (_, i) =>
      failed(`f${i}`, { requestRef: `req-${i}`, receivedAt: ago(i === 9 ? 60_000 : 900_000 - i * 1000) }),
    ),
    read,
    allow,
  ],
  [
    '5: a completed attempt ends the row of failures',
    [
      failed('f1', { receivedAt: ago(5000) }),
      rec('ok1', { readOnly: true, receivedAt: ago(4000) }),
      failed('f2', { receivedAt: ago(1500) }),
    ],
    read,
    allow,
  ],
  [
    '5: an unknown write retried under its key waits too',
    [unknown('u', { idempotencyKey: 'k1', receivedAt: ago(100) })],
    { ...write, idempotencyKey: 'k1' },
    refuse('retry_too_soon', 'backoff', 'u', 900),
  ],
  ['5: other arguments are another call', [failed('f1', { argsDigest: D2, receivedAt: ago(100) })], read, allow],

  // Row 6: budgets. With 5 failed attempts allowed, the 6th is refused: 4 earlier failures allow a
  // 5th, 5 refuse a 6th. Calls: 199 earlier allow the 200th, 200 refuse the 201st.
  [
    '6: 4 failed attempts of the tool in the request: the 5th is allowed',
    Array.from({ length: 4 }, (_, i) => failed(`f${i}`, { argsDigest: `sha256:${String(i + 3).repeat(64)}` })),
    read,
    allow,
  ],
  [
    '6: 5 failed attempts: the 6th is refused',
    Array.from({ length: 5 }, (_, i) =>
      failed(`f${i}`, { argsDigest: `sha256:${String(i + 3).repeat(64)}`, receivedSeq: i }),
    ),
    read,
    refuse('budget_exhausted', 'no', 'f4'),
  ],
  [
    '6: failures in another request reference do not count',
    Array.from({ length: 5 }, (_, i) =>
      failed(`f${i}`, { argsDigest: `sha256:${String(i + 3).repeat(64)}`, requestRef: 'req-0' }),
    ),
    read,
    allow,
  ],
  [
    '6: the records of one task are one attempt',
    Array.from({ length: 5 }, (_, i) =>
      unknown(`t${i}`, { taskId: 'task-1', argsDigest: D2, readOnly: true, delivery: 'rejected' }),
    ),
    read,
    allow,
  ],
  [
    '6: 199 calls of the server: the 200th is allowed',
    Array.from({ length: 199 }, (_, i) => rec(`c${i}`, { toolName: `tool_${i}`, readOnly: true })),
    read,
    allow,
  ],
  [
    '6: 200 calls: the 201st is refused',
    Array.from({ length: 200 }, (_, i) => rec(`c${i}`, { toolName: `tool_${i}`, readOnly: true, receivedSeq: i })),
    read,
    refuse('budget_exhausted', 'no', 'c199'),
  ],
  [
    '6: guard refusals are no calls',
    Array.from({ length: 200 }, (_, i) => guardRefusal(`g${i}`, 'retry_too_soon')),
    read,
    allow,
  ],
  [
    '6: guard refusals are no failed attempts',
    Array.from({ length: 5 }, (_, i) => guardRefusal(`g${i}`, 'outcome_unknown')),
    read,
    allow,
  ],

  // Row 7: hold after a permission refusal in the request, writes only.
  [
    '7: a write after a forbidden call of another tool',
    [rec('f', { toolName: 'list_refunds', delivery: 'rejected', category: 'forbidden', retry: 'after_approval' })],
    write,
    { decision: 'hold', recordId: 'f' },
  ],
  [
    '7: after unauthenticated by another principal in the request',
    [
      rec('n', {
        principal: 'user-2',
        server: 'crm-mcp',
        delivery: 'rejected',
        category: 'unauthenticated',
        retry: 'after_reauth',
      }),
    ],
    write,
    { decision: 'hold', recordId: 'n' },
  ],
  [
    '7: after denied by policy (a local block), naming the first refusal',
    [
      rec('p', { toolName: 'x', delivery: 'never_sent', category: 'denied_by_policy', retry: 'after_approval' }),
      rec('q', { toolName: 'y', delivery: 'rejected', category: 'denied', retry: 'no' }),
    ],
    write,
    { decision: 'hold', recordId: 'p' },
  ],
  [
    '7: a read is not held',
    [rec('f', { toolName: 'list_refunds', delivery: 'rejected', category: 'forbidden', retry: 'after_approval' })],
    read,
    allow,
  ],
  [
    '7: a refusal in another request does not hold this one',
    [
      rec('f', {
        requestRef: 'req-0',
        toolName: 'x',
        delivery: 'rejected',
        category: 'forbidden',
        retry: 'after_approval',
      }),
    ],
    write,
    allow,
  ],

  // First match wins.
  [
    'order: 1 before 2 (an open unknown and an ok)',
    [rec('ok1'), unknown('u')],
    write,
    refuse('outcome_unknown', 'after_state_check', 'u'),
  ],
  [
    'order: 2 before 3',
    [rec('ok1', { idempotencyKey: 'k1' }), rec('k', { argsDigest: D2, idempotencyKey: 'k1' })],
    { ...write, idempotencyKey: 'k1' },
    refuse('already_done', 'no', 'ok1'),
  ],
  [
    'order: 3 before 4',
    [
      rec('v', { delivery: 'rejected', category: 'validation', retry: 'after_correction' }),
      rec('k', { argsDigest: D2, idempotencyKey: 'k1' }),
    ],
    { ...write, idempotencyKey: 'k1' },
    refuse('idempotency_key_reused', 'after_correction', 'k'),
  ],
  [
    'order: 4 before 5 (a fresh refusal)',
    [rec('v', { delivery: 'rejected', category: 'validation', retry: 'after_correction', receivedAt: ago(10) })],
    read,
    refuse('not_retryable', 'after_correction', 'v'),
  ],
  // Five failures in a row: 16 s wanted after the last, received 2 s ago.
  [
    'order: 5 before 6',
    Array.from({ length: 5 }, (_, i) => failed(`f${i}`, { receivedAt: ago(i === 4 ? 2000 : 100_000 - i * 1000) })),
    read,
    refuse('retry_too_soon', 'backoff', 'f4', 14_000),
  ],
  [
    'order: 6 before 7',
    [
      rec('f', { toolName: 'x', delivery: 'rejected', category: 'forbidden', retry: 'after_approval' }),
      ...Array.from({ length: 5 }, (_, i) =>
        failed(`f${i}`, { argsDigest: `sha256:${String(i + 3).repeat(64)}`, receivedSeq: 1000 + i }),
      ),
    ],
    write,
    refuse('budget_exhausted', 'no', 'f4'),
  ],
  [
    'order: 1 before 7',
    [rec('f', { toolName: 'x', delivery: 'rejected', category: 'forbidden', retry: 'after_approval' }), unknown('u')],
    write,
    refuse('outcome_unknown', 'after_state_check', 'u'),
  ],
];

describe('decideGuard: docs/design.md guard table', () => {
  it.each(TABLE)('%s', (_name, history, call, expected) => {
    expect(decideGuard(history, call, DEFAULT_BUDGETS, NOW)).toEqual(expected);
  });

  it('guard refusals in the history change nothing', () => {
    for (const [, history, call, expected] of TABLE) {
      const noise = ['outcome_unknown', 'not_retryable', 'retry_too_soon', 'budget_exhausted'].map((c, i) =>
        guardRefusal(`noise${i}`, c as GuardRecord['category'], { receivedAt: ago(1) }),
      );
      expect(decideGuard([...history, ...noise], call, DEFAULT_BUDGETS, NOW)).toEqual(expected);
    }
  });

  it('reads the history in receipt order, whatever order it comes in', () => {
    const history = [failed('f1', { receivedAt: ago(400) }), rec('ok1', { readOnly: true, receivedAt: ago(5000) })];
    expect(decideGuard(history, read, DEFAULT_BUDGETS, NOW)).toEqual(refuse('retry_too_soon', 'backoff', 'f1', 600));
    expect(decideGuard([...history].reverse(), read, DEFAULT_BUDGETS, NOW)).toEqual(
      refuse('retry_too_soon', 'backoff', 'f1', 600),
    );
  });

  it('budgets other than the defaults', () => {
    const failures = [
      failed('f1', { receivedAt: ago(100_000) }),
      failed('f2', { argsDigest: D2, receivedAt: ago(100_000) }),
    ];
    expect(decideGuard(failures, read, { ...DEFAULT_BUDGETS, failedAttempts: 2 }, NOW)).toMatchObject({
      category: 'budget_exhausted',
    });
    expect(
      decideGuard([failed('f1', { receivedAt: ago(1500) })], read, { ...DEFAULT_BUDGETS, backoffBaseMs: 2000 }, NOW),
    ).toEqual(refuse('retry_too_soon', 'backoff', 'f1', 500));
  });

  it('says in one sentence what was not done and what to do', () => {
    const texts = [
      guardText({ decision: 'hold', recordId: 'r1' }, 'refund_payment'),
      guardText(
        { decision: 'refuse', category: 'outcome_unknown', retry: 'after_state_check', recordId: 'r1' },
        'refund_payment',
      ),
      guardText(
        { decision: 'refuse', category: 'retry_too_soon', retry: 'backoff', recordId: 'r1', retryAfterMs: 1500 },
        'refund_payment',
      ),
      guardText(
        { decision: 'refuse', category: 'not_retryable', retry: 'after_correction', recordId: 'r1' },
        'refund_payment',
      ),
    ];
    for (const t of texts) expect(t).toMatch(/^The call to refund_payment was not sent: [^.]+\.$/);
    expect(texts[2]).toContain('wait 2 s');
    expect(texts[3]).toContain('correct the input first');
  });
});
