// Findings about writes and retries: unsafe replay, unbounded retry, a write without a grant.
import { describe, expect, it } from 'vitest';
import { detectFindings } from './findings';
import { findingTable, readStep, story, type Step } from '../../testing/incident-records';

describe('unsafe_replay', () => {
  const unknown = { obs: 'timeout', key: 'k1' } as const;
  findingTable('unsafe_replay', [
    ['unknown write, replayed with another key', [unknown, { obs: 'ok', key: 'k2' }], [['a', 'b']]],
    ['unknown write, replayed without a key', [unknown, { obs: 'ok' }], [['a', 'b']]],
    ['unknown write without a key, replayed without one', [{ obs: 'timeout' }, { obs: 'ok' }], [['a', 'b']]],
    [
      'unknown write without a key, replayed with one',
      [{ obs: 'connectionLost' }, { obs: 'ok', key: 'k1' }],
      [['a', 'b']],
    ],
    ['same key, other arguments', [unknown, { obs: 'ok', key: 'k1', args: 'args-2' }], [['a', 'b']]],
    ['same key, arguments no longer digested', [unknown, { obs: 'ok', key: 'k1', args: null }], [['a', 'b']]],
    [
      'an upstream 502 on a write is unknown too',
      [
        { obs: 'upstream', key: 'k1' },
        { obs: 'ok', key: 'k2' },
      ],
      [['a', 'b']],
    ],
    [
      'a state check does not excuse a new key',
      [unknown, { obs: 'ok', ...readStep() }, { obs: 'ok', key: 'k2' }],
      [['a', 'c']],
    ],
    ['a replay the client blocked still counts', [unknown, { obs: 'approvalRequired', key: 'k2' }], [['a', 'b']]],
    [
      'one finding per unknown write, listing every replay',
      [unknown, { obs: 'timeout', key: 'k2' }, { obs: 'ok' }],
      [['a', 'b', 'c']],
    ],
    ['each unknown write of an operation', [unknown, { obs: 'timeout', key: 'k1' }, { obs: 'ok', key: 'k1' }], []],
    // Near misses.
    [
      'same key and arguments after a state check',
      [unknown, { obs: 'ok', ...readStep() }, { obs: 'ok', key: 'k1' }],
      [],
    ],
    [
      'unknown read, replayed freely',
      [
        { obs: 'timeout', ...readStep() },
        { obs: 'ok', ...readStep() },
      ],
      [],
    ],
    [
      'a refused write is no unknown write',
      [
        { obs: 'validation', key: 'k1' },
        { obs: 'ok', key: 'k2' },
      ],
      [],
    ],
    ['a different tool after the unknown write', [unknown, { obs: 'ok', tool: 'cancel_order', key: 'k2' }], []],
    ['the same tool in another organization', [unknown, { obs: 'ok', key: 'k2', org: 'globex' }], []],
    ['another key before the unknown write', [{ obs: 'ok', key: 'k0' }, unknown], []],
    [
      'tie, unknown write received first',
      [
        { ...unknown, at: 5, seq: 1 },
        { obs: 'ok', key: 'k2', at: 5, seq: 2 },
      ],
      [['a', 'b']],
    ],
    [
      'tie, unknown write received last',
      [
        { ...unknown, at: 5, seq: 2 },
        { obs: 'ok', key: 'k2', at: 5, seq: 1 },
      ],
      [],
    ],
  ]);

  it('explains which keys were used', () => {
    const [f] = detectFindings(story(unknown, { obs: 'ok', key: 'k2' })).filter((x) => x.kind === 'unsafe_replay');
    expect(f.severity).toBe('high');
    expect(f.explanation).toBe(
      'refund_payment on billing-mcp with key k1 may have taken effect (timeout), yet it was called again ' +
        'with another key (k2); a replay must reuse the same key and arguments.',
    );
  });
});

describe('unbounded_retry', () => {
  const busy = (at: number, more: Partial<Step> = {}): Step => ({ obs: 'rateLimited', ...readStep(), at, ...more });
  findingTable('unbounded_retry', [
    ['more attempts than the bound, with backoff', [busy(0), busy(1), busy(3), busy(7)], [['a', 'b', 'c', 'd']]],
    ['fixed interval', [busy(0), busy(1), busy(2)], [['a', 'b', 'c']]],
    ['shrinking gaps', [busy(0), busy(4), busy(5)], [['a', 'b', 'c']]],
    [
      'grouped by idempotency key across arguments',
      [
        { obs: 'timeout', key: 'k', at: 0 },
        { obs: 'timeout', key: 'k', args: 'x', at: 1 },
        { obs: 'timeout', key: 'k', at: 3 },
        { obs: 'timeout', key: 'k', at: 7 },
      ],
      [['a', 'b', 'c', 'd']],
    ],
    ['the caller reports attempt 5', [busy(0, { attempt: 5 })], [['a']]],
    ['growth below the policy factor', [busy(0), busy(1), busy(2.5)], [['a', 'b', 'c']], { minBackoffGrowth: 2 }],
    ['a lower bound', [busy(0), busy(1), busy(3)], [['a', 'b', 'c']], { maxAttempts: 2 }],
    // Near misses.
    ['three attempts with growing backoff', [busy(0), busy(1), busy(3)], []],
    ['two attempts at a fixed interval', [busy(0), busy(1)], []],
    ['four attempts within a higher bound', [busy(0), busy(1), busy(3), busy(7)], [], { maxAttempts: 4 }],
    ['growth meeting the policy factor', [busy(0), busy(1), busy(3)], [], { minBackoffGrowth: 2 }],
    ['a completed call ends a run', [busy(0), busy(1), busy(3, { obs: 'ok' }), busy(4), busy(5)], []],
    [
      'corrected input each time',
      [busy(0), busy(1, { args: 'b' }), busy(2, { args: 'c' }), busy(3, { args: 'd' })],
      [],
    ],
    [
      'no key and no digest: nothing ties the calls together',
      [busy(0, { args: null }), busy(1, { args: null }), busy(2, { args: null }), busy(3, { args: null })],
      [],
    ],
    ['another request reference', [busy(0), busy(1), busy(2, { ref: 'req_2' })], []],
  ]);

  it('names the bound and the gaps', () => {
    const [f] = detectFindings(story(busy(0), busy(0.2), busy(0.4), busy(0.6)));
    expect(f).toMatchObject({ kind: 'unbounded_retry', severity: 'medium' });
    expect(f.explanation).toBe(
      'list_refunds on billing-mcp was attempted 4 times for one operation, more than the policy bound of 3, ' +
        'without growing backoff (gaps 200 ms, 200 ms, 200 ms).',
    );
  });
});

describe('write_without_grant', () => {
  findingTable('write_without_grant', [
    ['a completed write without a grant', [{ obs: 'ok' }], [['a']]],
    ['a write that ran but broke its output schema', [{ obs: 'schemaViolation' }], [['a']]],
    [
      'a read-only hint from an untrusted server',
      [{ obs: 'ok', ...readStep('lookup_customer', 'crm-mcp'), trusted: false }],
      [['a']],
    ],
    [
      'one finding per call',
      [
        { obs: 'ok', key: 'k' },
        { obs: 'ok', key: 'k' },
      ],
      [['a'], ['b']],
    ],
    // Near misses.
    ['a completed write with a grant', [{ obs: 'ok', grant: 'grt_1' }], []],
    ['a completed trusted read', [{ obs: 'ok', ...readStep() }], []],
    ['a refused write', [{ obs: 'forbidden' }], []],
    ['an unknown write', [{ obs: 'timeout' }], []],
    ['a write never sent', [{ obs: 'approvalRequired' }], []],
    ['a policy that needs no approval for it', [{ obs: 'ok' }], [], { requiresApproval: () => false }],
    // The data layer's grant check: only a grant redeemed for this tool in this incident counts.
    [
      'a grant id the check does not accept counts as none',
      [{ obs: 'ok', grant: 'grt_forged' }],
      [['a']],
      { hasGrant: () => false },
    ],
    ['a grant id the check accepts', [{ obs: 'ok', grant: 'grt_1' }], [], { hasGrant: (r) => r.grantId === 'grt_1' }],
    [
      'an accepted grant covers only its own call',
      [
        { obs: 'ok', grant: 'grt_1' },
        { obs: 'ok', grant: 'grt_2', tool: 'cancel_order' },
      ],
      [['b']],
      { hasGrant: (r) => r.grantId === 'grt_1' && r.tool.name === 'refund_payment' },
    ],
    ['the check never makes a call without a grant id covered', [{ obs: 'ok' }], [['a']], { hasGrant: () => true }],
  ]);

  it('says when the call carried a grant id that covers nothing', () => {
    const [f] = detectFindings(story({ obs: 'ok', grant: 'grt_forged', key: 'refund-1' }), { hasGrant: () => false });
    expect(f.explanation).toBe(
      'refund_payment on billing-mcp with key refund-1 ran with the grant id grt_forged, which matches no grant redeemed ' +
        'for it in this incident, although it is not trusted as read-only and policy requires approval for it.',
    );
  });

  it('asks the policy only about calls not read-only', () => {
    const asked: string[] = [];
    detectFindings(story({ obs: 'ok', ...readStep() }, { obs: 'ok' }), {
      requiresApproval: (r) => (asked.push(r.id), true),
    });
    expect(asked).toEqual(['b']);
  });
});
