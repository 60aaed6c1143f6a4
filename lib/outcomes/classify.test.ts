import { describe, expect, it } from 'vitest';
import { clientErrors, type Observed } from './schemas';
import { classifyAs, e, sent, toolError, TRUSTED_READ, WRITE, type Expected } from '@/testing/classify-fixtures';

// One row per row of docs/design.md's table (its MCP task rows: classify-tasks.test.ts): [name, observed, write,
// trusted read-only (if it differs)].
const TABLE: [string, Observed, Expected, Expected?][] = [
  ...(['approval_required', 'denied_by_policy', 'no_credentials'] as const).map(
    (block): [string, Observed, Expected] => [
      `blocked locally: ${block}`,
      { sent: false, clientBlock: block },
      e('client', 'never_sent', block, 'after_approval'),
    ],
  ),
  // Refused by a guard (docs/design.md "Guards at the point of execution"), the retry of its row.
  [
    'guard: outcome_unknown',
    { sent: false, clientBlock: 'outcome_unknown' },
    e('client', 'never_sent', 'outcome_unknown', 'after_state_check'),
  ],
  [
    'guard: already_done',
    { sent: false, clientBlock: 'already_done' },
    e('client', 'never_sent', 'already_done', 'no'),
  ],
  [
    'guard: idempotency_key_reused',
    { sent: false, clientBlock: 'idempotency_key_reused' },
    e('client', 'never_sent', 'idempotency_key_reused', 'after_correction'),
  ],
  [
    // The earlier refusal's retry is not in the observation: the strictest of the three.
    'guard: not_retryable',
    { sent: false, clientBlock: 'not_retryable' },
    e('client', 'never_sent', 'not_retryable', 'no'),
  ],
  [
    'guard: retry_too_soon',
    { sent: false, clientBlock: 'retry_too_soon' },
    e('client', 'never_sent', 'retry_too_soon', 'backoff'),
  ],
  [
    'guard: budget_exhausted',
    { sent: false, clientBlock: 'budget_exhausted' },
    e('client', 'never_sent', 'budget_exhausted', 'no'),
  ],
  ['HTTP 401', sent({ httpStatus: 401 }), e('admission', 'rejected', 'unauthenticated', 'after_reauth')],
  [
    'HTTP 401 invalid_token',
    sent({ httpStatus: 401, authError: 'invalid_token' }),
    e('admission', 'rejected', 'unauthenticated', 'after_reauth'),
  ],
  [
    'HTTP 403 insufficient_scope',
    sent({ httpStatus: 403, authError: 'insufficient_scope' }),
    e('admission', 'rejected', 'forbidden', 'after_approval'),
  ],
  ['HTTP 403', sent({ httpStatus: 403 }), e('admission', 'rejected', 'forbidden', 'after_approval')],
  ['HTTP 404 on a session', sent({ httpStatus: 404 }), e('admission', 'rejected', 'session_expired', 'after_reauth')],
  ['HTTP 429', sent({ httpStatus: 429 }), e('admission', 'rejected', 'rate_limited', 'backoff')],
  ['HTTP 503', sent({ httpStatus: 503 }), e('admission', 'rejected', 'unavailable', 'backoff')],
  ...[500, 502, 504].map((status): [string, Observed, Expected, Expected] => [
    `HTTP ${status}`,
    sent({ httpStatus: status }),
    e('admission', 'unknown', 'upstream_failure', 'after_state_check'),
    e('admission', 'rejected', 'upstream_failure', 'backoff'),
  ]),
  ...[-32700, -32600, -32601].map((code): [string, Observed, Expected] => [
    `JSON-RPC ${code}`,
    sent({ httpStatus: 200, jsonRpcErrorCode: code }),
    e('protocol', 'rejected', 'protocol_error', 'no'),
  ]),
  [
    'JSON-RPC -32602',
    sent({ httpStatus: 200, jsonRpcErrorCode: -32602 }),
    e('protocol', 'rejected', 'invalid_arguments', 'after_correction'),
  ],
  [
    // Version 2: on a write the folded code may be the SDK's post-handler output check.
    '-32602 folded by an SDK into an isError result',
    sent({ httpStatus: 200, jsonRpcErrorCode: -32602, result: { isError: true } }),
    e('tool', 'unknown', 'invalid_arguments', 'after_state_check'),
    e('protocol', 'rejected', 'invalid_arguments', 'after_correction'),
  ],
  [
    'near miss: -32602 with a clean (non-error) result is not folded',
    sent({ jsonRpcErrorCode: -32602, result: { isError: false, outputValidation: 'valid' } }),
    e('protocol', 'rejected', 'invalid_arguments', 'after_correction'),
  ],
  [
    'near miss: -32603 folded into an isError result stays internal',
    sent({ jsonRpcErrorCode: -32603, result: { isError: true } }),
    e('protocol', 'unknown', 'internal', 'after_state_check'),
    e('protocol', 'rejected', 'internal', 'backoff'),
  ],
  [
    'folded -32602 declared as an unknown tool: nothing ran',
    sent({ jsonRpcErrorCode: -32602, result: { isError: true, errorCategory: 'unknown_tool' } }),
    e('protocol', 'rejected', 'unknown_tool', 'after_correction'),
  ],
  ...[-32020, -32021, -32022].map((code): [string, Observed, Expected] => [
    `JSON-RPC ${code} (2026-07-28)`,
    sent({ httpStatus: 200, jsonRpcErrorCode: code }),
    e('protocol', 'rejected', 'protocol_error', 'no'),
  ]),
  [
    'near miss: -32023 is no known protocol code',
    sent({ jsonRpcErrorCode: -32023 }),
    e('protocol', 'unknown', 'internal', 'after_state_check'),
    e('protocol', 'rejected', 'internal', 'backoff'),
  ],
  [
    'resultType input_required (2026-07-28 multi round-trip)',
    sent({ httpStatus: 200, resultType: 'input_required' }),
    e('protocol', 'rejected', 'input_required', 'after_input'),
  ],
  [
    'near miss: resultType complete with a result is the result',
    sent({ resultType: 'complete', result: { isError: false, outputValidation: 'valid' } }),
    e('none', 'completed', 'ok', 'no'),
  ],
  [
    'near miss: resultType complete and nothing else is no response',
    sent({ resultType: 'complete' }),
    e('client', 'unknown', 'no_response', 'after_state_check'),
    e('client', 'unknown', 'no_response', 'backoff'),
  ],
  [
    '-32602 declared as an unknown tool',
    sent({ jsonRpcErrorCode: -32602, result: { isError: true, errorCategory: 'UNKNOWN_TOOL' } }),
    e('protocol', 'rejected', 'unknown_tool', 'after_correction'),
  ],
  [
    'JSON-RPC -32603',
    sent({ httpStatus: 200, jsonRpcErrorCode: -32603 }),
    e('protocol', 'unknown', 'internal', 'after_state_check'),
    e('protocol', 'rejected', 'internal', 'backoff'),
  ],
  [
    'JSON-RPC -32042 (URL elicitation)',
    sent({ httpStatus: 200, jsonRpcErrorCode: -32042 }),
    e('protocol', 'rejected', 'input_required', 'after_input'),
  ],
  [
    'SDK -32001 timeout',
    sent({ jsonRpcErrorCode: -32001 }),
    e('client', 'unknown', 'timeout', 'after_state_check'),
    e('client', 'unknown', 'timeout', 'backoff'),
  ],
  [
    'SDK -32000 connection closed',
    sent({ jsonRpcErrorCode: -32000 }),
    e('client', 'unknown', 'connection_lost', 'after_state_check'),
    e('client', 'unknown', 'connection_lost', 'backoff'),
  ],
  ...clientErrors.map((error): [string, Observed, Expected, Expected] => [
    `client error ${error} after send`,
    sent({ clientError: error }),
    e('client', 'unknown', error, 'after_state_check'),
    e('client', 'unknown', error, 'backoff'),
  ]),
  ['isError validation', sent(toolError('validation')), e('tool', 'rejected', 'validation', 'after_correction')],
  ['isError forbidden', sent(toolError('forbidden')), e('tool', 'rejected', 'forbidden', 'after_approval')],
  ['isError denied', sent(toolError('denied')), e('tool', 'rejected', 'denied', 'no')],
  ['isError not_found', sent(toolError('not_found')), e('tool', 'rejected', 'not_found', 'after_correction')],
  ['isError conflict', sent(toolError('conflict')), e('tool', 'rejected', 'conflict', 'after_state_check')],
  ['isError unavailable', sent(toolError('unavailable')), e('tool', 'rejected', 'unavailable', 'backoff')],
  ['isError rate_limited', sent(toolError('rate_limited')), e('tool', 'rejected', 'rate_limited', 'backoff')],
  [
    'isError with no category',
    sent(toolError(null)),
    e('tool', 'unknown', 'tool_error', 'after_state_check'),
    e('tool', 'rejected', 'tool_error', 'backoff'),
  ],
  [
    'isError with an unrecognised category',
    sent(toolError('KABOOM')),
    e('tool', 'unknown', 'tool_error', 'after_state_check'),
    e('tool', 'rejected', 'tool_error', 'backoff'),
  ],
  ...(['invalid', 'missing'] as const).map((validation): [string, Observed, Expected] => [
    `result, output ${validation}`,
    sent({ httpStatus: 200, result: { isError: false, outputValidation: validation } }),
    e('tool', 'completed', 'output_schema_violation', 'no'),
  ]),
  ...(['valid', 'not_declared', undefined] as const).map((validation): [string, Observed, Expected] => [
    `result, output ${validation ?? 'not reported'}`,
    sent({ httpStatus: 200, result: { isError: false, outputValidation: validation } }),
    e('none', 'completed', 'ok', 'no'),
  ]),
  [
    'sent, nothing else reported',
    sent(),
    e('client', 'unknown', 'no_response', 'after_state_check'),
    e('client', 'unknown', 'no_response', 'backoff'),
  ],
  [
    'sent, HTTP 200 but no answer',
    sent({ httpStatus: 200 }),
    e('client', 'unknown', 'no_response', 'after_state_check'),
    e('client', 'unknown', 'no_response', 'backoff'),
  ],
];

describe('classifyOutcome: docs/design.md table', () => {
  it.each(TABLE)('%s (write)', (_name, observed, write) => {
    expect(classifyAs(observed, WRITE)).toEqual(write);
  });
  it.each(TABLE)('%s (trusted read-only)', (_name, observed, write, read) => {
    expect(classifyAs(observed, TRUSTED_READ)).toEqual(read ?? write);
  });
});
