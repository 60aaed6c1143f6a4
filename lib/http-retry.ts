// When an HTTP answer is worth another attempt, and how long it asks the caller to wait: for the
// webhook sender (lib/webhooks/retry.ts) and the agent package (lib/mcp/countersign-http.ts) alike.
// Pure and without imports: lib/mcp is bundled into a package of its own (scripts/pack-mcp.ts).

/**
 * Whether an HTTP status is worth another attempt: 408 Request Timeout, 425 Too Early, 429 Too
 * Many Requests and every 5xx. Any other answer will be the same the next time.
 */
export const isRetryableStatus = (status: number): boolean =>
  status === 408 || status === 425 || status === 429 || status >= 500;

/**
 * Retry-After (RFC 9110, section 10.2.3) as milliseconds from `now`: delay-seconds, or an HTTP-date
 * (what Date.parse reads). Never negative: 0 for a date already past. Not capped: a caller that
 * must not wait for days applies its own ceiling (an absurdly long number of seconds is Infinity).
 * Undefined when the header is absent, empty or unreadable.
 */
export function parseRetryAfter(header: string | null | undefined, now: number): number | undefined {
  if (!header) return undefined;
  const value = header.trim();
  const ms = /^\d+$/.test(value) ? Number(value) * 1000 : Date.parse(value) - now;
  return Number.isNaN(ms) ? undefined : Math.max(0, ms);
}
