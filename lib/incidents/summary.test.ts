import { describe, expect, it } from 'vitest';
import { oneSentence, summarizeIncident } from './summary';
import { story, type Step } from '../../testing/incident-records';
import { detectFindings } from './findings';
import type { IncidentRecord, IncidentSummary } from './types';
import { classifyOutcome } from '@/lib/outcomes/classify';
import type { Observed, ObservedTask } from '@/lib/outcomes/schemas';

const refund = (more: Omit<Step, 'obs'> & { obs: Step['obs'] }): Step => ({
  summary: 'Refund 40.00 EUR on order 4411',
  ...more,
});
const read = { tool: 'get_order', server: 'orders-mcp', read: true, summary: 'Read order 4411' } as const;

type Lists = Pick<IncidentSummary, 'done' | 'notDone' | 'unknown'>;
const none: Lists = { done: [], notDone: [], unknown: [] };

describe('summarizeIncident', () => {
  it.each<[string, Step[], Partial<Lists>]>([
    [
      'a write replayed under its key after an unknown outcome is done',
      [refund({ obs: 'timeout', key: 'refund-4411-v1' }), refund({ obs: 'ok', key: 'refund-4411-v1' })],
      { done: ['refund_payment on billing-mcp: Refund 40.00 EUR on order 4411 (2 attempts)'] },
    ],
    [
      'a completed read is done, and says read',
      [{ obs: 'ok', ...read }],
      { done: ['get_order on orders-mcp: Read order 4411 (read)'] },
    ],
    [
      'a later refusal does not undo a completed write',
      [refund({ obs: 'ok', key: 'k' }), refund({ obs: 'conflict', key: 'k' })],
      { done: ['refund_payment on billing-mcp: Refund 40.00 EUR on order 4411 (2 attempts)'] },
    ],
    [
      'a refused write is not done, with its category',
      [refund({ obs: 'forbidden' })],
      { notDone: ['refund_payment on billing-mcp: Refund 40.00 EUR on order 4411 (refused: forbidden)'] },
    ],
    [
      'a blocked write is not done',
      [refund({ obs: 'approvalRequired' })],
      { notDone: ['refund_payment on billing-mcp: Refund 40.00 EUR on order 4411 (never sent: approval required)'] },
    ],
    [
      'the latest refusal decides',
      [refund({ obs: 'rateLimited', key: 'k' }), refund({ obs: 'forbidden', key: 'k' })],
      { notDone: ['refund_payment on billing-mcp: Refund 40.00 EUR on order 4411 (refused: forbidden; 2 attempts)'] },
    ],
    [
      'an unknown write is unknown, with its key',
      [refund({ obs: 'timeout', key: 'refund-4411-v1' })],
      {
        unknown: [
          'refund_payment on billing-mcp: Refund 40.00 EUR on order 4411 (timeout; key refund-4411-v1): it may have taken effect; check before repeating',
        ],
      },
    ],
    [
      'an unknown write stays unknown after a later refusal',
      [refund({ obs: 'upstream', key: 'k' }), refund({ obs: 'forbidden', key: 'k' })],
      {
        unknown: [
          'refund_payment on billing-mcp: Refund 40.00 EUR on order 4411 (upstream failure; 2 attempts; key k): it may have taken effect; check before repeating',
        ],
      },
    ],
    [
      'a write whose result broke its schema is unknown',
      [refund({ obs: 'schemaViolation' })],
      {
        unknown: [
          'refund_payment on billing-mcp: Refund 40.00 EUR on order 4411 (output schema violation): it ran, but its result is no evidence of what was done; check before repeating',
        ],
      },
    ],
    [
      'a read whose result broke its schema is not done',
      [{ obs: 'schemaViolation', ...read }],
      { notDone: ['get_order on orders-mcp: Read order 4411 (read result unusable: output schema violation)'] },
    ],
    [
      'a read that timed out is not done',
      [{ obs: 'timeout', ...read }],
      { notDone: ['get_order on orders-mcp: Read order 4411 (read failed: timeout)'] },
    ],
    [
      'a read that met an upstream error is not done',
      [{ obs: 'upstream', ...read }],
      { notDone: ['get_order on orders-mcp: Read order 4411 (read failed: upstream failure)'] },
    ],
    [
      'another key is another operation',
      [refund({ obs: 'connectionLost', key: 'v1' }), refund({ obs: 'ok', key: 'retry' })],
      {
        done: ['refund_payment on billing-mcp: Refund 40.00 EUR on order 4411'],
        unknown: [
          'refund_payment on billing-mcp: Refund 40.00 EUR on order 4411 (connection lost; key v1): it may have taken effect; check before repeating',
        ],
      },
    ],
    [
      'corrected input is another operation',
      [refund({ obs: 'validation' }), refund({ obs: 'ok', args: 'fixed', summary: 'Refund 40.00 EUR on order 4412' })],
      {
        done: ['refund_payment on billing-mcp: Refund 40.00 EUR on order 4412'],
        notDone: ['refund_payment on billing-mcp: Refund 40.00 EUR on order 4411 (refused: validation)'],
      },
    ],
    [
      'no key and no digest: each call stands alone',
      [refund({ obs: 'ok', args: null }), refund({ obs: 'forbidden', args: null })],
      {
        done: ['refund_payment on billing-mcp: Refund 40.00 EUR on order 4411'],
        notDone: ['refund_payment on billing-mcp: Refund 40.00 EUR on order 4411 (refused: forbidden)'],
      },
    ],
    ['no summary: the call alone', [{ obs: 'ok', summary: null }], { done: ['refund_payment on billing-mcp'] }],
    [
      'the first summary names the operation, on one line',
      [
        refund({ obs: 'timeout', key: 'k', summary: null }),
        refund({ obs: 'ok', key: 'k', summary: '  Refund\n40.00   EUR ' }),
        refund({ obs: 'ok', key: 'k', summary: 'Refund (replay)' }),
      ],
      { done: ['refund_payment on billing-mcp: Refund 40.00 EUR (3 attempts)'] },
    ],
  ])('%s', (_name, steps, expected) => {
    const { done, notDone, unknown } = summarizeIncident(story(...steps));
    expect({ done, notDone, unknown }).toEqual({ ...none, ...expected });
  });

  it('lists operations by their first attempt, whatever the input order, and names unknown tools once', () => {
    const records = story(
      { obs: 'timeout', tool: 'cancel_order', key: 'c1', summary: 'Cancel order 1' },
      { obs: 'ok', ...read },
      { obs: 'timeout', tool: 'cancel_order', key: 'c2', summary: 'Cancel order 2' },
      { obs: 'upstream', tool: 'refund_payment', key: 'r1', summary: 'Refund' },
    );
    const summary = summarizeIncident([...records].reverse());
    expect(summary.unknown.map((s) => s.split(' (')[0])).toEqual([
      'cancel_order on billing-mcp: Cancel order 1',
      'cancel_order on billing-mcp: Cancel order 2',
      'refund_payment on billing-mcp: Refund',
    ]);
    expect(summary.unknownTools).toEqual(['cancel_order', 'refund_payment']);
    expect(oneSentence(summary)).toBe(
      '1 operation done, 3 unknown: check before repeating cancel_order and refund_payment.',
    );
  });

  it('summarizes nothing as nothing', () => {
    expect(summarizeIncident([])).toEqual({ done: [], notDone: [], unknown: [], unknownTools: [] });
  });
});

describe('oneSentence', () => {
  const n = (count: number) => Array.from({ length: count }, (_, i) => `op ${i}`);
  it.each<[string, Lists & { unknownTools?: string[] }, string]>([
    ['nothing recorded', { done: [], notDone: [], unknown: [] }, 'No operations were recorded.'],
    [
      'all three',
      { done: n(2), notDone: n(1), unknown: n(1), unknownTools: ['cancel_order'] },
      '2 operations done, 1 not done, 1 unknown: check before repeating cancel_order.',
    ],
    ['one done', { done: n(1), notDone: [], unknown: [] }, '1 operation done.'],
    ['done and not done', { done: n(1), notDone: n(3), unknown: [] }, '1 operation done, 3 not done.'],
    ['nothing done', { done: [], notDone: n(2), unknown: [] }, 'Nothing was done: 2 operations not done.'],
    [
      'only unknown, without tool names',
      { done: [], notDone: [], unknown: n(1) },
      '1 operation unknown: check before repeating it.',
    ],
    [
      'several unknown, without tool names',
      { done: [], notDone: n(1), unknown: n(2) },
      '1 operation not done, 2 unknown: check before repeating them.',
    ],
  ])('%s', (_name, summary, expected) => {
    expect(oneSentence(summary)).toBe(expected);
  });
});

describe('summarizeIncident: resolved unknowns (docs/design.md "Resolving an unknown")', () => {
  const at = new Date('2026-11-30T12:05:00Z');
  const unknownRefund = () => story(refund({ obs: 'timeout', key: 'refund-4411-v1' }));

  it('an unresolved unknown is "check before repeating"', () => {
    expect(summarizeIncident(unknownRefund()).unknown).toHaveLength(1);
  });

  it('a state check that found it happened moves it to done, saying how and by whom', () => {
    const [r] = unknownRefund();
    const s = summarizeIncident([
      { ...r, resolution: { by: 'state_check', verdict: 'happened', at, who: 'Ana (ana@example.test)', note: 'n' } },
    ]);
    expect(s).toMatchObject({
      unknown: [],
      notDone: [],
      done: [
        'refund_payment on billing-mcp: Refund 40.00 EUR on order 4411 (key refund-4411-v1; it happened, resolved by a state check (Ana (ana@example.test)): n)',
      ],
    });
  });

  it('a state check that found it did not happen moves it to not done', () => {
    const [r] = unknownRefund();
    const s = summarizeIncident([
      { ...r, resolution: { by: 'state_check', verdict: 'did_not_happen', at, who: 'Bo' } },
    ]);
    expect(s).toMatchObject({
      unknown: [],
      done: [],
      notDone: [
        'refund_payment on billing-mcp: Refund 40.00 EUR on order 4411 (key refund-4411-v1; it did not happen, resolved by a state check (Bo))',
      ],
    });
  });

  it('resolved by a later refusal of the same operation: not done, naming the record', () => {
    const [u, later] = story(
      refund({ obs: 'timeout', key: 'refund-4411-v1' }),
      refund({ obs: 'validation', key: 'refund-4411-v1' }),
    );
    const s = summarizeIncident([
      { ...u, resolution: { by: 'record', verdict: 'did_not_happen', recordId: later.id, at, who: 'support-bot' } },
      later,
    ]);
    expect(s.unknown).toEqual([]);
    expect(s.notDone).toEqual([
      'refund_payment on billing-mcp: Refund 40.00 EUR on order 4411 (refused: validation; 2 attempts; it did not happen, resolved by a later record (support-bot))',
    ]);
  });

  it('one attempt resolved as not done, a later one still unknown: still check before repeating', () => {
    const [a, b] = story(refund({ obs: 'timeout', key: 'k' }), refund({ obs: 'timeout', key: 'k' }));
    const s = summarizeIncident([{ ...a, resolution: { by: 'state_check', verdict: 'did_not_happen', at } }, b]);
    expect(s.unknown).toHaveLength(1);
  });
});

// docs/design.md "Resolving an unknown": an operation is one idempotency key with one argument
// digest, or one MCP task id; without a key (or without a digest), one attempt. Every expected
// sentence below is written from that rule, not read back from the code.
describe('summarizeIncident: operations', () => {
  const at = new Date('2026-11-30T12:05:00Z');
  const UNKNOWN_4411 =
    'refund_payment on billing-mcp: Refund 40.00 EUR on order 4411 (timeout; key k): it may have taken effect; check before repeating';

  const summarize = (records: IncidentRecord[]) => {
    const s = summarizeIncident(records);
    return { done: s.done, notDone: s.notDone, unknown: s.unknown, sentence: oneSentence(s) };
  };

  it('same key and digest: one operation, which the later completion settles', () => {
    const [u, ok] = story(refund({ obs: 'timeout', key: 'k' }), refund({ obs: 'ok', key: 'k' }));
    const resolved = {
      ...u,
      resolution: { by: 'record' as const, verdict: 'happened' as const, recordId: ok.id, at, who: 'support-bot' },
    };
    expect(summarize([resolved, ok])).toEqual({
      done: [
        'refund_payment on billing-mcp: Refund 40.00 EUR on order 4411 (2 attempts; it happened, resolved by a later record (support-bot))',
      ],
      notDone: [],
      unknown: [],
      sentence: '1 operation done.',
    });
  });

  it('same key, other arguments: two operations, the earlier one still unknown', () => {
    const records = story(
      refund({ obs: 'timeout', key: 'k', args: 'amount-40' }),
      refund({ obs: 'ok', key: 'k', args: 'amount-45', summary: 'Refund 45.00 EUR on order 4411' }),
    );
    const expected = {
      done: ['refund_payment on billing-mcp: Refund 45.00 EUR on order 4411'],
      notDone: [],
      unknown: [UNKNOWN_4411],
      sentence: '1 operation done, 1 unknown: check before repeating refund_payment.',
    };
    expect(summarize(records)).toEqual(expected);
    expect(summarize([...records].reverse())).toEqual(expected);
    // The finding and the summary say the same thing.
    expect(detectFindings(records).map((f) => f.kind)).toContain('unsafe_replay');
  });

  it('same key, other arguments: the completion of the first does not settle the second', () => {
    const records = story(
      refund({ obs: 'timeout', key: 'k', args: 'amount-45', summary: 'Refund 45.00 EUR on order 4411' }),
      refund({ obs: 'timeout', key: 'k' }),
      refund({ obs: 'ok', key: 'k', args: 'amount-45', summary: 'Refund 45.00 EUR on order 4411' }),
    );
    expect(summarize(records)).toEqual({
      done: ['refund_payment on billing-mcp: Refund 45.00 EUR on order 4411 (2 attempts)'],
      notDone: [],
      unknown: [UNKNOWN_4411],
      sentence: '1 operation done, 1 unknown: check before repeating refund_payment.',
    });
  });

  it('no key: each attempt is its own operation, even with the same arguments', () => {
    expect(summarize(story(refund({ obs: 'timeout' }), refund({ obs: 'ok' })))).toEqual({
      done: ['refund_payment on billing-mcp: Refund 40.00 EUR on order 4411'],
      notDone: [],
      unknown: [
        'refund_payment on billing-mcp: Refund 40.00 EUR on order 4411 (timeout): it may have taken effect; check before repeating',
      ],
      sentence: '1 operation done, 1 unknown: check before repeating refund_payment.',
    });
    expect(summarize(story(refund({ obs: 'rateLimited' }), refund({ obs: 'forbidden' })))).toEqual({
      done: [],
      notDone: [
        'refund_payment on billing-mcp: Refund 40.00 EUR on order 4411 (refused: rate limited)',
        'refund_payment on billing-mcp: Refund 40.00 EUR on order 4411 (refused: forbidden)',
      ],
      unknown: [],
      sentence: 'Nothing was done: 2 operations not done.',
    });
  });

  it('a key without a digest: nothing says two attempts carry the same arguments', () => {
    expect(
      summarize(story(refund({ obs: 'timeout', key: 'k', args: null }), refund({ obs: 'ok', key: 'k', args: null }))),
    ).toEqual({
      done: ['refund_payment on billing-mcp: Refund 40.00 EUR on order 4411'],
      notDone: [],
      unknown: [UNKNOWN_4411],
      sentence: '1 operation done, 1 unknown: check before repeating refund_payment.',
    });
  });

  it('one MCP task across records is one operation, with or without a key on each', () => {
    const [a, b, c] = story(
      refund({ obs: 'ok', key: 'k' }),
      refund({ obs: 'ok', args: null }),
      refund({ obs: 'ok', args: null }),
    );
    const records = [
      asTask(a, { id: 't1', status: 'working' }),
      asTask(b, { id: 't1', status: 'working' }),
      asTask(c, { id: 't1', status: 'completed' }, { isError: false, outputValidation: 'valid' }),
    ];
    expect(summarize(records)).toEqual({
      done: ['refund_payment on billing-mcp: Refund 40.00 EUR on order 4411 (3 records of task t1)'],
      notDone: [],
      unknown: [],
      sentence: '1 operation done.',
    });
    expect(summarize(records.slice(0, 2))).toMatchObject({
      unknown: [
        'refund_payment on billing-mcp: Refund 40.00 EUR on order 4411 (task running; 2 records of task t1; key k): it may have taken effect; check before repeating',
      ],
      sentence: '1 operation unknown: check before repeating refund_payment.',
    });
    // Another task is another operation.
    const other = asTask(c, { id: 't2', status: 'completed' }, { isError: false, outputValidation: 'valid' });
    expect(summarize([...records.slice(0, 2), other]).sentence).toBe(
      '1 operation done, 1 unknown: check before repeating refund_payment.',
    );
  });

  it('attempts in mixed order are taken by occurredAt, ties by receipt order', () => {
    const [a, b, c, d] = story(
      refund({ obs: 'timeout', key: 'k', at: 0, seq: 0 }),
      refund({ obs: 'ok', key: 'k', args: 'order-4412', summary: 'Refund 40.00 EUR on order 4412', at: 1, seq: 3 }),
      refund({ obs: 'forbidden', key: 'k', at: 2, seq: 2 }),
      refund({ obs: 'rateLimited', key: 'k', at: 2, seq: 1 }),
    );
    const checked = {
      ...a,
      resolution: { by: 'state_check' as const, verdict: 'did_not_happen' as const, at, who: 'Bo' },
    };
    expect(summarize([c, b, d, checked])).toEqual({
      done: ['refund_payment on billing-mcp: Refund 40.00 EUR on order 4412'],
      notDone: [
        'refund_payment on billing-mcp: Refund 40.00 EUR on order 4411 (refused: forbidden; 3 attempts; it did not happen, resolved by a state check (Bo))',
      ],
      unknown: [],
      sentence: '1 operation done, 1 not done.',
    });
  });
});

function asTask(r: IncidentRecord, task: ObservedTask, result?: Observed['result']): IncidentRecord {
  const observed: Observed = { sent: true, httpStatus: 200, task, ...(result ? { result } : {}) };
  const annotations = r.tool.annotations ?? {};
  return {
    ...r,
    observed: { task },
    classification: classifyOutcome({ observed, annotations, serverTrusted: true, toolName: r.tool.name }),
  };
}
