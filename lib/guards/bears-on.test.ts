// Which unposted records go with a guard's question: a table written from the branches of the
// console's history statement (docs/design.md "Guards at the point of execution").
import { describe, expect, it } from 'vitest';
import { bearsOn, type GuardSubject } from './bears-on';
import type { Outcome } from '../outcomes/schemas';

const D = (c: string) => `sha256:${c.repeat(64)}`;
const call: GuardSubject = {
  organization: 'acme',
  requestRef: 'req_1',
  principal: 'user_1',
  server: 'billing',
  tool: { name: 'refund_payment' },
  argsDigest: D('a'),
  idempotencyKey: 'op-1',
};
const base: Outcome = {
  eventId: 'e1',
  occurredAt: '2026-12-07T10:00:00Z',
  requestRef: 'req_other',
  organization: 'acme',
  principal: 'user_1',
  server: 'billing',
  tool: { name: 'refund_payment' },
  argsDigest: D('b'),
  observed: { sent: true, httpStatus: 200 },
};

describe('bearsOn', () => {
  it.each<[string, Partial<Outcome>, Partial<GuardSubject>, boolean]>([
    ['the same call (principal, server, tool, digest) in another request', { argsDigest: D('a') }, {}, true],
    ['the same idempotency key with another digest', { idempotencyKey: 'op-1' }, {}, true],
    ['another digest, another key, another request', { idempotencyKey: 'op-2' }, {}, false],
    ['another digest and no key', {}, {}, false],
    ['no key on either side is no match', {}, { idempotencyKey: null }, false],
    ['the same request reference, another tool', { requestRef: 'req_1', tool: { name: 'get_order' } }, {}, true],
    [
      'the same request reference, another server (its permission refusals count)',
      { requestRef: 'req_1', server: 'crm' },
      {},
      true,
    ],
    ['the same request reference, another principal', { requestRef: 'req_1', principal: 'user_2' }, {}, true],
    ['the same digest, another principal', { argsDigest: D('a'), principal: 'user_2' }, {}, false],
    ['the same digest, another server', { argsDigest: D('a'), server: 'crm' }, {}, false],
    ['the same digest, another tool', { argsDigest: D('a'), tool: { name: 'issue_credit' } }, {}, false],
    ['the same key, another tool', { idempotencyKey: 'op-1', tool: { name: 'issue_credit' } }, {}, false],
    ['the same call, another organization', { argsDigest: D('a'), organization: 'globex' }, {}, false],
    ['the same request reference, another organization', { requestRef: 'req_1', organization: 'globex' }, {}, false],
  ])('%s: %s', (_what, record, over, expected) => {
    expect(bearsOn({ ...base, ...record }, { ...call, ...over })).toBe(expected);
  });
});
