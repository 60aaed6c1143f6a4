import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isStorableText, outcomeBatchSchema, outcomeSchema, storable } from './schemas';

const DIGEST = `sha256:${'ab'.repeat(32)}`;

// The example from docs/api.md, "Outcome records".
const full = {
  eventId: 'evt_01J8ZQ',
  occurredAt: '2026-11-30T12:00:00Z',
  durationMs: 812,
  requestRef: 'req_8f2c',
  idempotencyKey: 'refund-4411-v1',
  attempt: 1,
  organization: 'acme',
  principal: 'user_193',
  agent: 'support-bot',
  server: 'billing-mcp',
  serverVersion: '2.3.0',
  protocolVersion: '2025-11-25',
  tool: {
    name: 'refund_payment',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  },
  mcpRequestId: 17,
  sessionId: 'b7f1c2',
  grantId: 'grt_1',
  argsDigest: DIGEST,
  summary: 'Refund 40.00 EUR on order 4411',
  observed: {
    sent: true,
    clientBlock: null,
    httpStatus: 200,
    authError: null,
    jsonRpcErrorCode: null,
    clientError: null,
    result: { isError: false, errorCategory: null, outputValidation: 'valid' },
  },
};

const minimal = {
  eventId: 'evt_1',
  occurredAt: '2026-11-30T12:00:00+02:00',
  requestRef: 'req_1',
  organization: 'acme',
  principal: 'user_193',
  server: 'billing-mcp',
  tool: { name: 'refund_payment' },
  observed: { sent: true },
};

// Rounds as docs/api.md describes them.
const ROUND = { atMs: 400, by: 'server', asked: ['elicitation_form'], requests: 2 };
const GATE = { atMs: 0, by: 'gateway', asked: ['approval'], requests: 1 };

type Patch = Record<string, unknown>;
const withField = (patch: Patch) => ({ ...full, ...patch });
const withObserved = (patch: Patch) => ({ ...full, observed: { ...full.observed, ...patch } });
const without = (field: keyof typeof full) => {
  const { [field]: _dropped, ...rest } = full;
  return rest;
};

// The path zod reports for the first issue, e.g. "observed.httpStatus".
function firstIssuePath(value: unknown): string | null {
  const parsed = outcomeSchema.safeParse(value);
  return parsed.success ? null : parsed.error.issues[0].path.join('.');
}

describe('outcomeSchema', () => {
  it.each([
    ['the docs/api.md example', full],
    ['only the required fields', minimal],
    ['nulls for optional fields', { ...minimal, agent: null, summary: null, mcpRequestId: null }],
    ['a string MCP request id', withField({ mcpRequestId: 'abc-17' })],
    ['fractional seconds', withField({ occurredAt: '2026-11-30T12:00:00.123-05:00' })],
    ['eventId at 128', withField({ eventId: 'e'.repeat(128) })],
    ['requestRef at 200', withField({ requestRef: 'r'.repeat(200) })],
    ['idempotencyKey at 255', withField({ idempotencyKey: 'k'.repeat(255) })],
    ['summary at 500', withField({ summary: 's'.repeat(500) })],
    [
      'a block when not sent',
      withObserved({ sent: false, clientBlock: 'approval_required', httpStatus: null, result: null }),
    ],
    ['a folded -32602', withObserved({ jsonRpcErrorCode: -32602, result: { isError: true } })],
    ['resultType complete', withObserved({ resultType: 'complete' })],
    ['resultType input_required, no result', withObserved({ resultType: 'input_required', result: null })],
    ['a created task', withObserved({ resultType: 'task', result: null, task: { id: 'tsk_1', status: 'working' } })],
    ['a task from 2025-11-25 (no resultType)', withObserved({ task: { id: 'tsk_1', status: 'completed' } })],
    ['an expired task', withObserved({ result: null, task: { id: 'tsk_1', status: 'working', expired: true } })],
    ['expired null', withObserved({ task: { id: 'tsk_1', status: 'failed', expired: null } })],
    ['rounds null', withObserved({ rounds: null })],
    ['no rounds', withObserved({ rounds: [] })],
    [
      "a server's round and the gateway's",
      withObserved({
        rounds: [
          { atMs: 0, by: 'gateway', asked: ['approval'], requests: 1 },
          { atMs: 412, by: 'server', asked: ['elicitation_form', 'sampling'], requests: 2 },
        ],
      }),
    ],
    [
      'a round that asked nothing the record names',
      withObserved({ rounds: [{ atMs: 5, by: 'server', asked: [], requests: 0 }] }),
    ],
    ['eight rounds', withObserved({ rounds: Array.from({ length: 8 }, () => ROUND) })],
    [
      'rounds at their ceilings',
      withObserved({
        rounds: [
          {
            atMs: 2_147_483_647,
            by: 'server',
            asked: ['elicitation_form', 'elicitation_url', 'sampling', 'roots', 'approval'],
            requests: 1000,
          },
        ],
      }),
    ],
    [
      'rounds of a call never sent (its approval round)',
      withObserved({ sent: false, clientBlock: 'approval_required', httpStatus: null, result: null, rounds: [GATE] }),
    ],
  ])('accepts %s', (_name, value) => {
    expect(outcomeSchema.safeParse(value).success).toBe(true);
  });

  it.each<[string, unknown, string]>([
    ['missing eventId', without('eventId'), 'eventId'],
    ['missing occurredAt', without('occurredAt'), 'occurredAt'],
    ['missing requestRef', without('requestRef'), 'requestRef'],
    ['missing organization', without('organization'), 'organization'],
    ['missing principal', without('principal'), 'principal'],
    ['missing server', without('server'), 'server'],
    ['missing tool', without('tool'), 'tool'],
    ['missing observed', without('observed'), 'observed'],
    ['missing tool name', withField({ tool: {} }), 'tool.name'],
    ['eventId over 128', withField({ eventId: 'e'.repeat(129) }), 'eventId'],
    ['empty eventId', withField({ eventId: '' }), 'eventId'],
    ['requestRef over 200', withField({ requestRef: 'r'.repeat(201) }), 'requestRef'],
    ['idempotencyKey over 255', withField({ idempotencyKey: 'k'.repeat(256) }), 'idempotencyKey'],
    ['summary over 500', withField({ summary: 's'.repeat(501) }), 'summary'],
    ['organization over 200', withField({ organization: 'o'.repeat(201) }), 'organization'],
    ['tool name over 200', withField({ tool: { name: 't'.repeat(201) } }), 'tool.name'],
    ['sessionId over 1024', withField({ sessionId: 's'.repeat(1025) }), 'sessionId'],
    ['a time without offset', withField({ occurredAt: '2026-11-30T12:00:00' }), 'occurredAt'],
    ['a date only', withField({ occurredAt: '2026-11-30' }), 'occurredAt'],
    ['an impossible date', withField({ occurredAt: '2026-02-30T12:00:00Z' }), 'occurredAt'],
    ['year 0000, which PostgreSQL has not', withField({ occurredAt: '0000-01-01T00:00:00Z' }), 'occurredAt'],
    ['a time past 9999', withField({ occurredAt: '9999-12-31T23:00:00-14:00' }), 'occurredAt'],
    ['a NUL in the summary', withField({ summary: 'a\u0000b' }), 'summary'],
    ['a NUL in an identifier', withField({ requestRef: 'req\u0000' }), 'requestRef'],
    [
      'a NUL in the error category',
      withObserved({ result: { isError: true, errorCategory: '\u0000' } }),
      'observed.result.errorCategory',
    ],
    ['an unknown resultType', withObserved({ resultType: 'partial' }), 'observed.resultType'],
    ['resultType task without a task', withObserved({ resultType: 'task', result: null }), 'observed.task'],
    ['input_required with a result', withObserved({ resultType: 'input_required' }), 'observed.result'],
    ['an unknown task status', withObserved({ task: { id: 't', status: 'done' } }), 'observed.task.status'],
    ['a task without status', withObserved({ task: { id: 't' } }), 'observed.task.status'],
    ['a task with an empty id', withObserved({ task: { id: '', status: 'working' } }), 'observed.task.id'],
    ['a task id over 200', withObserved({ task: { id: 't'.repeat(201), status: 'working' } }), 'observed.task.id'],
    ['a task with extra fields', withObserved({ task: { id: 't', status: 'working', ttl: 5 } }), 'observed.task'],
    [
      'expired after a terminal status',
      withObserved({ task: { id: 't', status: 'completed', expired: true } }),
      'observed.task',
    ],
    [
      'a task when nothing was sent',
      withObserved({ sent: false, httpStatus: null, result: null, task: { id: 't', status: 'working' } }),
      'observed.task',
    ],
    ['a fractional MCP request id', withField({ mcpRequestId: 1.5 }), 'mcpRequestId'],
    ['an object MCP request id', withField({ mcpRequestId: { id: 1 } }), 'mcpRequestId'],
    ['a negative duration', withField({ durationMs: -1 }), 'durationMs'],
    ['attempt 0', withField({ attempt: 0 }), 'attempt'],
    ['raw arguments as a digest', withField({ argsDigest: '{"amount":40}' }), 'argsDigest'],
    ['an unknown top-level key', withField({ arguments: { amount: 40 } }), ''],
    ['an unknown observed key', withObserved({ httpCode: 200 }), 'observed'],
    ['an unknown result key', withObserved({ result: { isError: false, content: 'raw' } }), 'observed.result'],
    [
      'a non-boolean annotation',
      withField({ tool: { name: 'x', annotations: { readOnlyHint: 'yes' } } }),
      'tool.annotations.readOnlyHint',
    ],
    [
      'an unknown client block',
      withObserved({ sent: false, clientBlock: 'nope', httpStatus: null, result: null }),
      'observed.clientBlock',
    ],
    ['an unknown client error', withObserved({ clientError: 'exploded' }), 'observed.clientError'],
    ['an unknown auth error', withObserved({ httpStatus: 401, authError: 'expired' }), 'observed.authError'],
    [
      'an unknown output validation',
      withObserved({ result: { isError: false, outputValidation: 'ok' } }),
      'observed.result.outputValidation',
    ],
    ['an HTTP status out of range', withObserved({ httpStatus: 999 }), 'observed.httpStatus'],
    [
      'an over-long error category',
      withObserved({ result: { isError: true, errorCategory: 'x'.repeat(101) } }),
      'observed.result.errorCategory',
    ],
    ['a status although not sent', withObserved({ sent: false }), 'observed.httpStatus'],
    ['a result although not sent', withObserved({ sent: false, httpStatus: null }), 'observed.result'],
    ['a block although sent', withObserved({ clientBlock: 'approval_required' }), 'observed.clientBlock'],
    ['an auth error on a 500', withObserved({ httpStatus: 500, authError: 'invalid_token' }), 'observed.authError'],
    ['rounds not a list', withObserved({ rounds: ROUND }), 'observed.rounds'],
    ['nine rounds', withObserved({ rounds: Array.from({ length: 9 }, () => ROUND) }), 'observed.rounds'],
    ['a round by someone else', withObserved({ rounds: [{ ...ROUND, by: 'client' }] }), 'observed.rounds.0.by'],
    [
      'a round asking an unknown kind',
      withObserved({ rounds: [{ ...ROUND, asked: ['elicitation'] }] }),
      'observed.rounds.0.asked.0',
    ],
    [
      'a long string as a kind',
      withObserved({ rounds: [{ ...ROUND, asked: ['x'.repeat(10_000)] }] }),
      'observed.rounds.0.asked.0',
    ],
    [
      'a kind named twice',
      withObserved({ rounds: [{ ...ROUND, asked: ['sampling', 'sampling'] }] }),
      'observed.rounds.0.asked',
    ],
    [
      'six kinds',
      withObserved({
        rounds: [
          { ...ROUND, asked: ['elicitation_form', 'elicitation_url', 'sampling', 'roots', 'approval', 'roots'] },
        ],
      }),
      'observed.rounds.0.asked',
    ],
    ['a negative time', withObserved({ rounds: [{ ...ROUND, atMs: -1 }] }), 'observed.rounds.0.atMs'],
    ['a fractional time', withObserved({ rounds: [{ ...ROUND, atMs: 0.5 }] }), 'observed.rounds.0.atMs'],
    ['a time past int4', withObserved({ rounds: [{ ...ROUND, atMs: 2_147_483_648 }] }), 'observed.rounds.0.atMs'],
    ['a time as text', withObserved({ rounds: [{ ...ROUND, atMs: '+0.4 s' }] }), 'observed.rounds.0.atMs'],
    ['1001 requests', withObserved({ rounds: [{ ...ROUND, requests: 1001 }] }), 'observed.rounds.0.requests'],
    ['negative requests', withObserved({ rounds: [{ ...ROUND, requests: -1 }] }), 'observed.rounds.0.requests'],
    [
      'a round without who asked',
      withObserved({ rounds: [{ atMs: 1, asked: [], requests: 1 }] }),
      'observed.rounds.0.by',
    ],
    [
      'a round carrying the question',
      withObserved({ rounds: [{ ...ROUND, message: 'Which account?' }] }),
      'observed.rounds.0',
    ],
  ])('refuses %s, naming the field', (_name, value, path) => {
    expect(firstIssuePath(value)).toBe(path);
  });

  it("takes earlierRecordId only on a guard's refusal, as a uuid", () => {
    const earlierRecordId = '4c1f0000-0000-4000-8000-000000000000';
    const refusal = { ...minimal, observed: { sent: false, clientBlock: 'outcome_unknown' }, earlierRecordId };
    expect(firstIssuePath(refusal)).toBeNull();
    expect(firstIssuePath({ ...refusal, earlierRecordId: 'nope' })).toBe('earlierRecordId');
    expect(firstIssuePath({ ...minimal, earlierRecordId })).toBe('earlierRecordId');
    expect(
      firstIssuePath({ ...minimal, observed: { sent: false, clientBlock: 'approval_required' }, earlierRecordId }),
    ).toBe('earlierRecordId');
  });

  it('drops unknown annotation hints rather than refusing them', () => {
    const parsed = outcomeSchema.parse(
      withField({ tool: { name: 'x', annotations: { readOnlyHint: true, futureHint: 1 } } }),
    );
    expect(parsed.tool.annotations).toEqual({ readOnlyHint: true });
  });
});

describe('outcomeBatchSchema', () => {
  it.each([
    [0, false],
    [1, true],
    [1000, true],
    [1001, false],
  ])('%i records: valid = %s', (count, valid) => {
    const records = Array.from({ length: count }, (_, i) => ({ ...minimal, eventId: `evt_${i}` }));
    expect(outcomeBatchSchema.safeParse({ records }).success).toBe(valid);
  });

  it('refuses unknown keys beside records', () => {
    expect(outcomeBatchSchema.safeParse({ records: [minimal], extra: 1 }).success).toBe(false);
  });
});

describe('isStorableText', () => {
  it('says what storable() accepts: refuses NUL and unpaired surrogates, keeps paired ones', () => {
    const schema = storable(z.string());
    const samples: [string, boolean][] = [
      ['get_order', true],
      ['', true],
      ['emoji \ud83d\ude00 pair', true],
      ['ünïcödé', true],
      ['a\u0000b', false],
      ['\u0000', false],
      ['x\ud800', false],
      ['\udc00x', false],
      ['\ude00\ud83d', false],
    ];
    for (const [text, storableText] of samples) {
      expect(isStorableText(text), JSON.stringify(text)).toBe(storableText);
      expect(schema.safeParse(text).success, JSON.stringify(text)).toBe(storableText);
    }
  });
});
