import { beforeAll, describe, expect, it } from 'vitest';
import { findApprovalIdForGrant, getApproval, revokeApproval } from '.';
import { redeemGrant } from './grants';
import { verifyAuditChain } from '../audit/audit';
import { db } from '../db/db';
import type { Result } from '@/lib/result';
import {
  TRUSTED,
  UNTRUSTED,
  digest,
  ARGUMENTS_DIGEST,
  makeKey,
  requester,
  redeemer,
  admin,
  reviewer,
  setUpApprovalActors,
  value,
  makeApproval,
  approve,
  approvedGrant,
  redeemBody,
  racingOn,
  failures,
  sql,
} from '@/testing/approvals-fixtures';

beforeAll(setUpApprovalActors);

describe('redeemGrant', () => {
  it('redeems once with the matching server, tool and digest, and moves the request to redeemed', async () => {
    const { approvalId, grantId } = await approvedGrant();
    const r = value(await redeemGrant(redeemer, grantId, redeemBody()));
    expect(r).toMatchObject({ grantId, approvalId, server: TRUSTED, tool: 'get_order', argsDigest: ARGUMENTS_DIGEST });
    expect(value(await getApproval(redeemer, approvalId))).toMatchObject({
      status: 'redeemed',
      grant: { state: 'redeemed' },
    });
    const again = await redeemGrant(redeemer, grantId, redeemBody());
    expect(again).toMatchObject({ ok: false, failure: 'conflict' });
    expect(await findApprovalIdForGrant(reviewer, grantId)).toBe(approvalId);
    expect(await findApprovalIdForGrant(redeemer, grantId)).toBe(approvalId);
    expect(await findApprovalIdForGrant(reviewer, 'grt_not_a_uuid')).toBeNull();
    expect(await findApprovalIdForGrant(await makeKey(['outcomes:write']), grantId)).toBeNull(); // may not read approvals
  });

  it('a redemption the database refuses through an invariant (check_violation) is explained as a refusal, not an error', async () => {
    // As when the clock passes the expiry between the statement's WHERE and its trigger: here a
    // trigger refuses this one grant, so the refusal the statement raises is deterministic.
    const { grantId } = await approvedGrant();
    const fn = `refuse_${grantId.replace(/-/g, '')}`;
    await sql(`CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
      RAISE EXCEPTION 'refused for the test' USING ERRCODE = 'check_violation'; END $$`);
    await sql(`CREATE TRIGGER ${fn} BEFORE UPDATE ON grants FOR EACH ROW
      WHEN (NEW.id = '${grantId}'::uuid) EXECUTE FUNCTION ${fn}()`);
    try {
      const r = await redeemGrant(redeemer, grantId, redeemBody());
      expect(r).toMatchObject({ ok: false, failure: 'conflict' });
    } finally {
      await sql(`DROP TRIGGER ${fn} ON grants`);
      await sql(`DROP FUNCTION ${fn}()`);
    }
    expect(value(await redeemGrant(redeemer, grantId, redeemBody())).grantId).toBe(grantId);
  });

  it('names the field that differs from what was approved (422) and redeems nothing', async () => {
    const { grantId } = await approvedGrant();
    for (const [field, over] of [
      ['argsDigest', { argsDigest: digest(2) }],
      ['tool', { tool: 'delete_order' }],
      ['server', { server: UNTRUSTED }],
    ] as const) {
      const r = await redeemGrant(redeemer, grantId, redeemBody(over));
      expect(r).toMatchObject({ ok: false, failure: 'invalid_input', errors: [{ path: field }] });
    }
    expect(value(await redeemGrant(redeemer, grantId, redeemBody())).grantId).toBe(grantId);
  });

  it('text PostgreSQL cannot hold (a NUL, a lone surrogate) in the server or tool: named as differing, nothing redeemed', async () => {
    const { approvalId, grantId } = await approvedGrant();
    for (const [field, over] of [
      ['server', { server: `${TRUSTED}\u0000` }],
      ['tool', { tool: 'get_\u0000order' }],
      ['tool', { tool: 'get_\udc00order' }],
    ] as const) {
      const r = await redeemGrant(redeemer, grantId, redeemBody(over));
      expect(r).toMatchObject({ ok: false, failure: 'invalid_input', errors: [{ path: field }] });
    }
    expect(value(await getApproval(admin, approvalId)).status).toBe('approved');
    expect(value(await redeemGrant(redeemer, grantId, redeemBody())).grantId).toBe(grantId);
  });

  it("needs the scope and a grant that exists (in the key's organization)", async () => {
    const { grantId } = await approvedGrant();
    expect(await redeemGrant(requester, grantId, redeemBody())).toMatchObject({ ok: false, failure: 'forbidden' });
    expect(await redeemGrant(redeemer, '00000000-0000-4000-8000-000000000000', redeemBody())).toMatchObject({
      ok: false,
      failure: 'not_found',
    });
    expect(await redeemGrant(redeemer, 'grt_123', redeemBody())).toMatchObject({ ok: false, failure: 'not_found' });
    const otherOrg = await makeKey(['grants:redeem'], 'globex');
    expect(await redeemGrant(otherOrg, grantId, redeemBody())).toMatchObject({ ok: false, failure: 'not_found' });
    // Its own organization's grant: redeemed, and audited with the binding, the key and the approval as target.
    const ownOrg = await makeKey(['grants:redeem'], 'acme');
    const redeemed = value(await redeemGrant(ownOrg, grantId, redeemBody()));
    const audit = await db.auditEntry.findFirstOrThrow({
      where: { action: 'grant.redeem', targetId: redeemed.approvalId },
    });
    expect(audit).toMatchObject({
      actor: `api_key:${(ownOrg as { keyId: string }).keyId}`,
      targetType: 'approval',
      data: {
        grantId,
        server: TRUSTED,
        tool: 'get_order',
        argsDigest: ARGUMENTS_DIGEST,
        apiKey: (ownOrg as { name: string }).name,
      },
    });
    // Both by the database clock (the column rounds to the millisecond, the audit entry truncates).
    expect(audit.at.getTime()).toBeGreaterThanOrEqual(redeemed.redeemedAt.getTime() - 1);
  });

  it('20 concurrent redemptions: exactly one succeeds, the rest conflict', async () => {
    const { grantId } = await approvedGrant();
    // Redemption sends two statements at a time (lib/server/approvals/grants.ts): both queue behind the
    // lock, and the other 18 wait in this process, then go together in the next statement.
    const results = await racingOn('grants', grantId, 2, () =>
      Promise.all(Array.from({ length: 20 }, () => redeemGrant(redeemer, grantId, redeemBody()))),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(failures(results)).toEqual(Array(19).fill('conflict'));
  });

  it('revocation racing redemption: never both, always one', async () => {
    for (let round = 0; round < 12; round++) {
      const { approvalId, grantId } = await approvedGrant();
      const race = () =>
        Promise.all([
          revokeApproval(admin, { id: approvalId, reason: 'race' }),
          redeemGrant(redeemer, grantId, redeemBody()),
        ] as const);
      // Half the rounds queue both behind a lock first; half just start them together.
      const [revoked, redeemed] = round % 2 ? await racingOn('grants', grantId, 2, race) : await race();
      expect([revoked.ok, redeemed.ok].filter(Boolean)).toHaveLength(1);
      if (revoked.ok) expect(redeemed).toMatchObject({ ok: false, failure: 'gone' });
      else expect(revoked).toMatchObject({ ok: false, failure: 'conflict' });
      const grant = await db.grant.findUniqueOrThrow({ where: { id: grantId } });
      expect([grant.redeemedAt, grant.revokedAt].filter(Boolean)).toHaveLength(1);
      expect(value(await getApproval(admin, approvalId)).status).toBe(revoked.ok ? 'revoked' : 'redeemed');
    }
  });

  it('40 at once, more than go to the database singly: each redeemed or refused on its own merits, one audit entry each', async () => {
    const grants = await Promise.all(Array.from({ length: 35 }, () => approvedGrant()));
    const used = grants.slice(0, 30);
    const calls: { g: { grantId: string }; body: ReturnType<typeof redeemBody>; expect?: string }[] = [
      ...used.map((g) => ({ g, body: redeemBody() })),
      ...used.slice(0, 4).map((g) => ({ g, body: redeemBody() })), // the same grant again
      ...grants.slice(30, 34).map((g) => ({ g, body: redeemBody({ argsDigest: digest(9) }), expect: 'invalid_input' })),
      { g: { grantId: '00000000-0000-4000-8000-000000000000' }, body: redeemBody(), expect: 'not_found' },
      { g: grants[34], body: redeemBody({ tool: 'get_\ud800order' }), expect: 'invalid_input' }, // text PostgreSQL cannot hold
    ];
    const results = await Promise.all(calls.map((c) => redeemGrant(redeemer, c.g.grantId, c.body)));
    const outcome = (r: Result<unknown>) => (r.ok ? 'ok' : r.failure);
    // A grant and its duplicate: one succeeded, the other conflicts.
    for (let i = 0; i < 4; i++)
      expect([outcome(results[i]), outcome(results[30 + i])].sort()).toEqual(['conflict', 'ok']);
    expect(results.slice(4, 30).map(outcome)).toEqual(Array(26).fill('ok'));
    expect(results.slice(34).map(outcome)).toEqual(calls.slice(34).map((c) => c.expect));
    const entries = await db.auditEntry.findMany({
      where: { action: 'grant.redeem', targetId: { in: grants.map((g) => g.approvalId) } },
    });
    expect(entries.map((e) => e.targetId).sort()).toEqual(used.map((g) => g.approvalId).sort());
    for (const g of grants)
      expect(value(await getApproval(admin, g.approvalId)).status).toBe(used.includes(g) ? 'redeemed' : 'approved');
    expect(await verifyAuditChain()).toMatchObject({ ok: true });
  });

  it('one redemption the database refuses does not take down the others sent with it', async () => {
    const grants = await Promise.all(Array.from({ length: 20 }, () => approvedGrant()));
    // Broken behind the app's back: the request revoked, its grant left live (an invariant redemption checks).
    const broken = grants[13];
    await sql(`UPDATE approval_requests SET status = 'revoked', revoked_at = now(), revoked_by = 'sql' WHERE id = $1`, [
      broken.approvalId,
    ]);
    const results = await Promise.allSettled(grants.map((g) => redeemGrant(redeemer, g.grantId, redeemBody())));
    expect(results[13]).toMatchObject({
      status: 'rejected',
      reason: expect.objectContaining({ message: expect.stringMatching(/invariant/) }),
    });
    expect(results.filter((r, i) => i !== 13 && r.status === 'fulfilled' && r.value.ok)).toHaveLength(19);
    expect((await db.grant.findUniqueOrThrow({ where: { id: broken.grantId } })).redeemedAt).toBeNull();
    expect(await db.auditEntry.count({ where: { action: 'grant.redeem', targetId: broken.approvalId } })).toBe(0);
  });

  it('the database refuses to redeem twice, to redeem a revoked grant, or to delete one', async () => {
    const { grantId } = await approvedGrant();
    value(await redeemGrant(redeemer, grantId, redeemBody()));
    await expect(sql('UPDATE grants SET redeemed_at = now() WHERE id = $1', [grantId])).rejects.toThrow(
      /already redeemed/,
    );
    await expect(sql('DELETE FROM grants WHERE id = $1', [grantId])).rejects.toThrow(/never deleted/);
    const other = await approvedGrant();
    await expect(
      sql('UPDATE grants SET redeemed_at = now(), revoked_at = now() WHERE id = $1', [other.grantId]),
    ).rejects.toThrow(/grants_redeemed_or_revoked_check/);
    await expect(sql('UPDATE grants SET args_digest = $2 WHERE id = $1', [other.grantId, digest(7)])).rejects.toThrow(
      /never change/,
    );
  });
});

describe('revokeApproval', () => {
  it('is for admins; revokes a pending request at once, then conflicts', async () => {
    const created = await makeApproval();
    expect(await revokeApproval(reviewer, { id: created.id, reason: 'no' })).toMatchObject({
      ok: false,
      failure: 'forbidden',
    });
    const revoked = value(
      await revokeApproval(admin, { id: created.id, reason: 'Customer withdrew; call +1 415 555 0134' }),
    );
    expect(revoked).toMatchObject({
      status: 'revoked',
      revoked: { by: admin.email, reason: 'Customer withdrew; call [masked:phone]' },
    });
    expect(await approve(reviewer, created.id, revoked.version)).toMatchObject({ ok: false, failure: 'conflict' });
    const again = await revokeApproval(admin, { id: created.id, reason: 'again' });
    expect(again).toMatchObject({ ok: false, failure: 'conflict' });
    expect(!again.ok && again.detail).toMatch(/Revoked by .* at /);
  });

  it('revokes an approved grant: redemption is then gone (410) naming who revoked it', async () => {
    const { approvalId, grantId } = await approvedGrant();
    value(await revokeApproval(admin, { id: approvalId, reason: 'wrong customer' }));
    const r = await redeemGrant(redeemer, grantId, redeemBody());
    expect(r).toMatchObject({ ok: false, failure: 'gone' });
    expect(!r.ok && r.detail).toContain(admin.email);
  });

  it('conflicts on a redeemed request', async () => {
    const { approvalId, grantId } = await approvedGrant();
    value(await redeemGrant(redeemer, grantId, redeemBody()));
    const r = await revokeApproval(admin, { id: approvalId, reason: 'too late' });
    expect(r).toMatchObject({ ok: false, failure: 'conflict' });
    expect(!r.ok && r.detail).toMatch(/redeemed at/);
  });
});
