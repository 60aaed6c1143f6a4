import 'server-only';
import { db, pool } from '../db';
import { Prisma } from '@/lib/generated/prisma/client';
import { type ApprovalStatus, type DecisionKind } from '@/lib/approvals/schemas';
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

type ApprovalRow = {
  id: string;
  request_ref: string;
  created_at: Date;
  status: ApprovalStatus;
  expires_at: Date;
  organization: string;
  principal: string;
  agent: string | null;
  server: string;
  tool_name: string;
  summary: string;
  required_approvals: number;
  resource_type: string | null;
  resource_id: string | null;
  revoked_at: Date | null;
  revoked_by: string | null;
  revoke_reason: string | null;
  requested_by_key_id: string;
  requester_name: string | null;
  grant_id: string | null;
  grant_issued_at: Date | null;
  grant_expires_at: Date | null;
  grant_redeemed_at: Date | null;
  grant_revoked_at: Date | null;
  redeemed_by_key_id: string | null;
  redeemer_name: string | null;
  decisions: { reviewer: string; decision: DecisionKind; reason: string; at: string }[];
  now: Date;
};

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

const INCIDENT_APPROVALS = `
  SELECT r.id, r.request_ref, r.created_at, r.status::text AS status, r.expires_at, r.organization, r.principal, r.agent,
         r.server, r.tool_name, r.summary, r.required_approvals, r.resource_type, r.resource_id,
         r.revoked_at, r.revoked_by, r.revoke_reason, r.requested_by_key_id, rk.name AS requester_name,
         g.id AS grant_id, g.issued_at AS grant_issued_at, g.expires_at AS grant_expires_at,
         g.redeemed_at AS grant_redeemed_at, g.revoked_at AS grant_revoked_at, g.redeemed_by_key_id, gk.name AS redeemer_name,
         COALESCE((SELECT json_agg(json_build_object('reviewer', d.reviewer_email, 'decision', d.decision, 'reason', d.reason, 'at', d.at) ORDER BY d.at, d.id)
                   FROM approval_decisions d WHERE d.approval_id = r.id), '[]'::json) AS decisions,
         clock_timestamp() AS now
  FROM approval_requests r
  LEFT JOIN grants g ON g.approval_id = r.id
  LEFT JOIN api_keys rk ON rk.id = r.requested_by_key_id
  LEFT JOIN api_keys gk ON gk.id = g.redeemed_by_key_id
  WHERE r.request_ref = ANY($1::text[]) AND ($2::text IS NULL OR r.organization = $2::text)
  ORDER BY r.created_at, r.id
  LIMIT $3::int`;

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
  const { rows } = await pool().query<ApprovalRow>(INCIDENT_APPROVALS, [refs, org, MAX_APPROVALS]);
  return { approvals: rows.map(toIncidentApproval), now: rows[0]?.now ?? new Date() };
}

/** Grants redeemed under some request references (for the grant check of findings across a list). */
export async function listRedeemedGrants(reader: Actor, refs: string[]): Promise<RedeemedGrant[]> {
  const scope = approvalScope(reader);
  if (!scope || !refs.length) return [];
  const org = scope.organization;
  const rows = await db.$queryRaw<{ id: string; request_ref: string; server: string; tool_name: string }[]>`
    SELECT g.id, r.request_ref, g.server, g.tool_name
    FROM grants g JOIN approval_requests r ON r.id = g.approval_id
    WHERE r.request_ref IN (${Prisma.join(refs)}) AND g.redeemed_at IS NOT NULL
      AND (${org}::text IS NULL OR r.organization = ${org}::text)`;
  return rows.map((r) => ({ id: r.id, requestRef: r.request_ref, server: r.server, tool: r.tool_name }));
}
