// Shared setup of the retention tests (lib/server/retention/*.test.ts): keys, people, old
// records and the approvals that hold them back.
import { vi } from 'vitest';
import { PURGE_ACTION, type PurgeReport } from '@/lib/server/retention/retention';
import { stopRetentionSchedule } from '@/lib/server/retention/job';
import { ingestOutcomes } from '@/lib/server/outcomes';
import { requestApproval } from '@/lib/server/approvals';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { makeUser, uniq } from './factories';
import { db } from '@/lib/server/db/db';
import type { Viewer } from '@/lib/auth/permissions';
import { approvalRequestSchema } from '@/lib/approvals/schemas';
import { outcomeBatchSchema, type Outcome } from '@/lib/outcomes/schemas';
import { RETENTION_ENV } from '@/lib/outcomes/retention';
import { cli, type Actor } from '@/lib/auth/actor';
import { makeApiKey as makeKey, value } from './factories';
import { setEnv } from './env';
export { makeKey, value };

// ── factories ───────────────────────────────────────────────────────────────────────────────

export const TRUSTED = 'retention-mcp';
export const DAY_MS = 86_400_000;
export const digest = (n: number) => `sha256:${n.toString(16).padStart(2, '0').repeat(32)}`;

export let writer: Actor;
export let requester: Actor;
export let redeemer: Actor;
export let reviewer: Viewer;
export let admin: Viewer;

export async function setUpRetentionActors() {
  await trustServer(cli, TRUSTED);
  writer = await makeKey(['outcomes:write']);
  requester = await makeKey(['approvals:request']);
  redeemer = await makeKey(['grants:redeem']);
  reviewer = await makeUser('reviewer');
  admin = await makeUser('admin');
}

export function resetRetention() {
  setEnv({ [RETENTION_ENV]: undefined });
  vi.useRealTimers();
  stopRetentionSchedule();
}

export const record = (requestRef: string, over: Partial<Outcome> = {}): Outcome => ({
  eventId: uniq('evt'),
  occurredAt: '2026-11-30T12:00:00Z',
  requestRef,
  organization: 'acme',
  principal: 'user_193',
  server: TRUSTED,
  tool: { name: 'get_order' },
  observed: { sent: true, httpStatus: 200, result: { isError: false } },
  ...over,
});

/** Ingests `n` records of a request reference (in batches of up to 1000), as the API does. */
export async function ingest(requestRef: string, n: number, over: Partial<Outcome> = {}): Promise<void> {
  for (let i = 0; i < n; i += 1000) {
    const records = Array.from({ length: Math.min(1000, n - i) }, () => record(requestRef, over));
    value(await ingestOutcomes(writer, outcomeBatchSchema.parse({ records })));
  }
}

/** Moves the receipt of a request reference's records `days` into the past. */
export const receivedDaysAgo = (requestRef: string, days: number) =>
  db.$executeRaw`UPDATE outcome_records SET received_at = now() - make_interval(days => ${days}::int) WHERE request_ref = ${requestRef}`;

export async function oldRecords(n: number, over: Partial<Outcome> = {}): Promise<string> {
  const ref = uniq('old');
  await ingest(ref, n, over);
  await receivedDaysAgo(ref, 91);
  return ref;
}

export const countOf = (requestRef: string) => db.outcomeRecord.count({ where: { requestRef } });

export function ran(r: PurgeReport): Extract<PurgeReport, { ran: true }> {
  if (!r.ran) throw new Error(`the purge did not run: ${r.reason}`);
  return r;
}

export const purgeEntries = () => db.auditEntry.findMany({ where: { action: PURGE_ACTION }, orderBy: { seq: 'asc' } });

// What the approval requests stage: a note's arguments, and their digest written out by hand
// (`sha256:` + sha256sum of {"note":"Ring twice, the bell is broken","order_id":"4411"}).
export const ARGS = { order_id: '4411', note: 'Ring twice, the bell is broken' };
export const ARGS_DIGEST = 'sha256:436026c25a2a5e26406d2d9e433861f717aed924f10a6694d90b43bab42f9050';
export const approvalBody = (requestRef: string, over: Record<string, unknown> = {}) =>
  approvalRequestSchema.parse({
    requestRef,
    organization: 'acme',
    principal: 'user_193',
    server: TRUSTED,
    arguments: ARGS,
    argsDigest: ARGS_DIGEST,
    summary: 'Update the note',
    // One approval needed: a trusted server's write that is neither destructive nor open-world.
    tool: { name: 'update_note', annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false } },
    ...over,
  });
export const requestFor = async (requestRef: string, over: Record<string, unknown> = {}) =>
  value(await requestApproval(requester, uniq('idem'), approvalBody(requestRef, over))).approval;
// Trusted read-only: no approval needed, a grant at once.
export const grantFor = async (requestRef: string) =>
  (await requestFor(requestRef, { tool: { name: 'get_order', annotations: { readOnlyHint: true } } })).grant!;
