import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { getApproval, requestApproval } from '.';
import { db } from '../db/db';
import { open } from '../secrets';
import { config } from '@/lib/config';
import { uniq } from '@/testing/factories';
import { restoreEnv, setEnv } from '@/testing/env';
import {
  ARGUMENTS,
  ARGUMENTS_DIGEST,
  OTHER_ARGUMENTS,
  OTHER_ARGUMENTS_DIGEST,
  digestOfCanonical,
} from '@/testing/approvals-arguments';
import { bodyOf, requester, reviewer, setUpApprovalActors, value } from '@/testing/approvals-fixtures';

// POST /api/v1/approvals with arguments (docs/api.md "Approvals and grants"): checked against the
// digest, masked, sealed to the row; every refusal names `arguments` and stores nothing.
beforeAll(setUpApprovalActors);
afterEach(restoreEnv);

// Sent in this order; a number, null, booleans, nesting; secrets by key deep inside arrays, a
// password key spelt with Cyrillic р and а, an e-mail address in free text.
const SENT = {
  order_id: '4411',
  amount: 12500.5,
  currency: 'EUR',
  note: 'customer jane.doe@example.com asked twice',
  refund: true,
  coupon: null,
  lines: [
    { sku: 'A-1', qty: 2, api_key: 'sk_live_51HxQ2vT8kLmN0pQrStUvWxYz' },
    { sku: 'B-2', qty: 1, auth: { 'Private-Key': { pem: 'MIIEvQIBADANBg' } } },
  ],
  headers: { Authorization: 'Bearer abc.def.ghi', 'X-Trace': 't-1' },
  раssword: 'hunter2',
};
// The same, canonical (RFC 8785: keys sorted by UTF-16 code unit, at every level), written by hand.
const SENT_CANONICAL =
  '{"amount":12500.5,"coupon":null,"currency":"EUR","headers":{"Authorization":"Bearer abc.def.ghi","X-Trace":"t-1"},' +
  '"lines":[{"api_key":"sk_live_51HxQ2vT8kLmN0pQrStUvWxYz","qty":2,"sku":"A-1"},' +
  '{"auth":{"Private-Key":{"pem":"MIIEvQIBADANBg"}},"qty":1,"sku":"B-2"}],' +
  '"note":"customer jane.doe@example.com asked twice","order_id":"4411","refund":true,"раssword":"hunter2"}';
// What is stored and shown: the keys in the order sent.
const MASKED = {
  order_id: '4411',
  amount: 12500.5,
  currency: 'EUR',
  note: 'customer [masked:email] asked twice',
  refund: true,
  coupon: null,
  lines: [
    { sku: 'A-1', qty: 2, api_key: '[masked:secret]' },
    { sku: 'B-2', qty: 1, auth: { 'Private-Key': '[masked:secret]' } },
  ],
  headers: { Authorization: '[masked:secret]', 'X-Trace': 't-1' },
  раssword: '[masked:secret]',
};

const stage = (over: Record<string, unknown>, key = uniq('idem')) => requestApproval(requester, key, bodyOf(over));
const sealedOf = async (id: string) =>
  (await db.approvalRequest.findUniqueOrThrow({ where: { id }, select: { argumentsSealed: true } })).argumentsSealed;
const counts = async () => ({ requests: await db.approvalRequest.count(), audit: await db.auditEntry.count() });

// Nested `levels` objects deep, the arguments object itself the first.
function nested(levels: number): Record<string, unknown> {
  let v: Record<string, unknown> = { leaf: 1 };
  for (let i = 1; i < levels; i++) v = { a: v };
  return v;
}

describe('arguments on a request', () => {
  it('are masked before they are stored, sealed to their row, and shown to a reviewer as sent', async () => {
    const created = value(await stage({ arguments: SENT, argsDigest: digestOfCanonical(SENT_CANONICAL) })).approval;
    const sealed = await sealedOf(created.id);
    expect(sealed).toMatch(/^v2\.[0-9a-f]{12}\./);
    for (const clear of ['hunter2', 'jane.doe', 'sk_live_', 'abc.def.ghi', '12500.5', 'A-1', 'order_id'])
      expect(sealed).not.toContain(clear);
    // The box holds the masked arguments, keys in the order sent.
    expect(JSON.parse(open('approval-arguments', sealed!, created.id))).toEqual(MASKED);
    expect(Object.keys(JSON.parse(open('approval-arguments', sealed!, created.id)))).toEqual(Object.keys(SENT));
    const view = value(await getApproval(reviewer, created.id));
    expect(view.arguments).toEqual(MASKED);
    expect(Object.keys(view.arguments!)).toEqual(Object.keys(SENT));
    expect(view).toMatchObject({ argumentsSent: true, argumentsNote: null });
    expect(view.argumentsPreview).toEqual([
      { key: 'order_id', value: '4411', type: 'string' },
      { key: 'amount', value: '12500.5', type: 'number' },
      { key: 'currency', value: 'EUR', type: 'string' },
    ]);
  });

  it('keeps keys that differ only by Unicode lookalikes apart, exactly as sent', async () => {
    // "amount" and "аmount" (Cyrillic а): two keys, both shown, neither folded into the other.
    const sent = { amount: '1.00', аmount: '1000.00' };
    const digest = digestOfCanonical('{"amount":"1.00","аmount":"1000.00"}');
    const created = value(await stage({ arguments: sent, argsDigest: digest })).approval;
    expect(value(await getApproval(reviewer, created.id)).arguments).toEqual({ amount: '1.00', аmount: '1000.00' });
  });

  it('takes the tool description, masked, and shows it beside the arguments', async () => {
    const tool = { name: 'update_note', description: 'Writes a note; support: ops@example.com' };
    const created = value(await stage({ tool })).approval;
    expect(value(await getApproval(reviewer, created.id)).tool).toEqual({
      name: 'update_note',
      annotations: null,
      description: 'Writes a note; support: [masked:email]',
    });
  });
});

describe('refused, naming arguments, with nothing stored', () => {
  const big = (chars: number) => ({ blob: 'x'.repeat(chars) });
  // Built when each case runs: the test runner formats its table, and a deep one would overflow it.
  it.each([
    ['missing', 'arguments_required', 'arguments', () => ({ arguments: undefined })],
    ['null', 'arguments_required', 'arguments', () => ({ arguments: null })],
    ['an array', 'invalid_input', 'arguments', () => ({ arguments: [1, 2] })],
    ['a string', 'invalid_input', 'arguments', () => ({ arguments: '{"order_id":"4411"}' })],
    ['nested 33 levels deep', 'invalid_input', /^arguments(\.a){32}$/, () => ({ arguments: nested(33) })],
    ['nested 100,000 levels deep', 'invalid_input', /^arguments(\.a){32}$/, () => ({ arguments: nested(100_000) })],
    // {"blob":"…"}: 11 bytes around the string, so 65,526 characters make 65,537 bytes.
    ['over 64 KiB as canonical JSON', 'arguments_too_large', 'arguments', () => ({ arguments: big(65_526) })],
    ['a 1 MB string', 'arguments_too_large', 'arguments', () => ({ arguments: big(1_000_000) })],
    [
      'a digest of the right length over other arguments',
      'arguments_digest_mismatch',
      'arguments',
      () => ({ arguments: ARGUMENTS, argsDigest: OTHER_ARGUMENTS_DIGEST }),
    ],
    [
      'other arguments than the digest covers',
      'arguments_digest_mismatch',
      'arguments',
      () => ({ arguments: OTHER_ARGUMENTS, argsDigest: ARGUMENTS_DIGEST }),
    ],
  ] as const)('%s → %s', async (_, failure, path, over) => {
    const before = await counts();
    const refused = await stage(over());
    expect(refused).toMatchObject({ ok: false, failure, errors: [{ path: expect.stringMatching(path) }] });
    expect(!refused.ok && refused.detail).toMatch(/^arguments|argsDigest/);
    expect(await counts()).toEqual(before);
  });

  it('takes 64 KiB exactly', async () => {
    const canonical = `{"blob":"${'x'.repeat(65_525)}"}`;
    expect(Buffer.byteLength(canonical)).toBe(65_536);
    const created = value(await stage({ arguments: big(65_525), argsDigest: digestOfCanonical(canonical) }));
    expect(created.approval.status).toBe('pending');
  });

  it('takes 32 levels of nesting', async () => {
    const canonical = `${'{"a":'.repeat(31)}{"leaf":1}${'}'.repeat(31)}`;
    expect(value(await stage({ arguments: nested(32), argsDigest: digestOfCanonical(canonical) })).replayed).toBe(
      false,
    );
  });
});

describe('COUNTERSIGN_APPROVALS_REQUIRE_ARGUMENTS=off', () => {
  it('takes a request without arguments, which then says so', async () => {
    setEnv({ COUNTERSIGN_APPROVALS_REQUIRE_ARGUMENTS: 'off' });
    const created = value(await stage({ arguments: undefined })).approval;
    expect(await sealedOf(created.id)).toBeNull();
    expect(value(await getApproval(reviewer, created.id))).toMatchObject({
      argumentsSent: false,
      arguments: null,
      argumentsNote: 'not sent by the agent',
      argumentsPreview: null,
    });
    // Arguments that are sent are still checked.
    expect(await stage({ arguments: OTHER_ARGUMENTS })).toMatchObject({ failure: 'arguments_digest_mismatch' });
  });
});

describe('the same Idempotency-Key', () => {
  it('with other arguments, later: idempotency_key_reused; with the same: the original answer', async () => {
    const key = uniq('idem');
    const body = bodyOf();
    const first = value(await requestApproval(requester, key, body));
    expect(value(await requestApproval(requester, key, body))).toEqual({ replayed: true, approval: first.approval });
    const otherBody = { ...body, arguments: OTHER_ARGUMENTS, argsDigest: OTHER_ARGUMENTS_DIGEST };
    const other = await requestApproval(requester, key, otherBody);
    expect(other).toMatchObject({ ok: false, failure: 'idempotency_key_reused' });
  });

  it('sent concurrently with different arguments: one is created, the other is idempotency_key_reused', async () => {
    const key = uniq('idem');
    // Another session holds the key's lock while both arrive, so both find it taken and wait.
    const holder = new pg.Client({ connectionString: config().DATABASE_URL });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock($1::int, hashtext($2))', [
        0x61707072,
        `${(requester as { keyId: string }).keyId}\n${key}`,
      ]);
      const body = bodyOf();
      const both = Promise.all([
        requestApproval(requester, key, body),
        requestApproval(requester, key, { ...body, arguments: OTHER_ARGUMENTS, argsDigest: OTHER_ARGUMENTS_DIGEST }),
      ]);
      await waitForLockWaiters(holder, 2);
      await holder.query('COMMIT');
      const results = await both;
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(results.filter((r) => !r.ok)).toEqual([expect.objectContaining({ failure: 'idempotency_key_reused' })]);
    } finally {
      await holder.end();
    }
    expect(await db.approvalRequest.count({ where: { idempotencyKey: key } })).toBe(1);
  });
});

async function waitForLockWaiters(c: pg.Client, n: number) {
  for (let waited = 0; waited < 10_000; waited += 20) {
    const { rows } = await c.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event = 'advisory'",
    );
    if (rows[0].n >= n) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`fewer than ${n} requests waited for the Idempotency-Key's lock`);
}
