import 'server-only';
import { db, pool } from '../db/db';
import { rows as run } from '../db/kysely';
import { redeemGrants } from './grants-sql';
import { isDatabaseUnavailable } from '../db/unavailable';
import { auditAppendArgs } from '../audit/audit';
import { dbNow, keyActor, refusedByDatabase } from '.';
import type { Actor, ApiKeyActor } from '@/lib/auth/actor';
import { authorize } from '@/lib/auth/permissions';
import { isUuid, type RedeemBody } from '@/lib/approvals/schemas';
import { isStorableText } from '@/lib/outcomes/schemas';
import { fail, ok, type FieldError, type Result } from '@/lib/result';

export type Redemption = {
  grantId: string;
  approvalId: string;
  redeemedAt: Date;
  server: string;
  tool: string;
  argsDigest: string;
};

const fieldLabel = { server: 'server', tool: 'tool', argsDigest: 'argument digest' } as const;

/**
 * The execution step presents a grant (docs/api.md, `POST /api/v1/grants/{grantId}/redeem`): one
 * conditional update, unredeemed, unrevoked, unexpired by the database clock and bound to the same
 * server, tool and argument digest, which also moves the request to redeemed and appends the
 * audit entry, in one statement (one round trip, no interactive transaction). It succeeds once.
 */
export async function redeemGrant(client: Actor, grantId: string, body: RedeemBody): Promise<Result<Redemption>> {
  if (!authorize(client, 'grants.redeem')) return fail('forbidden');
  if (!isUuid(grantId)) return fail('not_found');
  // Text PostgreSQL cannot hold never matches a stored binding: explained without a write.
  if (!isStorableText(body.server) || !isStorableText(body.tool))
    return explainRefusedRedemption(client, grantId, body);
  // The audit entry's target, the approval, is filled in by the database.
  const entry = {
    actor: keyActor(client),
    action: 'grant.redeem',
    targetType: 'approval',
    targetId: '',
    data: { grantId, server: body.server, tool: body.tool, argsDigest: body.argsDigest, apiKey: client.name },
  };
  const audit = auditAppendArgs(entry, ['at', 'seq', 'targetId']);
  const redeemed = await redeemInBatch({
    grant: grantId,
    key: client.keyId,
    organization: client.organization,
    server: body.server,
    tool: body.tool,
    argsDigest: body.argsDigest,
    actor: entry.actor,
    action: entry.action,
    targetType: entry.targetType,
    data: audit.data,
    canonical: audit.canonical,
  });
  if (redeemed) {
    return ok({
      grantId,
      approvalId: redeemed.approval_id,
      redeemedAt: redeemed.redeemed_at,
      server: body.server,
      tool: body.tool,
      argsDigest: body.argsDigest,
    });
  }
  return explainRefusedRedemption(client, grantId, body);
}

// ── Group commit ────────────────────────────────────────────────────────────────────────────
// Every redemption appends to the audit chain, whose lock is held until its transaction has
// committed, WAL flush included: one redemption per commit caps the whole system at one flush
// per redemption (bench:approvals measures it), whatever else is made faster.
// So this process sends redemptions to redeem_grants (prisma/functions.sql)
// at once while fewer than MAX_IN_FLIGHT statements are running (a batch of one: no added
// latency), and otherwise gathers those that arrive meanwhile into the next statement, which
// commits them together. Each is still committed, durably, before it is answered.

/** What redeem_grants takes for one redemption. */
type RedeemItem = {
  grant: string;
  key: string;
  organization: string | null;
  server: string;
  tool: string;
  argsDigest: string;
  actor: string;
  action: string;
  targetType: string;
  data: string;
  canonical: string[];
};
type Redeemed = { approval_id: string; redeemed_at: Date };
type Waiting = { item: RedeemItem; resolve: (r: Redeemed | null) => void; reject: (err: unknown) => void };

// Two statements at a time. They all queue for the audit chain's lock anyway, so more in flight
// only turns one commit of many redemptions into many commits of one, with connections waiting on
// the lock and a longer tail (bench:approvals shows the redemption tail under load). Two rather
// than one, so one statement stuck behind a row lock (a revocation committing) does not hold up
// every redemption.
const MAX_IN_FLIGHT = 2;
const MAX_BATCH = 64;
const batching = { inFlight: 0, queue: [] as Waiting[] };

function redeemInBatch(item: RedeemItem): Promise<Redeemed | null> {
  return new Promise((resolve, reject) => {
    batching.queue.push({ item, resolve, reject });
    pump();
  });
}

function pump(): void {
  while (batching.inFlight < MAX_IN_FLIGHT && batching.queue.length) {
    const batch = batching.queue.splice(0, MAX_BATCH);
    batching.inFlight++;
    void runBatch(batch)
      .catch((err: unknown) => {
        for (const w of batch) w.reject(err); // a no-op for those already answered
      })
      .finally(() => {
        batching.inFlight--;
        pump();
      });
  }
}

async function runBatch(batch: Waiting[]): Promise<void> {
  let rows: (Redeemed & { idx: number })[];
  try {
    // On the pool itself, not through Prisma: one statement outside any transaction, and Prisma's
    // raw-query layer costs a noticeable share of a redemption's CPU (bench:approvals reports the
    // console's CPU per answer).
    rows = await run(redeemGrants(JSON.stringify(batch.map((w) => w.item))), pool());
  } catch (err) {
    if (batch.length === 1) {
      // The database refused it through one of its invariants (the clock moved past the expiry
      // since the WHERE clause read it): explained like any refusal.
      if (refusedByDatabase(err)) batch[0].resolve(null);
      else batch[0].reject(err);
    } else if (isDatabaseUnavailable(err)) {
      for (const w of batch) w.reject(err);
    } else {
      // One item undid the whole batch (nothing was written): each goes again on its own.
      await Promise.all(batch.map((w) => runBatch([w])));
    }
    return;
  }
  const byIndex = new Map(rows.map((r) => [Number(r.idx), r]));
  batch.forEach((w, i) => {
    const r = byIndex.get(i);
    w.resolve(r ? { approval_id: r.approval_id, redeemed_at: r.redeemed_at } : null);
  });
}

async function explainRefusedRedemption(
  client: ApiKeyActor,
  grantId: string,
  body: RedeemBody,
): Promise<Result<never>> {
  const grant = await db.grant.findFirst({
    where: {
      id: grantId,
      ...(client.organization === null ? {} : { approval: { organization: client.organization } }),
    },
    select: {
      server: true,
      toolName: true,
      argsDigest: true,
      expiresAt: true,
      redeemedAt: true,
      revokedAt: true,
      approval: { select: { revokedBy: true, revokeReason: true } },
    },
  });
  if (!grant) return fail('not_found');
  if (grant.redeemedAt)
    return fail(
      'conflict',
      `This grant was already redeemed at ${grant.redeemedAt.toISOString()}; a grant is used once.`,
    );
  if (grant.revokedAt) {
    const by = grant.approval.revokedBy ? ` by ${grant.approval.revokedBy}` : '';
    const why = grant.approval.revokeReason ? `: "${grant.approval.revokeReason}"` : '';
    return fail('gone', `This grant was revoked at ${grant.revokedAt.toISOString()}${by}${why}.`);
  }
  if (grant.expiresAt <= (await dbNow()))
    return fail('gone', `This grant expired at ${grant.expiresAt.toISOString()}; request a new approval.`);
  // Which field differs, never what was approved.
  const differing: FieldError[] = [];
  if (grant.server !== body.server) differing.push({ path: 'server', message: 'differs from the approved server' });
  if (grant.toolName !== body.tool) differing.push({ path: 'tool', message: 'differs from the approved tool' });
  if (grant.argsDigest !== body.argsDigest)
    differing.push({ path: 'argsDigest', message: 'differs from the approved argument digest' });
  if (differing.length) {
    const names = differing.map((e) => fieldLabel[e.path as keyof typeof fieldLabel]).join(', ');
    return fail(
      'invalid_input',
      `This grant does not cover this call: the ${names} differ${differing.length === 1 ? 's' : ''} from what was approved. Nothing was redeemed.`,
      differing,
    );
  }
  return fail('conflict', 'This grant changed while it was being redeemed; read its approval and try again.');
}
