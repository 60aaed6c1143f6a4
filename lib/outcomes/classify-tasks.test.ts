import { describe, expect, it } from 'vitest';
import type { Observed } from './schemas';
import { classifyAs, e, sent, TRUSTED_READ, WRITE, type Expected } from '@/testing/classify-fixtures';

// The rows of docs/design.md's table about MCP tasks: [name, observed, write, trusted read-only (if it differs)].
const TASKS: [string, Observed, Expected, Expected?][] = [
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
];

describe('classifyOutcome: docs/design.md table, MCP tasks', () => {
  it.each(TASKS)('%s (write)', (_name, observed, write) => {
    expect(classifyAs(observed, WRITE)).toEqual(write);
  });
  it.each(TASKS)('%s (trusted read-only)', (_name, observed, write, read) => {
    expect(classifyAs(observed, TRUSTED_READ)).toEqual(read ?? write);
  });
});
