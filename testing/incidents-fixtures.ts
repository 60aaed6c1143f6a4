// Shared setup of the incident tests (lib/server/incidents/*.test.ts): keys, people, and
// incidents staged from outcome records and approvals.
import { decideApproval, requestApproval } from '@/lib/server/approvals';
import { redeemGrant } from '@/lib/server/approvals/grants';
import { ingestOutcomes } from '@/lib/server/outcomes';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { makeUser, uniq } from './factories';
import type { Viewer } from '@/lib/auth/permissions';
import { approvalRequestSchema } from '@/lib/approvals/schemas';
import { outcomeBatchSchema, type Observed } from '@/lib/outcomes/schemas';
import { cli, type Actor } from '@/lib/auth/actor';
import { makeApiKey as makeKey, value } from './factories';
export { makeKey, value };

// ── factories ───────────────────────────────────────────────────────────────────────────────

export const SERVER = 'ledger-mcp';
// A trusted server's write that is neither destructive nor open-world: one approval.
export const TOOL = {
  name: 'add_note',
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
};
// The note's arguments the approvals stage, and their digest written out by hand: `sha256:` + the
// hex SHA-256 of {"note":"Customer asked for delivery after 17:00","order_id":"4411"} (sha256sum).
export const ARGS = { order_id: '4411', note: 'Customer asked for delivery after 17:00' };
export const DIGEST = 'sha256:94fc223e7d58a073b75ae8e01e3953b9b5ac98c29cafb4cc0954391d877e2b37';
export const OK: Observed = { sent: true, httpStatus: 200, result: { isError: false, outputValidation: 'valid' } };
export const BLOCKED: Observed = { sent: false, clientBlock: 'approval_required' };

export let writer: Actor;
export let requester: Actor;
export let redeemer: Actor;
export let reviewer: Viewer;
export let admin: Viewer;
export let support: Viewer;

export async function setUpIncidentActors() {
  await trustServer(cli, SERVER);
  writer = await makeKey(['outcomes:write']);
  requester = await makeKey(['approvals:request']);
  redeemer = await makeKey(['grants:redeem']);
  reviewer = await makeUser('reviewer');
  admin = await makeUser('admin');
  support = await makeUser('support');
}

/** One record, posted by `by` (the shared writer key unless said). */
export async function record(
  requestRef: string,
  over: Record<string, unknown> = {},
  by: Actor = writer,
): Promise<string> {
  const batch = outcomeBatchSchema.parse({
    records: [
      {
        eventId: uniq('evt'),
        occurredAt: new Date().toISOString(),
        requestRef,
        organization: 'acme',
        principal: 'user_193',
        server: SERVER,
        tool: TOOL,
        argsDigest: DIGEST,
        summary: 'Add a note to order 4411',
        observed: OK,
        ...over,
      },
    ],
  });
  return value(await ingestOutcomes(by, batch)).records[0].id;
}

export async function stage(requestRef: string, over: Record<string, unknown> = {}) {
  const body = approvalRequestSchema.parse({
    requestRef,
    organization: 'acme',
    principal: 'user_193',
    agent: 'support-bot',
    server: SERVER,
    tool: TOOL,
    arguments: ARGS,
    argsDigest: DIGEST,
    summary: 'Add a note to order 4411',
    ...over,
  });
  return value(await requestApproval(requester, uniq('idem'), body)).approval;
}

export async function approvedAndRedeemed(requestRef: string) {
  const created = await stage(requestRef);
  const decided = value(
    await decideApproval(reviewer, {
      id: created.id,
      decision: 'approve',
      reason: 'Order 4411 checked',
      version: created.version,
    }),
  );
  const grantId = decided.grant!.id;
  value(await redeemGrant(redeemer, grantId, { server: SERVER, tool: TOOL.name, argsDigest: DIGEST }));
  return { approvalId: created.id, grantId };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const kinds = (timeline: { kind: string }[]) => timeline.map((e) => e.kind);
