// The mapping of docs/api.md "OpenTelemetry in", one span at a time: hand-written spans in, the
// hand-written record each must become out (no database).
import { describe, expect, it } from 'vitest';
import type { AttrValue, OtlpSpan } from './decode';
import { classifyRecord } from '@/lib/outcomes/classify';
import { mapSpan } from './map';
import { validateRecord } from './validate';

const TRACE = '5b8efff798038103d269b633813fc60c';
const SPAN = 'eee19b7ec3c1b174';
const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);

function span(
  attrs: Record<string, AttrValue>,
  over: Partial<OtlpSpan> = {},
  resource: Record<string, AttrValue> = {},
) {
  return {
    traceId: TRACE,
    spanId: SPAN,
    kind: 3,
    startMs: T0,
    endMs: T0 + 812,
    statusCode: 0,
    attributes: new Map(Object.entries(attrs)),
    resource: new Map(Object.entries({ 'service.name': 'support-bot', ...resource })),
    ...over,
  } satisfies OtlpSpan;
}

const required = {
  'mcp.method.name': 'tools/call',
  'gen_ai.tool.name': 'refund_payment',
  'countersign.request_ref': 'req_8f2c',
  'countersign.principal': 'user_193',
  'countersign.organization': 'acme',
  'countersign.server': 'billing-mcp',
};
const record = {
  eventId: `otel:${TRACE}:${SPAN}`,
  occurredAt: '2026-11-30T12:00:00.000Z',
  durationMs: 812,
  requestRef: 'req_8f2c',
  organization: 'acme',
  principal: 'user_193',
  agent: 'support-bot',
  server: 'billing-mcp',
  tool: { name: 'refund_payment' },
};

const cases: [string, Record<string, AttrValue>, Partial<OtlpSpan>, Record<string, unknown>][] = [
  ['a plain success', {}, {}, { ...record, observed: { sent: true, result: { isError: false } } }],
  [
    'every attribute the table names',
    {
      'countersign.idempotency_key': 'refund-4411-v1',
      'countersign.args_digest': `sha256:${'ab'.repeat(32)}`,
      'countersign.summary': 'Refund 40.00 EUR on order 4411',
      'countersign.grant_id': 'grt_1',
      'countersign.output_validation': 'valid',
      'countersign.tool.read_only_hint': false,
      'countersign.tool.destructive_hint': 'true',
      'countersign.tool.idempotent_hint': false,
      'countersign.tool.open_world_hint': true,
      'jsonrpc.request.id': 17,
      'mcp.session.id': 'sess-1',
      'mcp.protocol.version': '2025-11-25',
      'http.response.status_code': 200,
      'server.address': 'ignored.example.test',
      'gen_ai.tool.call.arguments': '{"x":1}',
    },
    {},
    {
      ...record,
      idempotencyKey: 'refund-4411-v1',
      argsDigest: `sha256:${'ab'.repeat(32)}`,
      summary: 'Refund 40.00 EUR on order 4411',
      grantId: 'grt_1',
      protocolVersion: '2025-11-25',
      mcpRequestId: 17,
      sessionId: 'sess-1',
      tool: {
        name: 'refund_payment',
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      },
      observed: { sent: true, httpStatus: 200, result: { isError: false, outputValidation: 'valid' } },
    },
  ],
  [
    'tool_error with a category',
    { 'error.type': 'tool_error', 'countersign.error_category': 'VALIDATION_ERROR' },
    {},
    { ...record, observed: { sent: true, result: { isError: true, errorCategory: 'VALIDATION_ERROR' } } },
  ],
  ['-32001', { 'error.type': '-32001' }, {}, { ...record, observed: { sent: true, clientError: 'timeout' } }],
  [
    '-32000 with the same rpc code',
    { 'error.type': '-32000', 'rpc.response.status_code': '-32000' },
    {},
    { ...record, observed: { sent: true, clientError: 'connection_lost' } },
  ],
  ['-32602', { 'error.type': '-32602' }, {}, { ...record, observed: { sent: true, jsonRpcErrorCode: -32602 } }],
  [
    'rpc.response.status_code with tool_error',
    { 'error.type': 'tool_error', 'rpc.response.status_code': '-32602' },
    {},
    { ...record, observed: { sent: true, jsonRpcErrorCode: -32602, result: { isError: true } } },
  ],
  [
    'an HTTP status as error.type',
    { 'error.type': '503', 'http.response.status_code': 503 },
    {},
    { ...record, observed: { sent: true, httpStatus: 503 } },
  ],
  ['_OTHER', { 'error.type': '_OTHER' }, {}, { ...record, observed: { sent: true } }],
  ['status ERROR without error.type', {}, { statusCode: 2 }, { ...record, observed: { sent: true } }],
  ['not ended', {}, { endMs: 0 }, { ...record, durationMs: undefined, observed: { sent: true } }],
];

describe('one span, one record', () => {
  it.each(cases)('%s', (_name, attrs, over, expected) => {
    const out = mapSpan(span({ ...required, ...attrs }, over));
    expect(out).toEqual({ kind: 'record', ref: `${TRACE}:${SPAN}`, record: JSON.parse(JSON.stringify(expected)) });
    if (out.kind === 'record') expect(validateRecord(out.record).ok).toBe(true);
  });

  it('server.address when countersign.server is absent; attributes from the resource', () => {
    const { 'countersign.server': _s, 'countersign.organization': _o, ...rest } = required;
    const out = mapSpan(
      span({ ...rest, 'server.address': 'billing.example.test' }, {}, { 'countersign.organization': 'acme' }),
    );
    expect(out.kind === 'record' && [out.record.server, out.record.organization]).toEqual([
      'billing.example.test',
      'acme',
    ]);
  });
});

describe('skipped and rejected', () => {
  it.each([
    ['a server span', span(required, { kind: 2 })],
    ['tools/list', span({ ...required, 'mcp.method.name': 'tools/list' })],
    ['no mcp.method.name', span({ 'gen_ai.tool.name': 'x' })],
  ])('%s is skipped', (_n, s) => expect(mapSpan(s)).toEqual({ kind: 'skipped' }));

  it.each([
    ['countersign.principal', { 'countersign.principal': '' }, 'missing required attribute countersign.principal'],
    [
      'two required',
      { 'countersign.request_ref': undefined, 'gen_ai.tool.name': undefined },
      'missing required attributes countersign.request_ref, gen_ai.tool.name',
    ],
    [
      'a list as a string',
      { 'countersign.summary': { other: 'array' } },
      'countersign.summary must be a string, not an array',
    ],
    [
      'a non-boolean hint',
      { 'countersign.tool.read_only_hint': 'yes' },
      'countersign.tool.read_only_hint must be a boolean',
    ],
    ['a non-integer status', { 'http.response.status_code': 'ok' }, 'http.response.status_code must be an integer'],
  ] as [string, Record<string, AttrValue | undefined>, string][])('%s', (_n, attrs, reason) => {
    const merged = Object.fromEntries(
      Object.entries({ ...required, ...attrs }).filter(([, v]) => v !== undefined),
    ) as Record<string, AttrValue>;
    expect(mapSpan(span(merged))).toEqual({ kind: 'rejected', ref: `${TRACE}:${SPAN}`, reason });
  });

  it('ids and times', () => {
    expect(mapSpan(span(required, { traceId: '0'.repeat(32) }))).toMatchObject({
      reason: 'traceId must be 16 bytes, not all zero',
    });
    expect(mapSpan(span(required, { spanId: 'abc' }))).toMatchObject({
      reason: 'spanId must be 8 bytes, not all zero',
    });
    expect(mapSpan(span(required, { startMs: 0 }))).toMatchObject({
      reason: expect.stringContaining('startTimeUnixNano'),
    });
  });

  it('the schema names the attribute', () => {
    const out = mapSpan(span({ ...required, 'countersign.output_validation': 'maybe' }));
    expect(out.kind === 'record' && validateRecord(out.record)).toEqual({
      ok: false,
      reason: expect.stringMatching(/^countersign\.output_validation: /),
    });
  });
});

// docs/design.md "Telemetry in": mapped spans are classified by the same classifier, version 2 rows
// included. Expected verdicts hand-written from docs/design.md's table.
describe('mapped spans through the shared classifier', () => {
  const WRITE = { 'countersign.tool.read_only_hint': false };
  const READ = { 'countersign.tool.read_only_hint': true };
  it.each<[string, Record<string, AttrValue>, boolean, [string, string, string, string]]>([
    [
      'error.type -32022 (unsupported protocol version)',
      { 'error.type': '-32022' },
      false,
      ['protocol', 'rejected', 'protocol_error', 'no'],
    ],
    [
      'rpc.response.status_code -32020',
      { 'rpc.response.status_code': '-32020', 'error.type': '-32020' },
      false,
      ['protocol', 'rejected', 'protocol_error', 'no'],
    ],
    ['error.type -32021', { 'error.type': '-32021' }, false, ['protocol', 'rejected', 'protocol_error', 'no']],
    [
      'the folded -32602 on a write',
      { ...WRITE, 'error.type': 'tool_error', 'rpc.response.status_code': '-32602' },
      true,
      ['tool', 'unknown', 'invalid_arguments', 'after_state_check'],
    ],
    [
      'the folded -32602 on a write of an untrusted server claiming read-only',
      { ...READ, 'error.type': 'tool_error', 'rpc.response.status_code': '-32602' },
      false,
      ['tool', 'unknown', 'invalid_arguments', 'after_state_check'],
    ],
    [
      'the folded -32602 on a trusted read',
      { ...READ, 'error.type': 'tool_error', 'rpc.response.status_code': '-32602' },
      true,
      ['protocol', 'rejected', 'invalid_arguments', 'after_correction'],
    ],
    [
      'a plain -32602 (no tool_error) on a write',
      { ...WRITE, 'error.type': '-32602' },
      true,
      ['protocol', 'rejected', 'invalid_arguments', 'after_correction'],
    ],
    [
      'a task still working',
      { ...WRITE, 'countersign.task.id': 'tsk_1', 'countersign.task.status': 'working' },
      true,
      ['tool', 'unknown', 'task_running', 'after_state_check'],
    ],
    [
      'a task that completed, span ended cleanly',
      { ...WRITE, 'countersign.task.id': 'tsk_1', 'countersign.task.status': 'completed' },
      true,
      ['none', 'completed', 'ok', 'no'],
    ],
    [
      'a task cancelled',
      { ...WRITE, 'countersign.task.id': 'tsk_1', 'countersign.task.status': 'cancelled' },
      true,
      ['tool', 'unknown', 'task_cancelled', 'after_state_check'],
    ],
  ])('%s', (_name, attrs, trusted, [boundary, delivery, category, retry]) => {
    const out = mapSpan(span({ ...required, ...attrs }));
    if (out.kind !== 'record') throw new Error(`not a record: ${JSON.stringify(out)}`);
    const valid = validateRecord(out.record);
    if (!valid.ok) throw new Error(valid.reason);
    expect(classifyRecord(valid.record, trusted)).toMatchObject({ boundary, delivery, category, retry });
  });
});
