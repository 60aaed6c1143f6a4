import { describe, expect, it } from 'vitest';
import { classifyOutcome } from './classify';
import type { Observed } from './schemas';
import { classifyAs, sent, toolError, WRITE, type Expected } from '@/testing/classify-fixtures';

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
