// Shared setup of the approval tests (lib/server/approvals/*.test.ts): keys, people, request
// bodies and a way to make calls really race for a row.
import { expect } from 'vitest';
import pg from 'pg';
import { decideApproval, requestApproval, type ApprovalCreated } from '@/lib/server/approvals';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { makeUser, uniq } from './factories';
import { db } from '@/lib/server/db/db';
import type { Viewer } from '@/lib/auth/permissions';
import { approvalRequestSchema, type ApprovalRequestBody } from '@/lib/approvals/schemas';
import type { Result } from '@/lib/result';
import { cli, type Actor } from '@/lib/auth/actor';
import { makeApiKey as makeKey, value } from './factories';
import { ARGUMENTS, ARGUMENTS_DIGEST } from './approvals-arguments';
export { makeKey, value, ARGUMENTS, ARGUMENTS_DIGEST };

// ── factories ───────────────────────────────────────────────────────────────────────────────

export const TRUSTED = 'trusted-mcp';
export const UNTRUSTED = 'wild-mcp';
export const digest = (n = 0) => `sha256:${n.toString(16).padStart(2, '0').repeat(32)}`;
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export let requester: Actor;
export let redeemer: Actor;
export let admin: Viewer;
export let reviewer: Viewer;
export let reviewer2: Viewer;

export async function setUpApprovalActors() {
  await trustServer(cli, TRUSTED);
  requester = await makeKey(['approvals:request']);
  redeemer = await makeKey(['grants:redeem']);
  admin = await makeUser('admin');
  reviewer = await makeUser('reviewer');
  reviewer2 = await makeUser('reviewer');
}

// Many reviewers at once, without paying bcrypt for each: they never sign in.
export async function makeReviewers(n: number): Promise<Viewer[]> {
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
export const ONE = {
  server: TRUSTED,
  tool: { name: 'update_note', annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false } },
};
// Two: destructive and open-world on a trusted server.
export const TWO = {
  server: TRUSTED,
  tool: { name: 'refund_payment', annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true } },
};
// None: trusted read-only.
export const NONE = { server: TRUSTED, tool: { name: 'get_order', annotations: { readOnlyHint: true } } };

/** Through the wire schema, as the route does. */
export function bodyOf(over: Record<string, unknown> = {}): ApprovalRequestBody {
  return approvalRequestSchema.parse({
    requestRef: uniq('req'),
    organization: 'acme',
    principal: 'user_193',
    agent: 'support-bot',
    ...ONE,
    arguments: ARGUMENTS,
    argsDigest: ARGUMENTS_DIGEST,
    summary: 'Refund 40.00 EUR on order 4411',
    resource: { type: 'order', id: '4411' },
    ...over,
  });
}

export async function makeApproval(
  over: Record<string, unknown> = {},
  key: Actor = requester,
): Promise<ApprovalCreated> {
  return value(await requestApproval(key, uniq('idem'), bodyOf(over))).approval;
}

export const approve = (who: Viewer, id: string, version: number, reason = 'checked the order') =>
  decideApproval(who, { id, decision: 'approve', reason, version });

export async function approvedGrant(
  over: Record<string, unknown> = {},
): Promise<{ approvalId: string; grantId: string }> {
  const created = await makeApproval({ ...NONE, ...over });
  expect(created.status).toBe('approved');
  return { approvalId: created.id, grantId: created.grant!.id };
}

export const redeemBody = (over: Record<string, unknown> = {}) => ({
  server: TRUSTED,
  tool: 'get_order',
  argsDigest: ARGUMENTS_DIGEST,
  ...over,
});

/**
 * Opens the pool's connections, all at once. In one file of approval tests, earlier concurrent
 * tests had left them open; the lock races below need them (with a cold pool, calls made while
 * a row is locked never reach the database, and nothing queues behind the lock).
 */
async function warmPool() {
  await Promise.all(
    Array.from({ length: 10 }, () =>
      db.$transaction(async (tx) => {
        await tx.$executeRaw`SELECT pg_sleep(0.05)`;
      }),
    ),
  );
}

/**
 * Starts `run` while another session holds the row `id` of `table` locked, and releases it only
 * once `waiters` sessions queue behind it: the calls then really race for the row.
 */
export async function racingOn<T>(
  table: 'approval_requests' | 'grants',
  id: string,
  waiters: number,
  run: () => Promise<T>,
): Promise<T> {
  await warmPool();
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
export const QUEUE = 8;

export const failures = (results: Result<unknown>[]) =>
  results.filter((r) => !r.ok).map((r) => (r.ok ? '' : r.failure));

export async function sql(text: string, params: unknown[] = []) {
  const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await c.connect();
  try {
    return await c.query(text, params);
  } finally {
    await c.end();
  }
}
