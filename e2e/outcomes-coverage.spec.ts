import { expect, test } from '@playwright/test';
import { classifyRecord } from '@/lib/outcomes/classify';
import { categories, deliveries, type Observed } from '@/lib/outcomes/schemas';
import { MASKED } from '@/lib/redaction/samples';
import { DEMO_TRUSTED_SERVERS } from '../scripts/demo-outcomes';
import { cli, secretFrom } from '../testing/e2e';

// The tools the rows are observed on. Read-only means readOnlyHint and a trusted server (docs/design.md):
// the seed trusts billing-mcp and orders-mcp, not crm-mcp, whose read-only hint is display-only.
const TOOLS = {
  write: { server: 'billing-mcp', tool: { name: 'refund_payment', annotations: { readOnlyHint: false } } },
  read: { server: 'orders-mcp', tool: { name: 'get_order', annotations: { readOnlyHint: true } } },
  untrustedRead: { server: 'crm-mcp', tool: { name: 'lookup_customer', annotations: { readOnlyHint: true } } },
};
type On = keyof typeof TOOLS;

const sent = (o: Omit<Observed, 'sent'> = {}): Observed => ({ sent: true, ...o });
const rpc = (jsonRpcErrorCode: number) => sent({ httpStatus: 200, jsonRpcErrorCode });
const toolError = (errorCategory?: string) => sent({ httpStatus: 200, result: { isError: true, errorCategory } });

// docs/design.md's classification table, row by row, written out by hand: what was observed, on which
// tool, and "boundary delivery category retry" as the table says. Rows that the record schema cannot
// express yet (2026-07-28 codes and resultType, tasks) are not here.
const ROWS: [row: string, on: On, observed: Observed, expected: string][] = [
  [
    'blocked locally: approval',
    'write',
    { sent: false, clientBlock: 'approval_required' },
    'client never_sent approval_required after_approval',
  ],
  [
    'blocked locally: policy',
    'write',
    { sent: false, clientBlock: 'denied_by_policy' },
    'client never_sent denied_by_policy after_approval',
  ],
  [
    'blocked locally: credential',
    'read',
    { sent: false, clientBlock: 'no_credentials' },
    'client never_sent no_credentials after_approval',
  ],
  [
    'guard: outcome unknown',
    'write',
    { sent: false, clientBlock: 'outcome_unknown' },
    'client never_sent outcome_unknown after_state_check',
  ],
  ['guard: already done', 'write', { sent: false, clientBlock: 'already_done' }, 'client never_sent already_done no'],
  [
    'guard: idempotency key reused',
    'write',
    { sent: false, clientBlock: 'idempotency_key_reused' },
    'client never_sent idempotency_key_reused after_correction',
  ],
  ['guard: not retryable', 'read', { sent: false, clientBlock: 'not_retryable' }, 'client never_sent not_retryable no'],
  [
    'guard: retry too soon',
    'read',
    { sent: false, clientBlock: 'retry_too_soon' },
    'client never_sent retry_too_soon backoff',
  ],
  [
    'guard: budget exhausted',
    'write',
    { sent: false, clientBlock: 'budget_exhausted' },
    'client never_sent budget_exhausted no',
  ],
  [
    'HTTP 401',
    'read',
    sent({ httpStatus: 401, authError: 'invalid_token' }),
    'admission rejected unauthenticated after_reauth',
  ],
  ['HTTP 401, no detail', 'write', sent({ httpStatus: 401 }), 'admission rejected unauthenticated after_reauth'],
  [
    'HTTP 403 insufficient_scope',
    'write',
    sent({ httpStatus: 403, authError: 'insufficient_scope' }),
    'admission rejected forbidden after_approval',
  ],
  ['HTTP 404 on a session', 'read', sent({ httpStatus: 404 }), 'admission rejected session_expired after_reauth'],
  ['HTTP 429', 'read', sent({ httpStatus: 429 }), 'admission rejected rate_limited backoff'],
  ['HTTP 503', 'write', sent({ httpStatus: 503 }), 'admission rejected unavailable backoff'],
  ['HTTP 500, write', 'write', sent({ httpStatus: 500 }), 'admission unknown upstream_failure after_state_check'],
  [
    'HTTP 502, untrusted read',
    'untrustedRead',
    sent({ httpStatus: 502 }),
    'admission unknown upstream_failure after_state_check',
  ],
  ['HTTP 504, trusted read', 'read', sent({ httpStatus: 504 }), 'admission rejected upstream_failure backoff'],
  ['JSON-RPC -32700', 'read', rpc(-32700), 'protocol rejected protocol_error no'],
  ['JSON-RPC -32600', 'write', rpc(-32600), 'protocol rejected protocol_error no'],
  ['JSON-RPC -32601', 'read', rpc(-32601), 'protocol rejected protocol_error no'],
  ['JSON-RPC -32602', 'write', rpc(-32602), 'protocol rejected invalid_arguments after_correction'],
  // docs/design.md's row for -32602 "also when an SDK folds it into an isError result"; a later row
  // (folded, on a tool not trusted as read-only: tool unknown after_state_check) contradicts it.
  [
    'JSON-RPC -32602 folded into isError',
    'read',
    sent({ httpStatus: 200, jsonRpcErrorCode: -32602, result: { isError: true } }),
    'protocol rejected invalid_arguments after_correction',
  ],
  [
    'JSON-RPC -32602, unknown tool',
    'write',
    sent({ httpStatus: 200, jsonRpcErrorCode: -32602, result: { isError: true, errorCategory: 'UNKNOWN_TOOL' } }),
    'protocol rejected unknown_tool after_correction',
  ],
  ['JSON-RPC -32603, write', 'write', rpc(-32603), 'protocol unknown internal after_state_check'],
  ['JSON-RPC -32603, trusted read', 'read', rpc(-32603), 'protocol rejected internal backoff'],
  ['JSON-RPC -32042', 'write', rpc(-32042), 'protocol rejected input_required after_input'],
  ['SDK -32001 timeout, write', 'write', rpc(-32001), 'client unknown timeout after_state_check'],
  ['SDK -32000 connection closed, read', 'read', rpc(-32000), 'client unknown connection_lost backoff'],
  ['timeout after send, write', 'write', sent({ clientError: 'timeout' }), 'client unknown timeout after_state_check'],
  [
    'connection lost after send, read',
    'read',
    sent({ clientError: 'connection_lost' }),
    'client unknown connection_lost backoff',
  ],
  [
    'cancelled after send, untrusted read',
    'untrustedRead',
    sent({ clientError: 'cancelled' }),
    'client unknown cancelled after_state_check',
  ],
  ['isError validation', 'write', toolError('VALIDATION_ERROR'), 'tool rejected validation after_correction'],
  [
    'isError validation (INVALID_INPUT)',
    'read',
    toolError('INVALID_INPUT'),
    'tool rejected validation after_correction',
  ],
  ['isError forbidden', 'write', toolError('PERMISSION_DENIED'), 'tool rejected forbidden after_approval'],
  ['isError denied', 'write', toolError('denied'), 'tool rejected denied no'],
  ['isError not_found', 'read', toolError('NOT_FOUND'), 'tool rejected not_found after_correction'],
  ['isError conflict', 'write', toolError('REVISION_CONFLICT'), 'tool rejected conflict after_state_check'],
  ['isError unavailable', 'write', toolError('RETRYABLE_UPSTREAM'), 'tool rejected unavailable backoff'],
  [
    'isError unavailable (UPSTREAM_UNAVAILABLE)',
    'read',
    toolError('UPSTREAM_UNAVAILABLE'),
    'tool rejected unavailable backoff',
  ],
  ['isError rate_limited', 'read', toolError('rate-limited'), 'tool rejected rate_limited backoff'],
  ['isError, no category, write', 'write', toolError(), 'tool unknown tool_error after_state_check'],
  [
    'isError, unrecognised category, untrusted read',
    'untrustedRead',
    toolError('SOMETHING_ODD'),
    'tool unknown tool_error after_state_check',
  ],
  ['isError, no category, trusted read', 'read', toolError(), 'tool rejected tool_error backoff'],
  [
    'result failing outputSchema',
    'read',
    sent({ httpStatus: 200, result: { isError: false, outputValidation: 'invalid' } }),
    'tool completed output_schema_violation no',
  ],
  [
    'result, structuredContent missing',
    'write',
    sent({ httpStatus: 200, result: { isError: false, outputValidation: 'missing' } }),
    'tool completed output_schema_violation no',
  ],
  [
    'result, valid',
    'write',
    sent({ httpStatus: 200, result: { isError: false, outputValidation: 'valid' } }),
    'none completed ok no',
  ],
  [
    'result, no schema declared',
    'read',
    sent({ httpStatus: 200, result: { isError: false, outputValidation: 'not_declared' } }),
    'none completed ok no',
  ],
  ['sent, nothing else reported, write', 'write', sent(), 'client unknown no_response after_state_check'],
  ['sent, nothing else reported, trusted read', 'read', sent(), 'client unknown no_response backoff'],
  // MCP tasks (docs/design.md, the task rows): running or waiting is unknown until the task ends.
  [
    'a task still working, write',
    'write',
    sent({ task: { id: 'task-w', status: 'working' } }),
    'tool unknown task_running after_state_check',
  ],
  [
    'a task waiting for input, write',
    'write',
    sent({ task: { id: 'task-i', status: 'input_required' } }),
    'tool unknown task_input_required after_state_check',
  ],
  [
    'a task cancelled, write',
    'write',
    sent({ task: { id: 'task-c', status: 'cancelled' } }),
    'tool unknown task_cancelled after_state_check',
  ],
  [
    'a task expired before it ended, write',
    'write',
    sent({ task: { id: 'task-e', status: 'working', expired: true } }),
    'tool unknown task_expired after_state_check',
  ],
];

// Every row through the real HTTP API, and every masking kind: what the server answers and
// stores must be what docs/design.md's table and the masking samples say.
test('every classification row and every masking kind, through the API', async ({ request }) => {
  expect(DEMO_TRUSTED_SERVERS).toEqual(expect.arrayContaining([TOOLS.write.server, TOOLS.read.server]));
  expect(DEMO_TRUSTED_SERVERS).not.toContain(TOOLS.untrustedRead.server);
  const run = `cov${Date.now().toString(36)}`;
  const key = secretFrom(
    cli('apikeys:create', '--name', `e2e-${run}`, '--scopes', 'outcomes:write,outcomes:read'),
    'cs_live_',
  );
  const headers = { authorization: `Bearer ${key}` };
  const record = (i: number, on: On, observed: Observed) => ({
    eventId: `${run}_${i}`,
    occurredAt: new Date().toISOString(),
    requestRef: `${run}_rows`,
    organization: 'acme',
    principal: 'user_193',
    ...TOOLS[on],
    summary: `Row ${i}`,
    observed,
  });

  const records = ROWS.map(([, on, observed], i) => record(i, on, observed));
  const res = await request.post('/api/v1/outcomes', { headers, data: { records } });
  expect(res.status()).toBe(200);
  const body = await res.json();
  expect(body.accepted).toBe(records.length);
  ROWS.forEach(([row, on, , expected], i) => {
    const [boundary, delivery, category, retry] = expected.split(' ');
    const got = body.records[i].classification;
    expect(got, row).toMatchObject({ boundary, delivery, category, retry, readOnly: on === 'read' });
    // And the wording is the shared classifier's, the one the agent side runs too.
    expect(got, row).toEqual(classifyRecord(records[i], on !== 'untrustedRead'));
  });
  const categoriesSeen = new Set(ROWS.map(([, , , e]) => e.split(' ')[2]));
  expect(categories.filter((c) => !categoriesSeen.has(c))).toEqual(['not_sent']);
  expect(new Set(ROWS.map(([, , , e]) => e.split(' ')[1]))).toEqual(new Set(deliveries));

  const ref = `${run}_masking`;
  const masked = MASKED.map(([kind, input, output], i) => ({
    kind,
    output,
    record: {
      ...record(i, 'write', sent({ httpStatus: 200 })),
      eventId: `${run}_mask_${i}`,
      requestRef: ref,
      summary: input,
    },
  }));
  for (const m of masked) expect(m.record.summary.length, m.kind).toBeLessThanOrEqual(500);
  const posted = await request.post('/api/v1/outcomes', { headers, data: { records: masked.map((m) => m.record) } });
  expect(posted.status()).toBe(200);
  const listed = await request.get(`/api/v1/outcomes?requestRef=${ref}&limit=200`, { headers });
  const items: { eventId: string; summary: string }[] = (await listed.json()).items;
  expect(items).toHaveLength(masked.length);
  for (const m of masked) {
    const item = items.find((it) => it.eventId === m.record.eventId);
    expect(item?.summary, m.kind).toBe(m.output);
  }
});
