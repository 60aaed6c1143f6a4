import { describe, expect, it } from 'vitest';
import { oneSentence, summarizeIncident } from './summary';
import { story, type Step } from '../../testing/incident-records';
import type { IncidentSummary } from './types';

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
      [refund({ obs: 'rateLimited' }), refund({ obs: 'forbidden' })],
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
      'a write without a key that may have run twice says so',
      [refund({ obs: 'timeout' }), refund({ obs: 'ok' })],
      {
        done: [
          'refund_payment on billing-mcp: Refund 40.00 EUR on order 4411 (2 attempts; may have run 2 times: no idempotency key)',
        ],
      },
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
