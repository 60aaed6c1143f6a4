// Large data for bench:scale and bench:ui, written by the database itself (INSERT … SELECT over
// generate_series): outcome records over monthly partitions, and a queue of pending approval
// requests. Both pass the schema's triggers and checks.
import type pg from 'pg';
import { int, log } from './report';

/** The API key the loaded records carry (no key row: nothing reads one for them). */
export const LOADED_KEY = '00000000-0000-4000-8000-000000000001';
const CHUNK = 1_000_000;

const monthStart = (d: Date, add: number) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + add, 1));

/** `count` monthly partitions from `back` months ago; answers the first month's start. */
export async function ensureMonths(c: pg.Client, back: number, count: number): Promise<Date> {
  const now = (await c.query<{ now: Date }>('SELECT now() AS now')).rows[0].now;
  const first = monthStart(now, -back);
  await c.query('SELECT outcome_records_ensure_partitions($1, $2, $3)', [
    first,
    monthStart(now, count - back),
    'month',
  ]);
  return first;
}

/**
 * Records [from, to) named `<prefix><i>`, received in order over [start, start + spanSeconds), four
 * to a request reference (`<prefix>req-<i/4>`), over 10 organizations, 1,000 principals, 20 servers
 * and 50 tools; one in 7 rejected, one in 11 of the rest an unknown write. The uniqueness trigger
 * is off while loading (the ids are unique by construction) and the same statement writes the
 * event-id claims it would have made. Then the kept counts are folded, as the console's minute job does.
 */
export async function loadOutcomes(c: pg.Client, to: number, start: Date, spanSeconds: number, prefix: string) {
  await c.query('ALTER TABLE outcome_records DISABLE TRIGGER outcome_records_event_unique');
  for (let a = 0; a < to; a += CHUNK) {
    const b = Math.min(to, a + CHUNK);
    const t0 = Date.now();
    await c.query(
      `WITH loaded AS (
       INSERT INTO outcome_records (api_key_id, event_id, occurred_at, request_ref, organization, principal, server,
         tool_name, observed, boundary, delivery, category, retry, read_only, what_happened, next_step,
         classifier_version, annotations_trusted, content_hash, received_at, summary, duration_ms)
       SELECT $1::uuid, $5 || i, t - interval '1 second', $5 || 'req-' || (i / 4), 'org-' || (i % 10),
         'user_' || (i % 1000), 'mcp-' || (i % 20), 'tool_' || (i % 50),
         CASE WHEN unknown THEN '{"sent":true,"clientError":"timeout"}' ELSE '{"sent":true,"httpStatus":200}' END::jsonb,
         CASE WHEN unknown THEN 'client' ELSE 'none' END::outcome_boundary,
         CASE WHEN i % 7 = 0 THEN 'rejected' WHEN unknown THEN 'unknown' ELSE 'completed' END::outcome_delivery,
         CASE WHEN i % 7 = 0 THEN 'forbidden' WHEN unknown THEN 'timeout' ELSE 'ok' END::outcome_category,
         CASE WHEN unknown THEN 'after_state_check' ELSE 'no' END::outcome_retry, NOT unknown,
         CASE WHEN unknown THEN 'No answer came: the write may or may not have happened.' ELSE 'The tool answered.' END,
         CASE WHEN unknown THEN 'Check the state before retrying.' ELSE 'Nothing to do.' END,
         1, true, md5(i::text), t, 'Looked up order ' || i, 40 + i % 200
       FROM generate_series($2::bigint, $3::bigint - 1) i,
         LATERAL (SELECT $4::timestamptz + ((i * 7919) % $6::bigint) * interval '1 second' AS t,
                         i % 7 <> 0 AND i % 11 = 0 AS unknown) x
       ORDER BY t
       RETURNING api_key_id, event_id, organization, id, received_at)
       INSERT INTO outcome_event_ids (api_key_id, event_id, organization, record_id, received_at)
       SELECT * FROM loaded ORDER BY received_at`,
      [LOADED_KEY, a, b, start, prefix, spanSeconds],
    );
    log(`  loaded ${int(b)} of ${int(to)} (${int((b - a) / ((Date.now() - t0) / 1000))} rows/s)`);
  }
  await c.query('ALTER TABLE outcome_records ENABLE TRIGGER outcome_records_event_unique');
  await c.query('SELECT outcome_counts_fold()');
}

/**
 * VACUUM ANALYZE of the records and the kept counts (whose fold leaves the rows it replaced dead
 * until vacuum), then a checkpoint: a serving console's autovacuum has long done both, and
 * neither may land in a measurement.
 */
export async function settle(c: pg.Client): Promise<void> {
  await c.query('VACUUM ANALYZE outcome_records, outcome_event_ids, outcome_counts, outcome_tool_counts');
  await c.query('CHECKPOINT').catch(() => {}); // needs superuser or pg_checkpoint: best effort
}

/**
 * `count` pending requests needing one approval each, requested by `keyId`, created over the last
 * two hours and expiring over the next day, as a busy queue holds them.
 */
export async function stagePending(c: pg.Client, keyId: string, count: number): Promise<void> {
  await c.query(
    `INSERT INTO approval_requests (request_ref, organization, principal, agent, server, tool_name, tool_annotations,
       annotations_trusted, args_digest, summary, resource_type, resource_id, required_approvals, status, expires_at,
       grant_ttl_seconds, requested_by_key_id, idempotency_key, request_hash, created_at)
     SELECT 'req_queue_' || n, 'org-' || (n % 23), 'user_' || (n * 7919 % 20000), 'support-bot', 'billing-mcp',
       'refund_payment', '{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":false,"openWorldHint":true}',
       true, 'sha256:' || encode(sha256(convert_to('args-' || n, 'UTF8')), 'hex'),
       'Refund payment on order ' || (4000 + n) || ': ' || (n % 400) || '.00 EUR', 'order', (4000 + n)::text, 1,
       'pending', now() + interval '10 minutes' + (n * 7907 % 86400) * interval '1 second', 3600, $1::uuid,
       'queue-' || n, encode(sha256(convert_to('body-' || n, 'UTF8')), 'hex'), now() - (n * 6007 % 7200) * interval '1 second'
     FROM generate_series(1, $2::int) AS n`,
    [keyId, count],
  );
  await c.query('VACUUM ANALYZE approval_requests');
}
