// When a failed delivery goes again (lib/backoff.ts, the one formula) and when it is dead. Pure.
import { backoffDelay } from '@/lib/backoff';
import { parseRetryAfter } from '@/lib/http-retry';

export type RetryPolicy = { maxAttempts: number; initialMs: number; maxMs: number; random?: () => number };

/** The longest Retry-After believed: a receiver cannot park a delivery for days. */
export const RETRY_AFTER_CAP_MS = 3_600_000;

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 10, initialMs: 5_000, maxMs: 3_600_000 };

/** A receiver's Retry-After (lib/http-retry.ts reads it) capped; undefined when absent, bad or no wait at all. */
export function retryAfterMs(header: string | undefined, now: number, capMs: number): number | undefined {
  const ms = parseRetryAfter(header, now);
  return ms ? Math.min(ms, capMs) : undefined;
}

export type AttemptOutcome =
  { ok: true; status: number } | { ok: false; retry: boolean; error: string; status?: number; retryAfterMs?: number };

/** After attempt `attempts` (from 1) failed: the wait before the next, or null for the dead letter. */
export function nextDelay(attempts: number, outcome: Extract<AttemptOutcome, { ok: false }>, p: RetryPolicy) {
  if (!outcome.retry || attempts >= p.maxAttempts) return null;
  const backoff = backoffDelay(attempts, {
    initialMs: p.initialMs,
    maxMs: p.maxMs,
    jitter: [0.5, 1],
    random: p.random,
  });
  return Math.max(backoff, outcome.retryAfterMs ?? 0);
}

/** How long the outbox keeps settled events and their deliveries (Admin → Webhooks lists them). */
export const WEBHOOK_HISTORY_DAYS = 30;
