import { beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import {
  countPendingApprovals,
  decideApproval,
  deletePolicyRule,
  expireStaleApprovals,
  findApprovalIdForGrant,
  getApproval,
  listApprovals,
  listPolicyRules,
  requestApproval,
  revokeApproval,
  setPolicyRule,
  type ApprovalCreated,
  type ApprovalView,
} from './approvals';
import { redeemGrant } from './grants';
import { verifyAuditChain } from './audit';
import { createApiKey, type ApiClient } from './credentials';
import { trustServer } from './trusted-servers';
import { makeUser, uniq } from '../../../testing/factories';
import { db } from './db';
import type { Viewer } from '@/lib/auth/permissions';
import type { ApiScope } from '@/lib/credentials/scopes';
import { approvalListQuerySchema, approvalRequestSchema, type ApprovalRequestBody } from '@/lib/approvals/schemas';
import type { Result } from '@/lib/result';
import { cli } from '@/lib/auth/actor';

// ── factories ───────────────────────────────────────────────────────────────────────────────

const TRUSTED = 'trusted-mcp';
const UNTRUSTED = 'wild-mcp';
const digest = (n = 0) => `sha256:${n.toString(16).padStart(2, '0').repeat(32)}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function makeKey(scopes: ApiScope[], organization?: string): Promise<ApiClient> {
  const created = await createApiKey(cli, { name: uniq('key'), scopes, organization });
  if (!created.ok) throw new Error(created.failure);
  return {
    kind: 'apiKey',
    keyId: created.value.key.id,
    name: created.value.key.name,
    scopes,
    organization: created.value.key.organization,
  };
}

let requester: ApiClient;
let redeemer: ApiClient;
let admin: Viewer;
let reviewer: Viewer;
let reviewer2: Viewer;

beforeAll(async () => {
  await trustServer(cli, TRUSTED);
  requester = await makeKey(['approvals:request']);
  redeemer = await makeKey(['grants:redeem']);
  admin = await makeUser('admin');
  reviewer = await makeUser('reviewer');
  reviewer2 = await makeUser('reviewer');
});

// Many reviewers at once, without paying bcrypt for each: they never sign in.
async function makeReviewers(n: number): Promise<Viewer[]> {
  const people = Array.from({ length: n }, () => {
    const email = `${uniq('rev')}@example.test`;
    return { email, name: email, role: 'reviewer' as const, passwordHash: '!', principalId: `principal-${email}` };
  });
  await db.user.createMany({ data: people });
  const rows = await db.user.findMany({
    where: { email: { in: people.map((p) => p.email) } },
    select: { id: true, email: true, name: true, principalId: true },
  });
  return rows.map((u) => ({
    userId: u.id,
    email: u.email,
    name: u.name,
    role: 'reviewer',
    principalId: u.principalId,
  }));
}

// One approval needed: a trusted server's write that is neither destructive nor open-world.
const ONE = {
  server: TRUSTED,
  tool: { name: 'update_note', annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false } },
};
// Two: destructive and open-world on a trusted server.
const TWO = {
  server: TRUSTED,
  tool: { name: 'refund_payment', annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true } },
};
// None: trusted read-only.
const NONE = { server: TRUSTED, tool: { name: 'get_order', annotations: { readOnlyHint: true } } };

/** Through the wire schema, as the route does. */
function bodyOf(over: Record<string, unknown> = {}): ApprovalRequestBody {
  return approvalRequestSchema.parse({
    requestRef: uniq('req'),
    organization: 'acme',
    principal: 'user_193',
    agent: 'support-bot',
    ...ONE,
    argsDigest: digest(1),
    summary: 'Refund 40.00 EUR on order 4411',
    resource: { type: 'order', id: '4411' },
    ...over,
  });
}

function value<T>(result: Result<T>): T {
  if (!result.ok) throw new Error(`${result.failure}: ${result.detail ?? ''} ${JSON.stringify(result.errors ?? [])}`);
  return result.value;
}

async function makeApproval(over: Record<string, unknown> = {}, key: ApiClient = requester): Promise<ApprovalCreated> {
  return value(await requestApproval(key, uniq('idem'), bodyOf(over))).approval;
}

const approve = (who: Viewer, id: string, version: number, reason = 'checked the order') =>
  decideApproval(who, { id, decision: 'approve', reason, version });

async function approvedGrant(over: Record<string, unknown> = {}): Promise<{ approvalId: string; grantId: string }> {
  const created = await makeApproval({ ...NONE, ...over });
  expect(created.status).toBe('approved');
  return { approvalId: created.id, grantId: created.grant!.id };
}

const redeemBody = (over: Record<string, unknown> = {}) => ({
  server: TRUSTED,
  tool: 'get_order',
  argsDigest: digest(1),
  ...over,
});

/**
 * Starts `run` while another session holds the row `id` of `table` locked, and releases it only
 * once `waiters` sessions queue behind it: the calls then really race for the row.
 */
async function racingOn<T>(
  table: 'approval_requests' | 'grants',
  id: string,
  waiters: number,
  run: () => Promise<T>,
): Promise<T> {
  const blocker = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await blocker.connect();
  try {
    await blocker.query('BEGIN');
    await blocker.query(`SELECT 1 FROM ${table} WHERE id = $1 FOR UPDATE`, [id]);
    const settled = run().then(
      (v) => ({ v }),
      (e: unknown) => ({ e }),
    );
    for (let waited = 0; ; waited += 20) {
      const { rows } = await blocker.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
      );
      if (rows[0].n >= waiters) break;
      if (waited > 15_000) throw new Error(`only ${rows[0].n} of ${waiters} sessions queued`);
      await sleep(20);
    }
    await blocker.query('COMMIT');
    const out = await settled;
    if ('e' in out) throw out.e;
    return out.v;
  } finally {
    await blocker.end();
  }
}

// The Prisma pool holds 10 connections: that many can wait on a lock at once.
const QUEUE = 8;

const failures = (results: Result<unknown>[]) => results.filter((r) => !r.ok).map((r) => (r.ok ? '' : r.failure));

async function sql(text: string, params: unknown[] = []) {
  const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await c.connect();
  try {
    return await c.query(text, params);
  } finally {
    await c.end();
  }
}

// ── tests ───────────────────────────────────────────────────────────────────────────────────

describe('requestApproval', () => {
  it('answers 201-shaped { id, status, requiredApprovals, expiresAt, version } and stores free text masked', async () => {
    const body = bodyOf({
      summary: 'Refund for jane.doe@example.com, card 4111 1111 1111 1111',
      resource: { type: 'customer', id: 'jane.doe@example.com' },
    });
    const { approval, replayed } = value(await requestApproval(requester, uniq('idem'), body));
    expect(replayed).toBe(false);
    expect(approval).toMatchObject({ status: 'pending', requiredApprovals: 1, version: 1, grant: null });
    const view = value(await getApproval(admin, approval.id));
    expect(view.summary).toBe('Refund for [masked:email], card [masked:card_number]');
    expect(view.resource).toEqual({ type: 'customer', id: '[masked:email]' });
    const dump = (await sql('SELECT row_to_json(a)::text AS row FROM approval_requests a WHERE id = $1', [approval.id]))
      .rows[0].row as string;
    expect(dump).not.toMatch(/jane\.doe|4111/);
    // Expiry: the default pending TTL from the database's clock.
    const ttl = approval.expiresAt.getTime() - view.createdAt.getTime();
    expect(ttl).toBe(3600_000);
  });

  it('needs the scope, an Idempotency-Key and, for an organization key, its own organization', async () => {
    const outcomesKey = await makeKey(['outcomes:write']);
    expect(await requestApproval(outcomesKey, uniq('idem'), bodyOf())).toMatchObject({
      ok: false,
      failure: 'forbidden',
    });
    expect(await requestApproval(requester, null, bodyOf())).toMatchObject({
      ok: false,
      failure: 'idempotency_key_required',
    });
    expect(await requestApproval(requester, '  ', bodyOf())).toMatchObject({
      ok: false,
      failure: 'idempotency_key_required',
    });
    const orgKey = await makeKey(['approvals:request'], 'globex');
    expect(await requestApproval(orgKey, uniq('idem'), bodyOf({ organization: 'acme' }))).toMatchObject({
      ok: false,
      failure: 'forbidden',
      errors: [{ path: 'organization' }],
    });
    const own = value(await requestApproval(orgKey, uniq('idem'), bodyOf({ organization: 'globex' }))).approval;
    // An organization key reads only its own organization's requests.
    const orgReader = await makeKey(['grants:redeem'], 'acme');
    expect(await getApproval(orgReader, own.id)).toMatchObject({ ok: false, failure: 'not_found' });
    expect(value(await getApproval(orgKey, own.id)).organization).toBe('globex');
  });

  it('is idempotent per key: same body → the original answer, other body → idempotency_key_reused', async () => {
    const key = uniq('idem');
    const body = bodyOf();
    const first = value(await requestApproval(requester, key, body));
    // The state moves on; the replay still answers what the first request was answered.
    value(await approve(reviewer, first.approval.id, 1));
    const again = value(await requestApproval(requester, key, bodyOf({ ...body, agent: body.agent })));
    expect(again).toEqual({ replayed: true, approval: first.approval });
    expect(await requestApproval(requester, key, { ...body, argsDigest: digest(9) })).toMatchObject({
      ok: false,
      failure: 'idempotency_key_reused',
    });
    // Another key may use the same Idempotency-Key for its own request.
    const other = await makeKey(['approvals:request']);
    expect(value(await requestApproval(other, key, body)).approval.id).not.toBe(first.approval.id);
    expect(await db.approvalRequest.count({ where: { idempotencyKey: key } })).toBe(2);
  });

  it('answers conflict while the first request with the key is still being stored, and the original once it is', async () => {
    const key = uniq('idem');
    const body = bodyOf();
    // Another session stands in for the first request, mid-transaction, holding the key's lock.
    const inFlight = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await inFlight.connect();
    try {
      await inFlight.query('SELECT pg_advisory_lock($1::int, hashtext($2))', [
        0x61707072,
        `${(requester as { keyId: string }).keyId}\n${key}`,
      ]);
      const busy = await requestApproval(requester, key, body);
      expect(busy).toMatchObject({ ok: false, failure: 'conflict' });
      expect(!busy.ok && busy.detail).toMatch(/still being processed/);
    } finally {
      await inFlight.end();
    }
    const first = value(await requestApproval(requester, key, body));
    expect(value(await requestApproval(requester, key, body))).toEqual({ ...first, replayed: true });
  });

  it('creates one request when the same key and body arrive concurrently; the others replay it or hear it is in flight', async () => {
    const key = uniq('idem');
    const body = bodyOf();
    const results = await Promise.all(Array.from({ length: 12 }, () => requestApproval(requester, key, body)));
    expect(
      await db.approvalRequest.count({
        where: { requestedByKeyId: (requester as { keyId: string }).keyId, idempotencyKey: key },
      }),
    ).toBe(1);
    const oks = results.flatMap((r) => (r.ok ? [r.value] : []));
    expect(oks.length).toBeGreaterThanOrEqual(1);
    expect(new Set(oks.map((o) => o.approval.id)).size).toBe(1);
    expect(oks.filter((o) => !o.replayed)).toHaveLength(1);
    expect(new Set(failures(results))).toEqual(new Set(failures(results).length ? ['conflict'] : []));
  });
});

describe('policy', () => {
  it('auto-approves a trusted read-only tool and issues its grant at once (audited)', async () => {
    const created = await makeApproval({ ...NONE, grantTtlSeconds: 120 });
    expect(created).toMatchObject({ status: 'approved', requiredApprovals: 0, grant: { id: expect.any(String) } });
    const view = value(await getApproval(admin, created.id));
    expect(view.grant).toMatchObject({ id: created.grant!.id, state: 'active', redeemedAt: null, revokedAt: null });
    expect(view.grant!.expiresAt.getTime() - view.grant!.issuedAt.getTime()).toBe(120_000);
    const actions = (await db.auditEntry.findMany({ where: { targetId: created.id }, orderBy: { seq: 'asc' } })).map(
      (e) => e.action,
    );
    expect(actions).toEqual(['approval.request', 'grant.issue']);
  });

  it('needs two for destructive + open-world, and two whatever an untrusted server claims', async () => {
    expect((await makeApproval(TWO)).requiredApprovals).toBe(2);
    expect((await makeApproval({ ...NONE, server: UNTRUSTED })).requiredApprovals).toBe(2);
    expect((await makeApproval({ ...ONE, server: UNTRUSTED })).requiredApprovals).toBe(2);
    expect((await makeApproval({ server: TRUSTED, tool: { name: 'no_hints' } })).requiredApprovals).toBe(2);
  });

  it("follows an admin's rule: for the tool first, then for the whole server", async () => {
    const server = uniq('srv');
    await trustServer(cli, server);
    expect(await setPolicyRule(reviewer, { server, tool: null, requiredApprovals: 2 })).toMatchObject({
      ok: false,
      failure: 'forbidden',
    });
    const wholeServer = value(await setPolicyRule(admin, { server, tool: null, requiredApprovals: 2 }));
    expect(wholeServer).toMatchObject({ server, tool: null, requiredApprovals: 2, createdBy: admin.email });
    expect((await makeApproval({ ...NONE, server })).requiredApprovals).toBe(2);
    const toolRule = value(await setPolicyRule(admin, { server, tool: 'get_order', requiredApprovals: 1 }));
    expect((await makeApproval({ ...NONE, server })).requiredApprovals).toBe(1);
    // Setting the same rule again changes nothing; changing it is one audited change.
    expect(value(await setPolicyRule(admin, { server, tool: 'get_order', requiredApprovals: 1 })).id).toBe(toolRule.id);
    value(await setPolicyRule(admin, { server, tool: 'get_order', requiredApprovals: 0 }));
    expect((await makeApproval({ ...TWO, tool: { ...TWO.tool, name: 'get_order' }, server })).requiredApprovals).toBe(
      0,
    );
    const rules = value(await listPolicyRules(reviewer)).filter((r) => r.server === server);
    expect(rules.map((r) => [r.tool, r.requiredApprovals])).toEqual([
      [null, 2],
      ['get_order', 0],
    ]);
    value(await deletePolicyRule(admin, toolRule.id));
    expect(await deletePolicyRule(admin, toolRule.id)).toMatchObject({ ok: false, failure: 'not_found' });
    expect((await makeApproval({ ...NONE, server })).requiredApprovals).toBe(2);
    const actions = (
      await db.auditEntry.findMany({
        where: { targetType: 'policy_rule', targetId: { in: [toolRule.id, wholeServer.id] } },
        orderBy: { seq: 'asc' },
      })
    ).map((e) => e.action);
    expect(actions).toEqual(['policy.create', 'policy.create', 'policy.change', 'policy.delete']);
  });

  it('keeps one whole-server rule per server even when set concurrently', async () => {
    const server = uniq('srv');
    const results = await Promise.all(
      [0, 1, 2, 1, 2, 0].map((n) => setPolicyRule(cli, { server, tool: null, requiredApprovals: n })),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    expect(await db.policyRule.count({ where: { server } })).toBe(1);
  });
});

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

describe('redeemGrant', () => {
  it('redeems once with the matching server, tool and digest, and moves the request to redeemed', async () => {
    const { approvalId, grantId } = await approvedGrant();
    const r = value(await redeemGrant(redeemer, grantId, redeemBody()));
    expect(r).toMatchObject({ grantId, approvalId, server: TRUSTED, tool: 'get_order', argsDigest: digest(1) });
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
        argsDigest: digest(1),
        apiKey: (ownOrg as { name: string }).name,
      },
    });
    // Both by the database clock (the column rounds to the millisecond, the audit entry truncates).
    expect(audit.at.getTime()).toBeGreaterThanOrEqual(redeemed.redeemedAt.getTime() - 1);
  });

  it('20 concurrent redemptions: exactly one succeeds, the rest conflict', async () => {
    const { grantId } = await approvedGrant();
    const results = await racingOn('grants', grantId, QUEUE, () =>
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

describe('expiry by the database clock', () => {
  it('a pending request reads expired after its TTL, before any sweep; a decision then conflicts', async () => {
    const created = await makeApproval({ pendingTtlSeconds: 1 });
    await sleep(1200);
    expect(value(await getApproval(admin, created.id)).status).toBe('expired');
    expect((await db.approvalRequest.findUniqueOrThrow({ where: { id: created.id } })).status).toBe('pending');
    const late = await approve(reviewer, created.id, 1);
    expect(late).toMatchObject({ ok: false, failure: 'conflict' });
    expect(!late.ok && late.detail).toMatch(/^Expired at/);
    expect(await revokeApproval(admin, { id: created.id, reason: 'late' })).toMatchObject({
      ok: false,
      failure: 'conflict',
    });

    // The sweep stores what reads already said, once, with an audit entry.
    expect(await expireStaleApprovals()).toBeGreaterThanOrEqual(1);
    expect((await db.approvalRequest.findUniqueOrThrow({ where: { id: created.id } })).status).toBe('expired');
    await expireStaleApprovals();
    expect(await db.auditEntry.count({ where: { targetId: created.id, action: 'approval.expire' } })).toBe(1);
  });

  it('a grant cannot be redeemed after it expires (gone), and its request stays approved', async () => {
    const { approvalId, grantId } = await approvedGrant({ grantTtlSeconds: 1 });
    await sleep(1200);
    const r = await redeemGrant(redeemer, grantId, redeemBody());
    expect(r).toMatchObject({ ok: false, failure: 'gone' });
    expect(!r.ok && r.detail).toMatch(/expired at/);
    expect(value(await getApproval(admin, approvalId))).toMatchObject({
      status: 'approved',
      grant: { state: 'expired' },
    });
    // Nor directly in SQL.
    await expect(sql('UPDATE grants SET redeemed_at = now() WHERE id = $1', [grantId])).rejects.toThrow(/has expired/);
  });
});

describe('listApprovals', () => {
  it('pending: unexpired only, soonest to expire first, a page at a time; live adds usable grants', async () => {
    const principal = uniq('user');
    const late = await makeApproval({ principal, pendingTtlSeconds: 600 });
    const soon = await makeApproval({ principal, pendingTtlSeconds: 60 });
    const middle = await makeApproval({ principal, pendingTtlSeconds: 300 });
    const lapsing = await makeApproval({ principal, pendingTtlSeconds: 1 });
    const granted = await makeApproval({ ...NONE, principal });
    const used = await makeApproval({ ...NONE, principal });
    value(await redeemGrant(redeemer, used.grant!.id, redeemBody()));
    await sleep(1100);

    const q = (status: string, extra: Record<string, string> = {}) =>
      approvalListQuerySchema.parse({ status, principal, ...extra });
    const first = value(await listApprovals(reviewer, { ...q('pending'), limit: 2 }));
    expect(first.items.map((i) => i.id)).toEqual([soon.id, middle.id]);
    const second = value(await listApprovals(reviewer, q('pending', { cursor: first.nextCursor!, limit: '2' })));
    expect(second).toMatchObject({ items: [{ id: late.id }], nextCursor: null });

    const ids = async (status: string) => value(await listApprovals(reviewer, q(status))).items.map((i) => i.id);
    expect(await ids('expired')).toEqual([lapsing.id]);
    expect(new Set(await ids('live'))).toEqual(new Set([late.id, soon.id, middle.id, granted.id]));
    expect(await ids('redeemed')).toEqual([used.id]);
    // Newest first without a status.
    expect(await ids('')).toEqual([used.id, granted.id, lapsing.id, middle.id, soon.id, late.id]);
    // A cursor from another listing is refused, not misread.
    expect(
      await listApprovals(reviewer, {
        ...q('expired'),
        cursor: first.nextCursor ? approvalListQuerySchema.parse({ cursor: first.nextCursor }).cursor : undefined,
      }),
    ).toMatchObject({ ok: false, failure: 'invalid_input' });
  });

  it('counts the pending queue for people who may read it', async () => {
    const before = await countPendingApprovals(reviewer);
    await makeApproval();
    await makeApproval({ pendingTtlSeconds: 1 });
    expect(await countPendingApprovals(reviewer)).toBe(before + 2);
    await sleep(1100);
    expect(await countPendingApprovals(reviewer)).toBe(before + 1);
  });

  it('lets a key read only with an approvals scope', async () => {
    const outcomesKey = await makeKey(['outcomes:read']);
    expect(await listApprovals(outcomesKey)).toMatchObject({ ok: false, failure: 'forbidden' });
    expect((await listApprovals(redeemer)).ok).toBe(true);
  });
});

describe('the audit trail', () => {
  it('records every state change and every decision, and the chain verifies', async () => {
    const created = await makeApproval(TWO);
    value(await approve(reviewer, created.id, 1));
    const approved = value(await approve(reviewer2, created.id, 2));
    value(await redeemGrant(redeemer, approved.grant!.id, redeemBody({ tool: 'refund_payment' })));
    const entries = await db.auditEntry.findMany({ where: { targetId: created.id }, orderBy: { seq: 'asc' } });
    expect(entries.map((e) => [e.action, e.actor])).toEqual([
      ['approval.request', `api_key:${(requester as { keyId: string }).keyId}`],
      ['approval.approve', reviewer.email],
      ['approval.approve', reviewer2.email],
      ['approval.approved', reviewer2.email],
      ['grant.issue', reviewer2.email],
      ['grant.redeem', `api_key:${(redeemer as { keyId: string }).keyId}`],
    ]);
    expect(entries[1].data).toMatchObject({ reason: 'checked the order', version: 1 });
    expect(await verifyAuditChain()).toMatchObject({ ok: true });
  });
});

// Keeps the view's type honest for the pages that render it.
export type _ViewCheck = ApprovalView['grant'];
