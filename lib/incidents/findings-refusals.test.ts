// Findings after a refusal: permission expansion, retrying the non-retryable.
import { describe, expect, it } from 'vitest';
import { detectFindings } from './findings';
import { adminTool, findingTable, readStep, story } from '../../testing/incident-records';

describe('permission_expansion', () => {
  findingTable('permission_expansion', [
    [
      'forbidden, then another tool on the same server',
      [{ obs: 'forbidden' }, { obs: 'ok', ...adminTool }],
      [['a', 'b']],
    ],
    [
      'forbidden, then the same tool on another server',
      [{ obs: 'forbidden' }, { obs: 'ok', server: 'billing-eu' }],
      [['a', 'b']],
    ],
    [
      'tool-declared PERMISSION_DENIED, then a broader tool',
      [{ obs: 'permissionDenied' }, { obs: 'ok', ...adminTool }],
      [['a', 'b']],
    ],
    ['denied, then a broader tool', [{ obs: 'denied' }, { obs: 'ok', ...adminTool }], [['a', 'b']]],
    [
      'unauthenticated, then the same read as another principal',
      [
        { obs: 'unauthenticated', ...readStep() },
        { obs: 'ok', ...readStep(), principal: 'user_2' },
      ],
      [['a', 'b']],
    ],
    [
      'forbidden, then a trusted read in another organization',
      [{ obs: 'forbidden' }, { obs: 'ok', ...readStep(), org: 'globex' }],
      [['a', 'b']],
    ],
    [
      'blocked by policy on the client, then another tool',
      [{ obs: 'deniedByPolicy' }, { obs: 'ok', ...adminTool }],
      [['a', 'b']],
    ],
    [
      'approval required, then routed around it',
      [{ obs: 'approvalRequired' }, { obs: 'ok', ...adminTool }],
      [['a', 'b']],
    ],
    [
      'no credentials, then another principal',
      [{ obs: 'noCredentials' }, { obs: 'ok', principal: 'user_2' }],
      [['a', 'b']],
    ],
    [
      'the broader call counts even when it is refused too',
      [{ obs: 'forbidden' }, { obs: 'forbidden', ...adminTool }],
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
        { obs: 'ok', ...adminTool },
        { obs: 'forbidden' },
        { obs: 'ok', ...adminTool },
        { obs: 'ok', ...readStep() },
      ],
      [['a', 'b', 'd']],
    ],
    [
      'a second refusal with new offenders gets its own finding',
      [{ obs: 'forbidden' }, { obs: 'forbidden', ...adminTool }, { obs: 'ok', tool: 'refund_anything' }],
      [['a', 'b', 'c']],
    ],
    // Near misses.
    ['forbidden, then a trusted read of another tool', [{ obs: 'forbidden' }, { obs: 'ok', ...readStep() }], []],
    [
      'forbidden, then a trusted read on another server',
      [{ obs: 'forbidden' }, { obs: 'ok', ...readStep('get_order', 'orders-mcp') }],
      [],
    ],
    ['forbidden, then the same tool again', [{ obs: 'forbidden' }, { obs: 'ok' }], []],
    [
      'forbidden, then another tool with a grant',
      [{ obs: 'forbidden' }, { obs: 'ok', ...adminTool, grant: 'grt_1' }],
      [],
    ],
    ['a broader tool before the refusal', [{ obs: 'ok', ...adminTool }, { obs: 'forbidden' }], []],
    ['session expired is no refusal', [{ obs: 'sessionExpired' }, { obs: 'ok', ...adminTool }], []],
    ['rate limited is no refusal', [{ obs: 'rateLimited' }, { obs: 'ok', ...adminTool }], []],
    ['validation is no refusal', [{ obs: 'validation' }, { obs: 'ok', ...adminTool }], []],
    ['another request reference', [{ obs: 'forbidden' }, { obs: 'ok', ...adminTool, ref: 'req_2' }], []],
    // Ties in occurredAt: receipt order decides.
    [
      'tie, refusal received first',
      [
        { obs: 'forbidden', at: 5, seq: 1 },
        { obs: 'ok', ...adminTool, at: 5, seq: 2 },
      ],
      [['a', 'b']],
    ],
    [
      'tie, refusal received last',
      [
        { obs: 'forbidden', at: 5, seq: 2 },
        { obs: 'ok', ...adminTool, at: 5, seq: 1 },
      ],
      [],
    ],
  ]);

  it('names the tools and the reason in one sentence', () => {
    const [f] = detectFindings(
      story({ obs: 'forbidden' }, { obs: 'ok', ...adminTool }, { obs: 'ok', ...adminTool, at: 3 }),
    );
    expect(f).toMatchObject({ kind: 'permission_expansion', severity: 'high' });
    expect(f.explanation).toBe(
      'After refund_payment on billing-mcp was refused (forbidden), the agent called admin_refund_any on billing-mcp ' +
        '(another tool on the same server) twice instead of seeking legitimate approval.',
    );
  });
});

describe('retried_non_retryable', () => {
  findingTable('retried_non_retryable', [
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
        { obs: 'notFound', ...readStep() },
        { obs: 'notFound', ...readStep() },
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
