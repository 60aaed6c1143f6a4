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
