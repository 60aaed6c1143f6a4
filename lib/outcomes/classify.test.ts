import { describe, expect, it } from 'vitest';
import { classifyOutcome } from './classify';
import { clientBlocks, clientErrors, type Classification, type Observed } from './schemas';

type Expected = Pick<Classification, 'boundary' | 'delivery' | 'category' | 'retry'>;

const sent = (more: Partial<Observed> = {}): Observed => ({ sent: true, ...more });
const toolError = (errorCategory: string | null = null): Partial<Observed> => ({
  httpStatus: 200,
  result: { isError: true, errorCategory },
});
const e = (
  boundary: Expected['boundary'],
  delivery: Expected['delivery'],
  category: Expected['category'],
  retry: Expected['retry'],
): Expected => ({ boundary, delivery, category, retry });

const WRITE = { annotations: { readOnlyHint: false }, serverTrusted: true };
const TRUSTED_READ = { annotations: { readOnlyHint: true }, serverTrusted: true };

function classifyAs(observed: Observed, as: typeof WRITE): Expected {
  const { boundary, delivery, category, retry } = classifyOutcome({ observed, ...as });
  return { boundary, delivery, category, retry };
}

// One row per row of docs/design.md's table: [name, observed, write, trusted read-only (if it differs)].
const TABLE: [string, Observed, Expected, Expected?][] = [
  ...clientBlocks.map((block): [string, Observed, Expected] => [
    `blocked locally: ${block}`,
    { sent: false, clientBlock: block },
    e('client', 'never_sent', block, 'after_approval'),
  ]),
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
    'task created, working',
    sent({ resultType: 'task', task: { id: 't1', status: 'working' } }),
    e('tool', 'unknown', 'task_running', 'after_state_check'),
  ],
  [
    'task input_required',
    sent({ task: { id: 't1', status: 'input_required' } }),
    e('tool', 'unknown', 'task_input_required', 'after_state_check'),
  ],
  [
    'task working, polled through an HTTP 503: the task still runs',
    sent({ httpStatus: 503, task: { id: 't1', status: 'working' } }),
    e('tool', 'unknown', 'task_running', 'after_state_check'),
  ],
  [
    'task completed with a valid result',
    sent({ task: { id: 't1', status: 'completed' }, result: { isError: false, outputValidation: 'valid' } }),
    e('none', 'completed', 'ok', 'no'),
  ],
  [
    'task completed with a result breaking the schema',
    sent({ task: { id: 't1', status: 'completed' }, result: { isError: false, outputValidation: 'invalid' } }),
    e('tool', 'completed', 'output_schema_violation', 'no'),
  ],
  [
    'task completed with an isError result declaring conflict',
    sent({ task: { id: 't1', status: 'completed' }, result: { isError: true, errorCategory: 'REVISION_CONFLICT' } }),
    e('tool', 'rejected', 'conflict', 'after_state_check'),
  ],
  [
    'task completed, result not read: the status alone decides nothing',
    sent({ task: { id: 't1', status: 'completed' } }),
    e('client', 'unknown', 'no_response', 'after_state_check'),
    e('client', 'unknown', 'no_response', 'backoff'),
  ],
  [
    'near miss: task completed, reported with an HTTP 500: no refusal, no trusted answer',
    sent({ httpStatus: 500, task: { id: 't1', status: 'completed' }, result: { isError: false } }),
    e('client', 'unknown', 'no_response', 'after_state_check'),
    e('client', 'unknown', 'no_response', 'backoff'),
  ],
  [
    'task completed, result read over HTTP 200',
    sent({ httpStatus: 200, task: { id: 't1', status: 'completed' }, result: { isError: false } }),
    e('none', 'completed', 'ok', 'no'),
  ],
  [
    'task failed with a JSON-RPC -32603 (2026-07-28)',
    sent({ task: { id: 't1', status: 'failed' }, jsonRpcErrorCode: -32603 }),
    e('protocol', 'unknown', 'internal', 'after_state_check'),
    e('protocol', 'rejected', 'internal', 'backoff'),
  ],
  [
    'task failed with a JSON-RPC -32602 alone (2026-07-28)',
    sent({ task: { id: 't1', status: 'failed' }, jsonRpcErrorCode: -32602 }),
    e('protocol', 'rejected', 'invalid_arguments', 'after_correction'),
  ],
  [
    'task failed with an isError result declaring validation (2025-11-25)',
    sent({ task: { id: 't1', status: 'failed' }, result: { isError: true, errorCategory: 'VALIDATION_ERROR' } }),
    e('tool', 'rejected', 'validation', 'after_correction'),
  ],
  [
    'task failed with an isError result, no category (2025-11-25)',
    sent({ task: { id: 't1', status: 'failed' }, result: { isError: true } }),
    e('tool', 'unknown', 'tool_error', 'after_state_check'),
    e('tool', 'rejected', 'tool_error', 'backoff'),
  ],
  [
    'task failed with the folded -32602',
    sent({ task: { id: 't1', status: 'failed' }, jsonRpcErrorCode: -32602, result: { isError: true } }),
    e('tool', 'unknown', 'invalid_arguments', 'after_state_check'),
    e('protocol', 'rejected', 'invalid_arguments', 'after_correction'),
  ],
  [
    'near miss: task failed, nothing else reported: never inferred from the status',
    sent({ task: { id: 't1', status: 'failed' } }),
    e('client', 'unknown', 'no_response', 'after_state_check'),
    e('client', 'unknown', 'no_response', 'backoff'),
  ],
  [
    'task cancelled',
    sent({ task: { id: 't1', status: 'cancelled' } }),
    e('tool', 'unknown', 'task_cancelled', 'after_state_check'),
    e('tool', 'rejected', 'task_cancelled', 'backoff'),
  ],
  [
    'task expired while working (TTL passed, tasks/get not found)',
    sent({ task: { id: 't1', status: 'working', expired: true } }),
    e('tool', 'unknown', 'task_expired', 'after_state_check'),
    e('tool', 'rejected', 'task_expired', 'backoff'),
  ],
  [
    'task expired while waiting for input',
    sent({ task: { id: 't1', status: 'input_required', expired: true } }),
    e('tool', 'unknown', 'task_expired', 'after_state_check'),
    e('tool', 'rejected', 'task_expired', 'backoff'),
  ],
  [
    'near miss: expired false is still running',
    sent({ task: { id: 't1', status: 'working', expired: false } }),
    e('tool', 'unknown', 'task_running', 'after_state_check'),
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

describe('classifyOutcome: read-only needs a trusted server', () => {
  const uncertain = sent({ httpStatus: 502 });
  it.each([
    ['untrusted server, readOnlyHint true', { readOnlyHint: true }, false, false],
    ['trusted server, readOnlyHint true', { readOnlyHint: true }, true, true],
    ['trusted server, readOnlyHint false', { readOnlyHint: false }, true, false],
    ['trusted server, no hint (MCP default)', {}, true, false],
    ['trusted server, no annotations', null, true, false],
  ])('%s', (_name, annotations, serverTrusted, readOnly) => {
    const c = classifyOutcome({ observed: uncertain, annotations, serverTrusted });
    expect(c.readOnly).toBe(readOnly);
    expect(c.delivery).toBe(readOnly ? 'rejected' : 'unknown');
    expect(c.retry).toBe(readOnly ? 'backoff' : 'after_state_check');
  });
});

describe('classifyOutcome: precedence', () => {
  it.each<[string, Observed, Partial<Expected>]>([
    [
      'client error beats a missing result',
      sent({ httpStatus: 200, clientError: 'timeout' }),
      { category: 'timeout', delivery: 'unknown' },
    ],
    [
      'HTTP >= 400 beats a JSON-RPC code',
      sent({ httpStatus: 401, jsonRpcErrorCode: -32602 }),
      { category: 'unauthenticated' },
    ],
    [
      'HTTP 5xx beats an apparent result',
      sent({ httpStatus: 500, result: { isError: false, outputValidation: 'valid' } }),
      { category: 'upstream_failure', delivery: 'unknown' },
    ],
    [
      'a JSON-RPC code beats the result an SDK folded it into (a write: unknown, version 2)',
      sent({ jsonRpcErrorCode: -32602, result: { isError: true, errorCategory: 'VALIDATION' } }),
      { boundary: 'tool', delivery: 'unknown', category: 'invalid_arguments' },
    ],
    [
      'a task beats the HTTP status its polling saw',
      sent({ httpStatus: 401, task: { id: 't1', status: 'input_required' } }),
      { category: 'task_input_required', delivery: 'unknown' },
    ],
    [
      'a cancelled task beats a later expiry',
      sent({ task: { id: 't1', status: 'cancelled', expired: true } }),
      { category: 'task_cancelled' },
    ],
    [
      'a running task beats a client error while polling',
      sent({ task: { id: 't1', status: 'working' }, clientError: 'timeout' }),
      { category: 'task_running' },
    ],
    [
      'a completed task with a client error and no result: the client error',
      sent({ task: { id: 't1', status: 'completed' }, clientError: 'connection_lost' }),
      { category: 'connection_lost', delivery: 'unknown' },
    ],
    [
      'resultType input_required loses to a JSON-RPC code',
      sent({ resultType: 'input_required', jsonRpcErrorCode: -32600 }),
      { category: 'protocol_error' },
    ],
    [
      'resultType input_required loses to an HTTP refusal',
      sent({ httpStatus: 429, resultType: 'input_required' }),
      { category: 'rate_limited' },
    ],
    [
      'a received result beats a later client error',
      sent({ result: { isError: false, outputValidation: 'valid' }, clientError: 'cancelled' }),
      { delivery: 'completed', category: 'ok' },
    ],
    [
      'a declared tool rejection beats a later client error',
      sent({ result: { isError: true, errorCategory: 'VALIDATION' }, clientError: 'timeout' }),
      { category: 'validation', delivery: 'rejected' },
    ],
    [
      'evidence of an answer outweighs sent: false',
      { sent: false, httpStatus: 401 },
      { category: 'unauthenticated', delivery: 'rejected' },
    ],
    [
      'a local block beats a client error when nothing was sent',
      { sent: false, clientBlock: 'no_credentials', clientError: 'timeout' },
      { category: 'no_credentials', retry: 'after_approval' },
    ],
    [
      'not sent after a local timeout: safe to send again',
      { sent: false, clientError: 'timeout' },
      { delivery: 'never_sent', category: 'timeout', retry: 'backoff' },
    ],
    [
      'not sent after a cancel: not retried',
      { sent: false, clientError: 'cancelled' },
      { delivery: 'never_sent', category: 'cancelled', retry: 'no' },
    ],
    [
      'not sent, no reason given',
      { sent: false },
      { boundary: 'client', delivery: 'never_sent', category: 'not_sent', retry: 'no' },
    ],
    [
      'WWW-Authenticate insufficient_scope on a 401',
      sent({ httpStatus: 401, authError: 'insufficient_scope' }),
      { category: 'forbidden' },
    ],
    [
      'WWW-Authenticate invalid_token on a 403',
      sent({ httpStatus: 403, authError: 'invalid_token' }),
      { category: 'unauthenticated' },
    ],
    ['a redirect is no admission failure', sent({ httpStatus: 302 }), { category: 'no_response' }],
    [
      'other 4xx: the integration is wrong',
      sent({ httpStatus: 400 }),
      { boundary: 'admission', delivery: 'rejected', category: 'protocol_error', retry: 'no' },
    ],
    ['other 5xx: treated like 500', sent({ httpStatus: 501 }), { category: 'upstream_failure', delivery: 'unknown' }],
    [
      'unknown JSON-RPC code: may have acted',
      sent({ jsonRpcErrorCode: -32099 }),
      { boundary: 'protocol', category: 'internal', delivery: 'unknown' },
    ],
    [
      'a category on a non-error result is ignored',
      sent({ result: { isError: false, errorCategory: 'FORBIDDEN', outputValidation: 'valid' } }),
      { category: 'ok' },
    ],
    [
      'a tool declaring unknown_tool without a code',
      sent(toolError('tool_not_found')),
      { boundary: 'protocol', category: 'unknown_tool' },
    ],
  ])('%s', (_name, observed, expected) => {
    expect(classifyAs(observed, WRITE)).toMatchObject(expected);
  });
});
