import 'server-only';
import type { Selectable } from 'kysely';
import { kysely, sql, type DB } from '../db/kysely';

type Request = Selectable<DB['approval_requests']>;
type Grant = Selectable<DB['grants']>;
type Decision = Selectable<DB['approval_decisions']>;

/** An approval request of an incident, with its grant, the names of the keys that asked and redeemed, and its decisions. */
export type IncidentApprovalRow = Pick<
  Request,
  | 'id'
  | 'request_ref'
  | 'created_at'
  | 'status'
  | 'expires_at'
  | 'organization'
  | 'principal'
  | 'agent'
  | 'server'
  | 'tool_name'
  | 'summary'
  | 'required_approvals'
  | 'resource_type'
  | 'resource_id'
  | 'revoked_at'
  | 'revoked_by'
  | 'revoke_reason'
  | 'requested_by_key_id'
> & {
  requester_name: DB['api_keys']['name'] | null;
  grant_id: Grant['id'] | null;
  grant_issued_at: Grant['issued_at'] | null;
  grant_expires_at: Grant['expires_at'] | null;
  grant_redeemed_at: Grant['redeemed_at'];
  grant_revoked_at: Grant['revoked_at'];
  redeemed_by_key_id: Grant['redeemed_by_key_id'];
  redeemer_name: DB['api_keys']['name'] | null;
  /** `at` as JSON text */
  decisions: { reviewer: Decision['reviewer_email']; decision: Decision['decision']; reason: string; at: string }[];
  /** the database clock */
  now: Date;
};

/** Every approval request filed under some request references (of one organization, or any): one statement. */
export const selectIncidentApprovals = (
  refs: string[],
  organization: string | null,
  max: number,
) => sql<IncidentApprovalRow>`
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
  WHERE r.request_ref = ANY(${refs}::text[]) AND (${organization}::text IS NULL OR r.organization = ${organization}::text)
  ORDER BY r.created_at, r.id
  LIMIT ${max}::int`;

/** Grants redeemed under some request references (of one organization, or any). */
export const selectRedeemedGrants = (refs: string[], organization: string | null) =>
  kysely
    .selectFrom('grants as g')
    .innerJoin('approval_requests as r', 'r.id', 'g.approval_id')
    .select(['g.id', 'r.request_ref', 'g.server', 'g.tool_name'])
    .where((eb) => eb('r.request_ref', '=', eb.fn.any(eb.val(refs))))
    .where('g.redeemed_at', 'is not', null)
    .$if(organization !== null, (q) => q.where('r.organization', '=', organization!));

/** The policy rules of some servers. */
export const selectPolicyRules = (servers: string[]) =>
  kysely
    .selectFrom('policy_rules')
    .select(['server', 'tool_name as toolName', 'required_approvals as requiredApprovals'])
    .where((eb) => eb('server', '=', eb.fn.any(eb.val(servers))));

// One round trip, each branch an indexed lookup (an OR across the tables would scan).
/** The request reference of an approval request named by its reference, its id or its grant's id. */
export const selectApprovalRequestRef = (term: string, id: string | null, organization: string | null) => sql<
  Pick<Request, 'request_ref'>
>`
  SELECT request_ref FROM (
    (SELECT 1 AS priority, r.request_ref FROM approval_requests r
      WHERE r.request_ref = ${term} AND (${organization}::text IS NULL OR r.organization = ${organization}::text) LIMIT 1)
    UNION ALL
    (SELECT 2, r.request_ref FROM approval_requests r
      WHERE r.id = ${id}::uuid AND (${organization}::text IS NULL OR r.organization = ${organization}::text))
    UNION ALL
    (SELECT 3, r.request_ref FROM grants g JOIN approval_requests r ON r.id = g.approval_id
      WHERE g.id = ${id}::uuid AND (${organization}::text IS NULL OR r.organization = ${organization}::text))
  ) hits ORDER BY priority LIMIT 1`;
