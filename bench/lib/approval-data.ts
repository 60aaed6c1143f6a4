// Approval requests for the approvals benchmark, written with set-based SQL that passes the
// approval triggers and CHECKs (prisma/migrations/*_approvals): requests are born pending, a
// reviewer's decision row is inserted while they are pending and unexpired, the request then moves
// to approved (the trigger counts the approvals) and gets its grant with the request's own binding.
// No audit entries are written for this staging; the benchmark's own redemptions append theirs.
import pg from 'pg';

// Write tools the demo agents stage (scripts/demo-outcomes.ts), with their advertised hints.
const TOOLS: [server: string, tool: string, destructive: boolean][] = [
  ['billing-mcp', 'refund_payment', true],
  ['billing-mcp', 'admin_refund_any', true],
  ['orders-mcp', 'cancel_order', true],
  ['orders-mcp', 'update_shipping_address', false],
  ['crm-mcp', 'add_customer_note', false],
];
const toolsSql = `(VALUES ${TOOLS.map(([s, t, d], i) => `(${i}, '${s}', '${t}', '{"readOnlyHint":false,"destructiveHint":${d},"idempotentHint":false,"openWorldHint":true}'::jsonb, ${s !== 'crm-mcp'})`).join(', ')}) AS t(k, server, tool, annotations, trusted)`;

// One request per n of generate_series; `$1` is the requesting key, `$2` the count, `$3` a tag.
const insertRequests = (requiredApprovals: string, expiresAt: string, createdAt: string) => `
  INSERT INTO approval_requests (request_ref, organization, principal, agent, server, tool_name, tool_annotations,
    annotations_trusted, args_digest, summary, resource_type, resource_id, required_approvals, status, expires_at,
    grant_ttl_seconds, requested_by_key_id, idempotency_key, request_hash, created_at)
  SELECT 'req_' || $3 || '_' || n, 'org-' || (n % 23), 'user_' || (n * 7919 % 20000), 'support-bot', t.server, t.tool,
    t.annotations, t.trusted, 'sha256:' || encode(sha256(convert_to($3 || '-args-' || n, 'UTF8')), 'hex'),
    CASE t.tool WHEN 'add_customer_note' THEN 'Add a note to customer ' || n ELSE initcap(replace(t.tool, '_', ' ')) || ' on order ' || (4000 + n) || ': ' || (n % 400) || '.00 EUR' END,
    'order', (4000 + n)::text, ${requiredApprovals}, 'pending', ${expiresAt}, 3600, $1::uuid, $3 || '-' || n,
    encode(sha256(convert_to($3 || '-body-' || n, 'UTF8')), 'hex'), ${createdAt}
  FROM generate_series(1, $2::int) AS n JOIN ${toolsSql} ON t.k = n % ${TOOLS.length}`;

export type StagedGrant = { id: string; server: string; tool: string; argsDigest: string };

/**
 * `count` requests needing one approval, approved by `reviewer`, each with a live grant (one hour).
 * Returns the grants in creation order.
 */
export async function stageApprovedGrants(
  client: pg.Client,
  opts: { keyId: string; reviewer: { id: string; email: string; principal: string }; count: number; tag: string },
): Promise<StagedGrant[]> {
  const { keyId, reviewer, count, tag } = opts;
  await client.query('BEGIN');
  try {
    await client.query(insertRequests('1', `now() + interval '2 hours'`, 'now()'), [keyId, count, tag]);
    await client.query(
      `INSERT INTO approval_decisions (approval_id, reviewer_id, reviewer_email, reviewer_principal, decision, reason)
       SELECT id, $2::uuid, $3, $4, 'approve', 'Checked the order and the amount' FROM approval_requests
       WHERE requested_by_key_id = $1::uuid AND idempotency_key LIKE $5 || '-%' AND status = 'pending'`,
      [keyId, reviewer.id, reviewer.email, reviewer.principal, tag],
    );
    await client.query(
      `UPDATE approval_requests SET status = 'approved', version = version + 1, decided_at = now()
       WHERE requested_by_key_id = $1::uuid AND idempotency_key LIKE $2 || '-%' AND status = 'pending'`,
      [keyId, tag],
    );
    const grants = await client.query<StagedGrant>(
      `INSERT INTO grants (approval_id, server, tool_name, args_digest, expires_at)
       SELECT id, server, tool_name, args_digest, now() + make_interval(secs => grant_ttl_seconds) FROM approval_requests
       WHERE requested_by_key_id = $1::uuid AND idempotency_key LIKE $2 || '-%' AND status = 'approved'
       ORDER BY created_at, id
       RETURNING id, server, tool_name AS tool, args_digest AS "argsDigest"`,
      [keyId, tag],
    );
    await client.query('COMMIT');
    if (grants.rowCount !== count) throw new Error(`staged ${grants.rowCount} grants, expected ${count}`);
    return grants.rows;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  }
}

/**
 * `count` pending requests as a busy queue holds them: expiring between 10 minutes and 24 hours from
 * now, created up to two hours ago, three in ten needing two approvals, and a third of those
 * already approved once by `reviewer` (a different person from the one who signs in).
 */
export async function stagePendingQueue(
  client: pg.Client,
  opts: { keyId: string; reviewer: { id: string; email: string; principal: string }; count: number; tag: string },
): Promise<void> {
  const { keyId, reviewer, count, tag } = opts;
  await client.query('BEGIN');
  try {
    await client.query(
      insertRequests(
        'CASE WHEN n % 10 < 3 THEN 2 ELSE 1 END',
        `now() + interval '10 minutes' + (n * 7907 % 86400) * interval '1 second' * (86400 - 600) / 86400`,
        `now() - (n * 6007 % 7200) * interval '1 second'`,
      ),
      [keyId, count, tag],
    );
    await client.query(
      `INSERT INTO approval_decisions (approval_id, reviewer_id, reviewer_email, reviewer_principal, decision, reason)
       SELECT id, $2::uuid, $3, $4, 'approve', 'Amount matches the ticket' FROM approval_requests
       WHERE requested_by_key_id = $1::uuid AND idempotency_key LIKE $5 || '-%' AND required_approvals = 2
         AND split_part(idempotency_key, '-', 2)::int % 3 = 0`,
      [keyId, reviewer.id, reviewer.email, reviewer.principal, tag],
    );
    await client.query(
      `UPDATE approval_requests r SET version = version + 1
       WHERE requested_by_key_id = $1::uuid AND idempotency_key LIKE $2 || '-%'
         AND EXISTS (SELECT 1 FROM approval_decisions d WHERE d.approval_id = r.id)`,
      [keyId, tag],
    );
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  }
}
