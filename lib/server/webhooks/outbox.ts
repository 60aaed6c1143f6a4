import 'server-only';
import type pg from 'pg';
import { pool } from '../db/db';
import { affected, rows } from '../db/kysely';
import { claimDeliveries, markDelivered, markFailed, purgeSettledEvents, type ClaimedDelivery } from './sql';

// The worker's side of the outbox (lib/server/webhooks/worker.ts): claim, then record the outcome
// while holding the claim's lease. The system's own work, so no authorize(): nobody calls it.
export type { ClaimedDelivery };

export const claimDue = (token: string, limit: number, leaseMs: number, on: pg.Pool = pool()) =>
  rows(claimDeliveries(token, limit, leaseMs), on);

export const recordDelivered = (id: string, token: string, status: number, on: pg.Pool = pool()) =>
  affected(markDelivered(id, token, status), on);

export const recordFailed = (
  id: string,
  token: string,
  error: string,
  status: number | null,
  delayMs: number | null,
  on: pg.Pool = pool(),
) => affected(markFailed(id, token, error, status, delayMs), on);

/**
 * The outbox's history past `days` (delivered and dead letters alike, never one still pending),
 * deleted a batch at a time so no statement holds many rows; returns how many events went.
 */
export async function purgeWebhookHistory(days: number, batch = 1_000, on: pg.Pool = pool()): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await affected(purgeSettledEvents(days, batch), on);
    total += n;
    if (n < batch) return total;
  }
}
