import { describe, expect, it } from 'vitest';
import { classifyRecord } from '@/lib/outcomes/classify';
import type { OutcomeView } from '@/lib/server/data/outcomes';
import { DEMO_TRUSTED_SERVERS, demoOutcomes } from '@/scripts/demo-outcomes';
import { detectFindings, tally } from './findings';
import { story, type Step } from '../../testing/incident-records';
import type { FindingKind, IncidentPolicy, IncidentRecord } from './types';

// A stored record read back is an IncidentRecord once the caller adds its receipt order.
const _fromView = (view: OutcomeView, seq: number): IncidentRecord => ({ ...view, seq });

type Case = [name: string, steps: Step[], expected: string[][], policy?: Partial<IncidentPolicy>];

/** The recordIds of every finding of one kind. */
function found(kind: FindingKind, records: IncidentRecord[], policy?: Partial<IncidentPolicy>): string[][] {
  return detectFindings(records, policy)
    .filter((f) => f.kind === kind)
    .map((f) => f.recordIds);
}

function table(kind: FindingKind, cases: Case[]) {
  it.each(cases)('%s', (_name, steps, expected, policy) => {
    expect(found(kind, story(...steps), policy)).toEqual(expected);
  });
}

const admin = { tool: 'admin_refund_any' } as const;
const read = (tool = 'list_refunds', server = 'billing-mcp') => ({ tool, server, read: true }) as const;

describe('permission_expansion', () => {
  table('permission_expansion', [
    ['forbidden, then another tool on the same server', [{ obs: 'forbidden' }, { obs: 'ok', ...admin }], [['a', 'b']]],
    [
      'forbidden, then the same tool on another server',
      [{ obs: 'forbidden' }, { obs: 'ok', server: 'billing-eu' }],
      [['a', 'b']],
    ],
    [
      'tool-declared PERMISSION_DENIED, then a broader tool',
      [{ obs: 'permissionDenied' }, { obs: 'ok', ...admin }],
      [['a', 'b']],
    ],
    ['denied, then a broader tool', [{ obs: 'denied' }, { obs: 'ok', ...admin }], [['a', 'b']]],
    [
      'unauthenticated, then the same read as another principal',
      [
        { obs: 'unauthenticated', ...read() },
        { obs: 'ok', ...read(), principal: 'user_2' },
      ],
      [['a', 'b']],
    ],
    [
      'forbidden, then a trusted read in another organization',
      [{ obs: 'forbidden' }, { obs: 'ok', ...read(), org: 'globex' }],
      [['a', 'b']],
    ],
    [
      'blocked by policy on the client, then another tool',
      [{ obs: 'deniedByPolicy' }, { obs: 'ok', ...admin }],
      [['a', 'b']],
    ],
    ['approval required, then routed around it', [{ obs: 'approvalRequired' }, { obs: 'ok', ...admin }], [['a', 'b']]],
    [
      'no credentials, then another principal',
      [{ obs: 'noCredentials' }, { obs: 'ok', principal: 'user_2' }],
      [['a', 'b']],
    ],
    [
      'the broader call counts even when it is refused too',
      [{ obs: 'forbidden' }, { obs: 'forbidden', ...admin }],
      [['a', 'b']],
    ],
    [
      'a read-only hint from an untrusted server does not excuse it',
      [{ obs: 'forbidden' }, { obs: 'ok', tool: 'export_all', read: true, trusted: false }],
      [['a', 'b']],
    ],
    [
      'a grant does not excuse another principal',
      [{ obs: 'forbidden' }, { obs: 'ok', principal: 'user_2', grant: 'grt_1' }],
      [['a', 'b']],
    ],
    [
      'one finding per refusal, each offender once',
      [
        { obs: 'forbidden' },
        { obs: 'ok', ...admin },
        { obs: 'forbidden' },
        { obs: 'ok', ...admin },
        { obs: 'ok', ...read() },
      ],
      [['a', 'b', 'd']],
    ],
    [
      'a second refusal with new offenders gets its own finding',
      [{ obs: 'forbidden' }, { obs: 'forbidden', ...admin }, { obs: 'ok', tool: 'refund_anything' }],
      [['a', 'b', 'c']],
    ],
    // Near misses.
    ['forbidden, then a trusted read of another tool', [{ obs: 'forbidden' }, { obs: 'ok', ...read() }], []],
    [
      'forbidden, then a trusted read on another server',
      [{ obs: 'forbidden' }, { obs: 'ok', ...read('get_order', 'orders-mcp') }],
      [],
    ],
    ['forbidden, then the same tool again', [{ obs: 'forbidden' }, { obs: 'ok' }], []],
    ['forbidden, then another tool with a grant', [{ obs: 'forbidden' }, { obs: 'ok', ...admin, grant: 'grt_1' }], []],
    ['a broader tool before the refusal', [{ obs: 'ok', ...admin }, { obs: 'forbidden' }], []],
    ['session expired is no refusal', [{ obs: 'sessionExpired' }, { obs: 'ok', ...admin }], []],
    ['rate limited is no refusal', [{ obs: 'rateLimited' }, { obs: 'ok', ...admin }], []],
    ['validation is no refusal', [{ obs: 'validation' }, { obs: 'ok', ...admin }], []],
    ['another request reference', [{ obs: 'forbidden' }, { obs: 'ok', ...admin, ref: 'req_2' }], []],
    // Ties in occurredAt: receipt order decides.
    [
      'tie, refusal received first',
      [
        { obs: 'forbidden', at: 5, seq: 1 },
        { obs: 'ok', ...admin, at: 5, seq: 2 },
      ],
      [['a', 'b']],
    ],
    [
      'tie, refusal received last',
      [
        { obs: 'forbidden', at: 5, seq: 2 },
        { obs: 'ok', ...admin, at: 5, seq: 1 },
      ],
      [],
    ],
  ]);

  it('names the tools and the reason in one sentence', () => {
    const [f] = detectFindings(story({ obs: 'forbidden' }, { obs: 'ok', ...admin }, { obs: 'ok', ...admin, at: 3 }));
    expect(f).toMatchObject({ kind: 'permission_expansion', severity: 'high' });
    expect(f.explanation).toBe(
      'After refund_payment on billing-mcp was refused (forbidden), the agent called admin_refund_any on billing-mcp ' +
        '(another tool on the same server) twice instead of seeking legitimate approval.',
    );
  });
});

describe('unsafe_replay', () => {
  const unknown = { obs: 'timeout', key: 'k1' } as const;
  table('unsafe_replay', [
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
      [unknown, { obs: 'ok', ...read() }, { obs: 'ok', key: 'k2' }],
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
    ['same key and arguments after a state check', [unknown, { obs: 'ok', ...read() }, { obs: 'ok', key: 'k1' }], []],
    [
      'unknown read, replayed freely',
      [
        { obs: 'timeout', ...read() },
        { obs: 'ok', ...read() },
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

describe('retried_non_retryable', () => {
  table('retried_non_retryable', [
    ['validation, repeated unchanged', [{ obs: 'validation' }, { obs: 'validation' }], [['a', 'b']]],
    [
      'validation three times is one finding',
      [{ obs: 'validation' }, { obs: 'validation' }, { obs: 'validation' }],
      [['a', 'b', 'c']],
    ],
    ['invalid arguments (-32602), repeated unchanged', [{ obs: 'invalidArgs' }, { obs: 'invalidArgs' }], [['a', 'b']]],
    [
      'not found, repeated unchanged',
      [
        { obs: 'notFound', ...read() },
        { obs: 'notFound', ...read() },
      ],
      [['a', 'b']],
    ],
    ['protocol error met again', [{ obs: 'protocol' }, { obs: 'protocol' }], [['a', 'b']]],
    ['forbidden, repeated without a grant (whatever came back)', [{ obs: 'forbidden' }, { obs: 'ok' }], [['a', 'b']]],
    ['denied, repeated', [{ obs: 'denied' }, { obs: 'denied' }], [['a', 'b']]],
    [
      'approval required, repeated without approval',
      [{ obs: 'approvalRequired' }, { obs: 'approvalRequired' }],
      [['a', 'b']],
    ],
    ['unauthenticated, met again', [{ obs: 'unauthenticated' }, { obs: 'unauthenticated' }], [['a', 'b']]],
    [
      'forbidden, repeated with the grant it already had',
      [
        { obs: 'forbidden', grant: 'g1' },
        { obs: 'forbidden', grant: 'g1' },
      ],
      [['a', 'b']],
    ],
    // Near misses.
    ['validation, then corrected input', [{ obs: 'validation' }, { obs: 'ok', args: 'args-2' }], []],
    ['forbidden, then approved (a grant)', [{ obs: 'forbidden' }, { obs: 'ok', grant: 'g1' }], []],
    ['unauthenticated, then credentials fixed', [{ obs: 'unauthenticated' }, { obs: 'ok' }], []],
    ['protocol error, then integration fixed', [{ obs: 'protocol' }, { obs: 'ok' }], []],
    [
      'validation, same input under another principal',
      [{ obs: 'validation' }, { obs: 'validation', principal: 'user_2' }],
      [],
    ],
    ['validation, same input on another tool', [{ obs: 'validation' }, { obs: 'validation', tool: 'refund_v2' }], []],
    ['conflict is retried by design', [{ obs: 'conflict' }, { obs: 'conflict' }], []],
    ['session expired is retried by design', [{ obs: 'sessionExpired' }, { obs: 'ok' }], []],
    ['input required is retried by design', [{ obs: 'inputRequired' }, { obs: 'ok' }], []],
    ['rate limited is retried with backoff', [{ obs: 'rateLimited' }, { obs: 'rateLimited' }], []],
    [
      'the repeat came first',
      [
        { obs: 'validation', at: 5, seq: 2 },
        { obs: 'ok', at: 5, seq: 1 },
      ],
      [],
    ],
  ]);

  it('says what the call needs first', () => {
    const [f] = detectFindings(story({ obs: 'validation' }, { obs: 'validation' }, { obs: 'validation' }));
    expect(f).toMatchObject({ kind: 'retried_non_retryable', severity: 'medium' });
    expect(f.explanation).toBe(
      'refund_payment on billing-mcp was refused (validation) and called again unchanged twice ' +
        '(same arguments and principal), although it needs corrected input first.',
    );
  });
});

describe('unbounded_retry', () => {
  const busy = (at: number, more: Partial<Step> = {}): Step => ({ obs: 'rateLimited', ...read(), at, ...more });
  table('unbounded_retry', [
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
  table('write_without_grant', [
    ['a completed write without a grant', [{ obs: 'ok' }], [['a']]],
    ['a write that ran but broke its output schema', [{ obs: 'schemaViolation' }], [['a']]],
    [
      'a read-only hint from an untrusted server',
      [{ obs: 'ok', ...read('lookup_customer', 'crm-mcp'), trusted: false }],
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
    ['a completed trusted read', [{ obs: 'ok', ...read() }], []],
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
    detectFindings(story({ obs: 'ok', ...read() }, { obs: 'ok' }), {
      requiresApproval: (r) => (asked.push(r.id), true),
    });
    expect(asked).toEqual(['b']);
  });
});

describe('detectFindings', () => {
  it('returns findings in time order, whatever the input order', () => {
    const records = story(
      { obs: 'timeout', key: 'k1' },
      { obs: 'ok', key: 'k2' },
      { obs: 'forbidden', tool: 'x' },
      { obs: 'ok', tool: 'y', read: true, trusted: false },
    );
    const forward = detectFindings(records);
    expect(detectFindings([...records].reverse())).toEqual(forward);
    expect(forward.map((f) => [f.kind, f.recordIds])).toEqual([
      ['unsafe_replay', ['a', 'b']],
      ['write_without_grant', ['b']],
      ['permission_expansion', ['c', 'd']],
      ['write_without_grant', ['d']],
    ]);
  });

  it('finds nothing in nothing', () => {
    expect(detectFindings([])).toEqual([]);
  });

  it('tallies repeated phrases', () => {
    expect(tally(['a', 'b', 'a', 'c', 'a'])).toBe('a 3 times, b and c');
    expect(tally(['x'])).toBe('x');
  });
});

describe('the demo stories', () => {
  const trusted = new Set(DEMO_TRUSTED_SERVERS);
  const records: IncidentRecord[] = demoOutcomes(Date.parse('2026-11-30T12:00:00Z'), 0).map((o, seq) => ({
    ...o,
    id: o.eventId,
    seq,
    occurredAt: new Date(o.occurredAt),
    classification: classifyRecord(o, trusted.has(o.server)),
  }));
  const findings = detectFindings(records);
  const kindsOf = (ref: string) =>
    [
      ...new Set(findings.filter((f) => f.recordIds.every((id) => id.startsWith(`demo_${ref}_`))).map((f) => f.kind)),
    ].sort();

  it.each([
    ['req_refund_4411', ['write_without_grant']],
    ['req_refund_5120', ['unsafe_replay', 'write_without_grant']],
    ['req_scope_7781', ['permission_expansion', 'write_without_grant']],
    ['req_token_3302', []],
    ['req_session_9001', []],
    ['req_busy_6610', ['unbounded_retry']],
    ['req_outage_8120', []],
    ['req_protocol_1000', ['retried_non_retryable']],
    ['req_args_2231', []],
    ['req_elicit_4020', []],
    ['req_cancel_3390', []],
    // The refund was refused, then the agent changed orders on another server.
    ['req_toolerrors_5555', ['permission_expansion', 'retried_non_retryable']],
    ['req_schema_6001', []],
    // The refund waited for approval; the agent tried to cancel the order on another server.
    ['req_blocked_7002', ['permission_expansion']],
    ['req_silent_8003', []],
    // crm-mcp is untrusted: its "read-only" lookup counts as a write.
    ['req_crm_9100', ['write_without_grant']],
    ['req_readonly_9200', []],
  ])('%s raises %j', (ref, kinds) => {
    expect(kindsOf(ref)).toEqual(kinds);
  });

  it('req_refund_5120 names both keys', () => {
    const f = findings.find((x) => x.kind === 'unsafe_replay' && x.recordIds[0].startsWith('demo_req_refund_5120_'));
    expect(f?.recordIds).toEqual(['demo_req_refund_5120_0', 'demo_req_refund_5120_1']);
    expect(f?.explanation).toContain('refund-5120-v1');
    expect(f?.explanation).toContain('refund-5120-retry');
  });

  it('every finding stays within one request reference', () => {
    for (const f of findings) {
      const refs = new Set(f.recordIds.map((id) => records.find((r) => r.id === id)!.requestRef));
      expect(refs.size).toBe(1);
    }
  });
});
