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

// One row per row of DESIGN.md's table: [name, observed, write, trusted read-only (if it differs)].
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
    '-32602 folded by an SDK into an isError result',
    sent({ httpStatus: 200, jsonRpcErrorCode: -32602, result: { isError: true } }),
    e('protocol', 'rejected', 'invalid_arguments', 'after_correction'),
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

describe('classifyOutcome: DESIGN.md table', () => {
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
      'a JSON-RPC code beats the result an SDK folded it into',
      sent({ jsonRpcErrorCode: -32602, result: { isError: true, errorCategory: 'VALIDATION' } }),
      { boundary: 'protocol', category: 'invalid_arguments' },
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
