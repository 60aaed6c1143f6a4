// When a failed delivery goes again (lib/backoff.ts, the one formula) and when it is dead. Pure.
import { backoffDelay } from '@/lib/backoff';

export type RetryPolicy = { maxAttempts: number; initialMs: number; maxMs: number; random?: () => number };

/** The longest Retry-After believed: a receiver cannot park a delivery for days. */
export const RETRY_AFTER_CAP_MS = 3_600_000;

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 10, initialMs: 5_000, maxMs: 3_600_000 };

/** Retry-After as milliseconds (seconds or an HTTP date), capped; undefined when absent or bad. */
export function retryAfterMs(header: string | undefined, now: number, capMs: number): number | undefined {
  if (!header) return undefined;
  const v = header.trim();
  const ms = /^\d+$/.test(v) ? Number(v) * 1000 : Date.parse(v) - now;
  return Number.isFinite(ms) && ms > 0 ? Math.min(ms, capMs) : undefined;
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

/** Whether an HTTP status is worth another attempt. */
export const retryable = (status: number) => status === 408 || status === 425 || status === 429 || status >= 500;

/** How long the outbox keeps settled events and their deliveries (Admin → Webhooks lists them). */
export const WEBHOOK_HISTORY_DAYS = 30;
