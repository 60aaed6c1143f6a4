import 'server-only';
import type { Selectable } from 'kysely';
import { sql, type DB } from '../db/kysely';

type Delivery = Selectable<DB['webhook_deliveries']>;

/**
 * The outbox write (webhook_enqueue, prisma/migrations/…_webhooks_outbox): run inside the
 * transaction of the change, after it; one statement for the events one change causes, in order.
 * `extra` adds event-specific identifiers (decision, reviewer, approvals counted).
 */
export const enqueueWebhookEvents = (approvalId: string, events: { type: string; extra?: Record<string, unknown> }[]) =>
  sql<{ n: number }>`
  SELECT count(webhook_enqueue(e.item->>'type', ${approvalId}::uuid, coalesce(e.item->'extra', '{}'::jsonb)) ORDER BY e.ord)::int AS n
  FROM jsonb_array_elements(${JSON.stringify(events)}::jsonb) WITH ORDINALITY AS e(item, ord)`;

export type ClaimedDelivery = Pick<Delivery, 'id' | 'attempts'> & {
  type: string;
  data: unknown;
  event_created_at: Date;
  url: string;
  format: 'slack' | 'standard';
  secret_box: string | null;
};

/**
 * Claims up to `limit` due deliveries of enabled endpoints for this worker: rows another worker
 * is claiming are skipped (SKIP LOCKED), a claimed row carries a lease that another worker may
 * take over only once it has run out (its holder died). Counts the attempt at the claim, so a
 * delivery that crashes its worker still reaches the dead letter.
 */
export const claimDeliveries = (token: string, limit: number, leaseMs: number) => sql<ClaimedDelivery>`
  WITH due AS (
    SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints p ON p.id = d.endpoint_id
    WHERE d.status = 'pending' AND d.next_attempt_at <= clock_timestamp()
      AND (d.lease_until IS NULL OR d.lease_until < clock_timestamp()) AND p.enabled
    ORDER BY d.next_attempt_at LIMIT ${limit}::int
    FOR UPDATE OF d SKIP LOCKED
  ), claimed AS (
    UPDATE webhook_deliveries d
    SET lease_token = ${token}::uuid, attempts = d.attempts + 1,
        lease_until = clock_timestamp() + make_interval(secs => ${leaseMs}::int / 1000.0)
    FROM due WHERE d.id = due.id
    RETURNING d.id, d.attempts, d.event_id, d.endpoint_id
  )
  SELECT c.id, c.attempts, e.type, e.data, e.created_at AS event_created_at, p.url, p.format, p.secret_box
  FROM claimed c JOIN webhook_events e ON e.id = c.event_id JOIN webhook_endpoints p ON p.id = c.endpoint_id`;

/** Delivered: only by the lease's holder. */
export const markDelivered = (id: string, token: string, status: number) => sql`
  UPDATE webhook_deliveries SET status = 'delivered', delivered_at = clock_timestamp(), last_status = ${status}::int,
    last_error = NULL, lease_until = NULL, lease_token = NULL
  WHERE id = ${id}::uuid AND lease_token = ${token}::uuid`;

/** Failed: again after `delayMs`, or the dead letter when `delayMs` is null. */
export const markFailed = (
  id: string,
  token: string,
  error: string,
  status: number | null,
  delayMs: number | null,
) => sql`
  UPDATE webhook_deliveries SET
    status = CASE WHEN ${delayMs}::int IS NULL THEN 'dead' ELSE 'pending' END::webhook_delivery_status,
    next_attempt_at = clock_timestamp() + make_interval(secs => coalesce(${delayMs}::int, 0) / 1000.0),
    last_error = ${error}, last_status = ${status}::int, lease_until = NULL, lease_token = NULL
  WHERE id = ${id}::uuid AND lease_token = ${token}::uuid`;

/** An admin's redeliver: due now with a fresh count of attempts, unless a worker holds it now. */
export const redeliver = (id: string) => sql<{ id: string; endpoint_id: string }>`
  UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = clock_timestamp(),
    lease_until = NULL, lease_token = NULL
  WHERE id = ${id}::uuid AND (lease_until IS NULL OR lease_until < clock_timestamp())
  RETURNING id, endpoint_id`;

/**
 * Up to `batch` settled events (no delivery still pending) created more than `days` ago, oldest
 * first; their deliveries go with them (the trigger webhook_events_cascade: no foreign key). Rows
 * another purge holds are skipped.
 */
export const purgeSettledEvents = (days: number, batch: number) => sql`
  WITH old AS (
    SELECT e.id FROM webhook_events e
    WHERE e.created_at < clock_timestamp() - make_interval(days => ${days}::int)
      AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status = 'pending')
    ORDER BY e.created_at LIMIT ${batch}::int
    FOR UPDATE SKIP LOCKED
  )
  DELETE FROM webhook_events e USING old WHERE e.id = old.id`;
