// What the classifier says: the one-sentence `whatHappened` and the `nextStep`.
import { describe, expect, it } from 'vitest';
import { CLASSIFIER_VERSION, classifyOutcome, classifyRecord } from './classify';
import type { Observed } from './schemas';

const sent = (more: Partial<Observed> = {}): Observed => ({ sent: true, ...more });
const TRUSTED_READ = { annotations: { readOnlyHint: true }, serverTrusted: true };

describe('classifyOutcome: sentences', () => {
  it('names the tool and says a write may have taken effect', () => {
    const c = classifyOutcome({
      observed: sent({ clientError: 'timeout' }),
      serverTrusted: false,
      toolName: 'refund_payment',
    });
    expect(c.whatHappened).toBe(
      'The call to refund_payment was sent but no trustworthy answer came back (it timed out): it may have taken effect.',
    );
    expect(c.nextStep).toMatch(/same idempotency key/);
  });

  it.each<[string, Observed, RegExp]>([
    ['never sent', { sent: false, clientBlock: 'approval_required' }, /was never sent .*nothing was done/],
    ['rejected', sent({ httpStatus: 403 }), /was refused .*nothing was done/],
    ['completed', sent({ result: { isError: false } }), /completed successfully/],
    ['schema violation', sent({ result: { isError: false, outputValidation: 'invalid' } }), /no evidence/],
  ])('%s', (_name, observed, sentence) => {
    const c = classifyOutcome({ observed, serverTrusted: true, toolName: 'refund_payment' });
    expect(c.whatHappened).toMatch(/^The call to refund_payment /);
    expect(c.whatHappened).toMatch(sentence);
  });

  it('says a trusted read changed nothing', () => {
    const c = classifyOutcome({ observed: sent({ httpStatus: 502 }), ...TRUSTED_READ });
    expect(c.whatHappened).toMatch(/^The call failed .*read-only, so nothing was changed\.$/);
    expect(c.nextStep).toBe('Retry with bounded backoff.');
  });

  it('classifyRecord takes the name and annotations from the record', () => {
    const c = classifyRecord(
      { observed: sent({ httpStatus: 502 }), tool: { name: 'get_order', annotations: { readOnlyHint: true } } },
      true,
    );
    expect(c).toMatchObject({ readOnly: true, delivery: 'rejected' });
    expect(c.whatHappened).toMatch(/get_order/);
    expect(CLASSIFIER_VERSION).toBeGreaterThanOrEqual(1);
  });
});

describe('classifyOutcome: version 2 sentences (hand-written)', () => {
  const write = (observed: Observed) =>
    classifyOutcome({
      observed,
      annotations: { readOnlyHint: false },
      serverTrusted: true,
      toolName: 'refund_payment',
    });

  it('a running task: poll it, never call again', () => {
    const c = write(sent({ resultType: 'task', task: { id: 't1', status: 'working' } }));
    expect(c.whatHappened).toBe(
      'The call to refund_payment runs as an MCP task that has not finished (its task is still working): it may already have taken effect.',
    );
    expect(c.nextStep).toBe('Poll the task (tasks/get) until it ends; never call the tool again.');
  });

  it('a running task on a trusted read: nothing is being changed, still poll', () => {
    const c = classifyOutcome({ observed: sent({ task: { id: 't1', status: 'working' } }), ...TRUSTED_READ });
    expect(c.whatHappened).toBe(
      'The call runs as an MCP task that has not finished (its task is still working); it is read-only, so nothing is being changed.',
    );
    expect(c.nextStep).toBe('Poll the task (tasks/get) until it ends; never call the tool again.');
  });

  it('a task waiting for input: answer, then poll', () => {
    const c = write(sent({ task: { id: 't1', status: 'input_required' } }));
    expect(c.whatHappened).toMatch(/its task is waiting for input\): it may already have taken effect\.$/);
    expect(c.nextStep).toBe(
      "Answer the task's input request, then poll the task (tasks/get); never call the tool again.",
    );
  });

  it('an expired task on a write: check state, never "poll"', () => {
    const c = write(sent({ task: { id: 't1', status: 'working', expired: true } }));
    expect(c.whatHappened).toBe(
      'The call to refund_payment was sent but no trustworthy answer came back (its task expired before a final status was seen): it may have taken effect.',
    );
    expect(c.nextStep).toBe(
      'Check the current state first; replay only with the same idempotency key and the same input.',
    );
  });

  it('a cancelled task on a trusted read: back off', () => {
    const c = classifyOutcome({ observed: sent({ task: { id: 't1', status: 'cancelled' } }), ...TRUSTED_READ });
    expect(c.whatHappened).toBe(
      'The call failed (its task was cancelled before it finished); it is read-only, so nothing was changed.',
    );
    expect(c.nextStep).toBe('Retry with bounded backoff.');
  });

  it('the folded -32602 on a write: says why it may have run', () => {
    const c = write(sent({ jsonRpcErrorCode: -32602, result: { isError: true } }));
    expect(c.whatHappened).toBe(
      "The call to refund_payment ended in error -32602, which SDKs use both for invalid arguments (nothing ran) and for a result that failed the server's own output schema (it ran): it may have taken effect.",
    );
    expect(c.nextStep).toBe(
      'Check the current state first: the call may have run. Replay only with the same idempotency key and the same input.',
    );
  });

  it('a plain -32602 keeps "correct the input"', () => {
    const c = write(sent({ jsonRpcErrorCode: -32602 }));
    expect(c.whatHappened).toBe(
      'The call to refund_payment was refused (its arguments were invalid): nothing was done.',
    );
    expect(c.nextStep).toBe('Correct the input, then call again.');
  });

  it('resultType input_required: answer, then send the same call again', () => {
    const c = write(sent({ resultType: 'input_required' }));
    expect(c.whatHappened).toBe(
      'The call to refund_payment was refused (it needs input from a person first): nothing was done.',
    );
    expect(c.nextStep).toBe('Answer the input requests (a person may need to), then send the same call again.');
  });

  it('a completed task reads as its result', () => {
    const c = write(
      sent({ task: { id: 't1', status: 'completed' }, result: { isError: false, outputValidation: 'valid' } }),
    );
    expect(c.whatHappened).toBe('The call to refund_payment ran and completed successfully.');
    expect(c.nextStep).toBe('Done; never repeat this write.');
  });

  it('the version is 3', () => {
    expect(CLASSIFIER_VERSION).toBe(3);
  });
});
