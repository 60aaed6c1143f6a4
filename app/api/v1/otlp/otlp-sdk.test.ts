// POST /api/v1/otlp/v1/traces fed by the real OpenTelemetry JS SDK (sdk-trace-node with the OTLP
// protobuf and HTTP/JSON exporters) through a real HTTP listener: one span per classification row
// of docs/design.md "Classifying an outcome", the records stored and their classifications checked
// against the hand-written table below; re-exports are duplicates.
import { SpanStatusCode, type Attributes } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cli } from '@/lib/auth/actor';
import { createApiKey } from '@/lib/server/credentials/credentials';
import { uniq } from '@/testing/factories';
import {
  deserialize,
  exportWithSdk,
  makeSpans,
  serialize,
  startOtlpConsole,
  storedOtelRecords,
  SUCCESS,
  type Console,
} from '@/testing/otlp';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

let console_: Console;
let key = '';
beforeAll(async () => {
  console_ = await startOtlpConsole();
  const created = await createApiKey(cli, { name: uniq('otlp'), scopes: ['outcomes:write'] });
  if (!created.ok) throw new Error('set-up: API key');
  key = created.value.secret;
});
afterAll(() => console_.close());

// observed attributes → the classification docs/design.md's table gives (server untrusted: writes).
type Row = { name: string; attrs: Attributes; status?: SpanStatusCode; expect: [string, string, string, string] };
const rows: Row[] = [
  {
    name: 'result, valid',
    attrs: { 'countersign.output_validation': 'valid' },
    expect: ['none', 'completed', 'ok', 'no'],
  },
  { name: 'result, no schema', attrs: {}, expect: ['none', 'completed', 'ok', 'no'] },
  {
    name: 'result failing its schema',
    attrs: { 'countersign.output_validation': 'invalid' },
    expect: ['tool', 'completed', 'output_schema_violation', 'no'],
  },
  {
    name: 'HTTP 401',
    attrs: { 'error.type': '401', 'http.response.status_code': 401 },
    expect: ['admission', 'rejected', 'unauthenticated', 'after_reauth'],
  },
  {
    name: 'HTTP 403',
    attrs: { 'error.type': '403', 'http.response.status_code': 403 },
    expect: ['admission', 'rejected', 'forbidden', 'after_approval'],
  },
  {
    name: 'HTTP 404',
    attrs: { 'error.type': '404', 'http.response.status_code': 404 },
    expect: ['admission', 'rejected', 'session_expired', 'after_reauth'],
  },
  {
    name: 'HTTP 429',
    attrs: { 'error.type': '429', 'http.response.status_code': 429 },
    expect: ['admission', 'rejected', 'rate_limited', 'backoff'],
  },
  {
    name: 'HTTP 503',
    attrs: { 'error.type': '503', 'http.response.status_code': 503 },
    expect: ['admission', 'rejected', 'unavailable', 'backoff'],
  },
  {
    name: 'HTTP 502',
    attrs: { 'error.type': '502', 'http.response.status_code': 502 },
    expect: ['admission', 'unknown', 'upstream_failure', 'after_state_check'],
  },
  {
    name: 'JSON-RPC -32700',
    attrs: { 'error.type': '-32700', 'rpc.response.status_code': '-32700' },
    expect: ['protocol', 'rejected', 'protocol_error', 'no'],
  },
  {
    name: 'JSON-RPC -32601',
    attrs: { 'error.type': '-32601' },
    expect: ['protocol', 'rejected', 'protocol_error', 'no'],
  },
  {
    name: 'JSON-RPC -32602',
    attrs: { 'error.type': '-32602' },
    expect: ['protocol', 'rejected', 'invalid_arguments', 'after_correction'],
  },
  {
    name: 'JSON-RPC -32603',
    attrs: { 'error.type': '-32603' },
    expect: ['protocol', 'unknown', 'internal', 'after_state_check'],
  },
  {
    name: 'JSON-RPC -32042',
    attrs: { 'error.type': '-32042' },
    expect: ['protocol', 'rejected', 'input_required', 'after_input'],
  },
  {
    name: 'SDK timeout',
    attrs: { 'error.type': '-32001' },
    expect: ['client', 'unknown', 'timeout', 'after_state_check'],
  },
  {
    name: 'connection closed',
    attrs: { 'error.type': '-32000' },
    expect: ['client', 'unknown', 'connection_lost', 'after_state_check'],
  },
  {
    name: 'isError, VALIDATION_ERROR',
    attrs: { 'error.type': 'tool_error', 'countersign.error_category': 'VALIDATION_ERROR' },
    expect: ['tool', 'rejected', 'validation', 'after_correction'],
  },
  {
    name: 'isError, PERMISSION_DENIED',
    attrs: { 'error.type': 'tool_error', 'countersign.error_category': 'PERMISSION_DENIED' },
    expect: ['tool', 'rejected', 'forbidden', 'after_approval'],
  },
  {
    name: 'isError, not_found',
    attrs: { 'error.type': 'tool_error', 'countersign.error_category': 'not_found' },
    expect: ['tool', 'rejected', 'not_found', 'after_correction'],
  },
  {
    name: 'isError, REVISION_CONFLICT',
    attrs: { 'error.type': 'tool_error', 'countersign.error_category': 'REVISION_CONFLICT' },
    expect: ['tool', 'rejected', 'conflict', 'after_state_check'],
  },
  {
    name: 'isError, RETRYABLE_UPSTREAM',
    attrs: { 'error.type': 'tool_error', 'countersign.error_category': 'RETRYABLE_UPSTREAM' },
    expect: ['tool', 'rejected', 'unavailable', 'backoff'],
  },
  {
    name: 'isError, no category',
    attrs: { 'error.type': 'tool_error' },
    expect: ['tool', 'unknown', 'tool_error', 'after_state_check'],
  },
  {
    name: 'isError, unrecognised category',
    attrs: { 'error.type': 'tool_error', 'countersign.error_category': 'SOMETHING_ODD' },
    expect: ['tool', 'unknown', 'tool_error', 'after_state_check'],
  },
  {
    name: 'error.type _OTHER',
    attrs: { 'error.type': '_OTHER' },
    expect: ['client', 'unknown', 'no_response', 'after_state_check'],
  },
  {
    name: 'an exception name',
    attrs: { 'error.type': 'TypeError' },
    expect: ['client', 'unknown', 'no_response', 'after_state_check'],
  },
  {
    name: 'status ERROR, no error.type',
    attrs: {},
    status: SpanStatusCode.ERROR,
    expect: ['client', 'unknown', 'no_response', 'after_state_check'],
  },
];

const base = (ref: string, i: number): Attributes => ({
  'mcp.method.name': 'tools/call',
  'gen_ai.tool.name': 'refund_payment',
  'countersign.request_ref': `${ref}-${String(i).padStart(2, '0')}`,
  'countersign.principal': 'user_193',
  'countersign.organization': 'acme',
  'server.address': 'billing.example.test',
  'countersign.server': 'otel-billing-mcp',
  'jsonrpc.request.id': String(i),
  'mcp.protocol.version': '2025-11-25',
});

describe.each(['protobuf', 'json'] as const)('the SDK exporting over %s', (protocol) => {
  it('stores one record per MCP client span, classified as the table says; a re-export is all duplicates', async () => {
    const ref = uniq(`otel-${protocol}`);
    const spans = makeSpans(
      rows.map((r, i) => ({ attributes: { ...base(ref, i), ...r.attrs }, status: r.status, durationMs: 200 + i })),
    );
    const first = await exportWithSdk(console_.origin, key, spans, protocol);
    expect(first.result.code, String(first.result.error)).toBe(SUCCESS);
    expect(first.warnings.join('\n')).not.toMatch(/rejected/);

    const stored = await storedOtelRecords(ref);
    expect(stored).toHaveLength(rows.length);
    stored.forEach((s, i) => {
      const span = spans[i].spanContext();
      expect(s.event_id).toBe(`otel:${span.traceId}:${span.spanId}`);
      expect([s.boundary, s.delivery, s.category, s.retry], rows[i].name).toEqual(rows[i].expect);
      expect({ tool: s.tool_name, server: s.server, agent: s.agent }).toEqual({
        tool: 'refund_payment',
        server: 'otel-billing-mcp',
        agent: 'otel-agent',
      });
    });

    const again = await exportWithSdk(console_.origin, key, spans, protocol);
    expect(again.result.code).toBe(SUCCESS);
    const after = await storedOtelRecords(ref);
    expect(after.map((s) => s.whole)).toEqual(stored.map((s) => s.whole));
  });
});

it('the SDK exporting gzip-compressed protobuf is stored', async () => {
  const ref = uniq('otel-gzip');
  const spans = makeSpans([{ attributes: base(ref, 0) }]);
  const out = await exportWithSdk(console_.origin, key, spans, 'protobuf', 'gzip');
  expect(out.result.code, String(out.result.error)).toBe(SUCCESS);
  expect((await storedOtelRecords(ref)).map((s) => s.category)).toEqual(['ok']);
});

it('four concurrent exports of the same spans store each span once', async () => {
  const ref = uniq('otel-race');
  const spans = makeSpans([0, 1, 2].map((i) => ({ attributes: base(ref, i) })));
  const body = serialize(spans);
  const answers = await Promise.all(
    [0, 1, 2, 3].map(() =>
      fetch(`${console_.origin}/api/v1/otlp/v1/traces`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-protobuf' },
        body,
      }),
    ),
  );
  for (const a of answers) {
    expect(a.status).toBe(200);
    expect(deserialize(new Uint8Array(await a.arrayBuffer())).partialSuccess?.rejectedSpans ?? 0).toBe(0);
  }
  expect(await storedOtelRecords(ref)).toHaveLength(3);
});

// An AnyValue's member is its type: false and 0 are values, not absences (lib/otlp/proto.ts).
it.each(['protobuf', 'json'] as const)(
  'the SDK exporting over %s keeps false and 0 attribute values',
  async (protocol) => {
    const ref = uniq(`otel-zero-${protocol}`);
    const spans = makeSpans([
      {
        attributes: {
          ...base(ref, 0),
          'jsonrpc.request.id': 0,
          'countersign.tool.read_only_hint': false,
          'countersign.tool.destructive_hint': false,
          'countersign.tool.idempotent_hint': true,
          'countersign.tool.open_world_hint': false,
        },
      },
    ]);
    const out = await exportWithSdk(console_.origin, key, spans, protocol);
    expect(out.result.code, String(out.result.error)).toBe(SUCCESS);
    const [stored] = await storedOtelRecords(ref);
    const whole = JSON.parse(stored.whole) as { tool_annotations: unknown; mcp_request_id: unknown };
    expect(whole.tool_annotations).toEqual({
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    });
    expect(whole.mcp_request_id).toBe(0);
  },
);
