import { beforeAll, describe, expect, it } from 'vitest';
import { decideApproval, getApproval } from '.';
import { makeUser, uniq } from '@/testing/factories';
import { db } from '../db/db';
import type { Viewer } from '@/lib/auth/permissions';
import type { Result } from '@/lib/result';
import {
  digest,
  admin,
  reviewer,
  reviewer2,
  setUpApprovalActors,
  makeReviewers,
  TWO,
  value,
  makeApproval,
  approve,
  racingOn,
  QUEUE,
  failures,
  sql,
} from '@/testing/approvals-fixtures';

beforeAll(setUpApprovalActors);

describe('decideApproval', () => {
  it('refuses self-approval through data access, and the database refuses it too', async () => {
    const self = await makeUser('reviewer', { principalId: uniq('user') });
    const created = await makeApproval({ principal: self.principalId });
    const refused = await approve(self, created.id, 1);
    expect(refused).toMatchObject({ ok: false, failure: 'forbidden' });
    expect(!refused.ok && refused.detail).toMatch(/your own behalf/);
    // An admin is a reviewer too, and bound by the same rule.
    const selfAdmin = await makeUser('admin', { principalId: uniq('user') });
    const mine = await makeApproval({ principal: selfAdmin.principalId });
    expect(await approve(selfAdmin, mine.id, 1)).toMatchObject({ ok: false, failure: 'forbidden' });

    const insert = (reviewerId: string, principal: string) =>
      sql(
        `INSERT INTO approval_decisions (approval_id, reviewer_id, reviewer_email, reviewer_principal, decision, reason) VALUES ($1, $2, $3, $4, 'approve', 'sql')`,
        [created.id, reviewerId, self.email, principal],
      );
    await expect(insert(self.userId, self.principalId)).rejects.toThrow(
      /principal of approval request .* cannot decide/,
    );
    // Claiming another principal does not help: the database reads the user's own.
    await expect(insert(self.userId, 'someone-else')).rejects.toThrow(/cannot decide/);
    expect(await db.approvalDecision.count({ where: { approvalId: created.id } })).toBe(0);
    expect(value(await getApproval(admin, created.id))).toMatchObject({ status: 'pending', version: 1 });
  });

  it('needs a role that may decide, and a request that exists', async () => {
    const support = await makeUser('support');
    const created = await makeApproval();
    expect(await approve(support, created.id, 1)).toMatchObject({ ok: false, failure: 'forbidden' });
    expect(await approve(reviewer, '00000000-0000-4000-8000-000000000000', 1)).toMatchObject({
      ok: false,
      failure: 'not_found',
    });
    expect(await approve(reviewer, 'not-a-uuid', 1)).toMatchObject({ ok: false, failure: 'not_found' });
  });

  it('30 concurrent decisions on a one-approval request: exactly one wins, the rest conflict naming it', async () => {
    const created = await makeApproval();
    const people = await makeReviewers(30);
    const results = await racingOn('approval_requests', created.id, QUEUE, () =>
      Promise.all(
        people.map((p, i) =>
          decideApproval(p, {
            id: created.id,
            decision: i % 3 ? 'approve' : 'deny',
            reason: `reviewer ${i}`,
            version: 1,
          }),
        ),
      ),
    );
    const winners = results.flatMap((r, i) => (r.ok ? [i] : []));
    expect(winners).toHaveLength(1);
    expect(failures(results)).toEqual(Array(29).fill('conflict'));
    const winner = people[winners[0]];
    for (const r of results) if (!r.ok) expect(r.detail).toContain(winner.email);
    const view = value(await getApproval(admin, created.id));
    expect(view.decisions).toHaveLength(1);
    expect(view.decisions[0].reviewer).toBe(winner.email);
    expect(view.status).toBe(view.decisions[0].decision === 'approve' ? 'approved' : 'denied');
    expect(await db.grant.count({ where: { approvalId: created.id } })).toBe(view.status === 'approved' ? 1 : 0);
  });

  it('two reviewers racing on a two-approval request: one conflicts, retries, and the request is approved with one grant', async () => {
    for (let round = 0; round < 5; round++) {
      const created = await makeApproval(TWO);
      const [a, b] = await Promise.all([approve(reviewer, created.id, 1), approve(reviewer2, created.id, 1)]);
      expect([a.ok, b.ok].filter(Boolean)).toHaveLength(1);
      const loser = a.ok ? reviewer2 : reviewer;
      const lost = (a.ok ? b : a) as Extract<Result<unknown>, { ok: false }>;
      expect(lost.failure).toBe('conflict');
      expect(lost.detail).toMatch(/now version 2, you sent 1/);
      expect(lost.detail).toContain((a.ok ? reviewer : reviewer2).email);
      const done = value(await approve(loser, created.id, 2));
      expect(done).toMatchObject({ status: 'approved', version: 3, grant: { state: 'active' } });
      expect(done.decisions.map((d) => d.reviewer).sort()).toEqual([reviewer.email, reviewer2.email].sort());
      expect(await db.grant.count({ where: { approvalId: created.id } })).toBe(1);
    }
  });

  it('two distinct approvals reached concurrently (each retrying on conflict) issue exactly one grant', async () => {
    const created = await makeApproval(TWO);
    const people = await makeReviewers(6);
    const decideWithRetry = async (p: Viewer) => {
      for (;;) {
        const { version, status } = value(await getApproval(admin, created.id));
        if (status !== 'pending') return 'late';
        const r = await approve(p, created.id, version);
        if (r.ok) return 'ok';
        if (r.failure !== 'conflict') throw new Error(r.failure);
      }
    };
    const outcomes = await Promise.all(people.map(decideWithRetry));
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(2);
    expect(await db.grant.count({ where: { approvalId: created.id } })).toBe(1);
    expect(value(await getApproval(admin, created.id))).toMatchObject({ status: 'approved', decisions: [{}, {}] });
  });

  it('the same reviewer twice at once is one decision; deciding again later is a conflict', async () => {
    const created = await makeApproval(TWO);
    const results = await racingOn('approval_requests', created.id, 2, () =>
      Promise.all([approve(reviewer, created.id, 1, 'first'), approve(reviewer, created.id, 1, 'second')]),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(await db.approvalDecision.count({ where: { approvalId: created.id } })).toBe(1);
    // With the current version, still once.
    const again = await approve(reviewer, created.id, 2);
    expect(again).toMatchObject({ ok: false, failure: 'conflict' });
    expect(!again.ok && again.detail).toMatch(/You already decided.*approved by/);
  });

  it('one denial is final, with its reason masked; later decisions conflict naming the denial', async () => {
    const created = await makeApproval(TWO);
    value(await approve(reviewer, created.id, 1));
    const denied = value(
      await decideApproval(reviewer2, {
        id: created.id,
        decision: 'deny',
        reason: 'Customer jane@example.com disputes it',
        version: 2,
      }),
    );
    expect(denied).toMatchObject({ status: 'denied', grant: null });
    expect(denied.decisions[1]).toMatchObject({
      reviewer: reviewer2.email,
      decision: 'deny',
      reason: 'Customer [masked:email] disputes it',
    });
    const late = await approve(admin, created.id, 3);
    expect(late).toMatchObject({ ok: false, failure: 'conflict' });
    expect(!late.ok && late.detail).toMatch(
      new RegExp(`Already denied by ${reviewer2.email.replace(/\./g, '\\.')} at \\d{4}-`),
    );
    // The database refuses a decision on a request that is not pending.
    await expect(
      sql(
        `INSERT INTO approval_decisions (approval_id, reviewer_id, reviewer_email, reviewer_principal, decision, reason) VALUES ($1, $2, 'x', 'x', 'approve', 'sql')`,
        [created.id, admin.userId],
      ),
    ).rejects.toThrow(/is not pending/);
  });
});

describe('invariants the database keeps by itself', () => {
  it('refuses to rewrite a request, approve it without approvals, grant it early, reopen it, or delete anything', async () => {
    const created = await makeApproval(TWO);
    await expect(
      sql('UPDATE approval_requests SET args_digest = $2 WHERE id = $1', [created.id, digest(5)]),
    ).rejects.toThrow(/never changes/);
    await expect(
      sql('UPDATE approval_requests SET summary = $2 WHERE id = $1', [created.id, 'something else']),
    ).rejects.toThrow(/never changes/);
    await expect(sql("UPDATE approval_requests SET status = 'approved' WHERE id = $1", [created.id])).rejects.toThrow(
      /fewer approvals/,
    );
    const grantNow =
      "INSERT INTO grants (approval_id, server, tool_name, args_digest, expires_at) SELECT id, server, tool_name, args_digest, now() + interval '1 hour' FROM approval_requests WHERE id = $1";
    await expect(sql(grantNow, [created.id])).rejects.toThrow(/needs an approved request/);
    await expect(
      sql(`INSERT INTO approval_requests (request_ref, organization, principal, server, tool_name, annotations_trusted, args_digest, summary,
      required_approvals, status, expires_at, grant_ttl_seconds, requested_by_key_id, idempotency_key, request_hash)
      VALUES ('r', 'o', 'p', 's', 't', false, 'd', 'x', 2, 'approved', now() + interval '1 hour', 60, gen_random_uuid(), 'k', 'h')`),
    ).rejects.toThrow(/new approval request is pending/);
    value(await decideApproval(reviewer, { id: created.id, decision: 'deny', reason: 'no', version: 1 }));
    await expect(sql("UPDATE approval_requests SET status = 'pending' WHERE id = $1", [created.id])).rejects.toThrow(
      /cannot go from denied to pending/,
    );
    await expect(
      sql("UPDATE approval_decisions SET decision = 'approve' WHERE approval_id = $1", [created.id]),
    ).rejects.toThrow(/never changed or deleted/);
    await expect(sql('DELETE FROM approval_decisions WHERE approval_id = $1', [created.id])).rejects.toThrow(
      /never changed or deleted/,
    );
    await expect(sql('DELETE FROM approval_requests WHERE id = $1', [created.id])).rejects.toThrow(/never deleted/);
    await expect(
      sql('INSERT INTO policy_rules (server, tool_name, required_approvals, created_by) VALUES ($1, $2, 3, $3)', [
        uniq('srv'),
        '*',
        'sql',
      ]),
    ).rejects.toThrow(/policy_rules_required_approvals_check/);
  });
});
