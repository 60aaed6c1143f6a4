import 'server-only';
import { rows as run } from '../db/kysely';
import { selectIncidentApprovals, selectRedeemedGrants, type IncidentApprovalRow } from './sql';
import { authorize } from '@/lib/auth/permissions';
import { organizationOf, type Actor } from '@/lib/auth/actor';
import { type IncidentApproval } from '@/lib/incidents/timeline';
import type { RedeemedGrant } from './types';

// Read here rather than in approvals.ts because the incident decides what its reader may see:
// a key reading incidents (outcomes:read) sees its own organization's approvals, as it does records.

/** Whether the reader may see approvals in an incident, and of which organization (null: all). */
export function approvalScope(reader: Actor): { organization: string | null } | null {
  return authorize(reader, 'incidents.read') ? { organization: organizationOf(reader) } : null;
}

type ApprovalRow = IncidentApprovalRow;

const MAX_APPROVALS = 1_000;
const keyName = (name: string | null, id: string) => (name ? `API key "${name}"` : `api_key:${id}`);

function toIncidentApproval(r: ApprovalRow): IncidentApproval & { requestRef: string } {
  return {
    id: r.id,
    requestRef: r.request_ref,
    createdAt: r.created_at,
    status: r.status,
    expiresAt: r.expires_at,
    requestedBy: keyName(r.requester_name, r.requested_by_key_id),
    organization: r.organization,
    principal: r.principal,
    agent: r.agent,
    server: r.server,
    tool: r.tool_name,
    summary: r.summary,
    requiredApprovals: r.required_approvals,
    resource: r.resource_type != null && r.resource_id != null ? { type: r.resource_type, id: r.resource_id } : null,
    decisions: r.decisions.map((d) => ({ ...d, at: new Date(d.at) })),
    revoked: r.revoked_at ? { at: r.revoked_at, by: r.revoked_by ?? 'unknown', reason: r.revoke_reason ?? '' } : null,
    grant:
      r.grant_id && r.grant_issued_at && r.grant_expires_at
        ? {
            id: r.grant_id,
            issuedAt: r.grant_issued_at,
            expiresAt: r.grant_expires_at,
            redeemedAt: r.grant_redeemed_at,
            redeemedBy: r.redeemed_by_key_id ? keyName(r.redeemer_name, r.redeemed_by_key_id) : null,
            revokedAt: r.grant_revoked_at,
          }
        : null,
  };
}

/**
 * Every approval request filed under some request references, with its decisions, grant and the
 * API keys that asked and redeemed: one query. `now` is the database clock (expiry is judged by it).
 */
export async function listIncidentApprovals(
  reader: Actor,
  refs: string[],
): Promise<{ approvals: (IncidentApproval & { requestRef: string })[]; now: Date }> {
  const scope = approvalScope(reader);
  if (!scope || !refs.length) return { approvals: [], now: new Date() };
  const org = scope.organization;
  const rows = await run(selectIncidentApprovals(refs, org, MAX_APPROVALS));
  return { approvals: rows.map(toIncidentApproval), now: rows[0]?.now ?? new Date() };
}

/** Grants redeemed under some request references (for the grant check of findings across a list). */
export async function listRedeemedGrants(reader: Actor, refs: string[]): Promise<RedeemedGrant[]> {
  const scope = approvalScope(reader);
  if (!scope || !refs.length) return [];
  const org = scope.organization;
  const rows = await run(selectRedeemedGrants(refs, org));
  return rows.map((r) => ({ id: r.id, requestRef: r.request_ref, server: r.server, tool: r.tool_name }));
}
