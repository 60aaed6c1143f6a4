// Exponential backoff with jitter, the one formula for every retry loop (the agent's calls,
// polls and reports in lib/mcp; the console's notifications). Pure: randomness comes in.
//
//   attempt n (from 1) waits  min(maxMs, min(maxMs, initialMs · 2^(n−1)) · f),  in whole milliseconds,
//   f = low + random() · (high − low)
//
// With `jitter` [1, 1.5] (the default) each wait is longer than the one before until the cap; with
// [0.5, 1] waits spread below the doubling, never above it.
export type BackoffOptions = {
  initialMs: number;
  maxMs: number;
  /** The range the doubled delay is scaled by, chosen by `random()`. */
  jitter?: readonly [low: number, high: number];
  random?: () => number;
};

export const GROWING_JITTER = [1, 1.5] as const;

/** The wait before attempt `attempt + 1`, after `attempt` failed ones. */
export function backoffDelay(attempt: number, options: BackoffOptions): number {
  const { initialMs, maxMs, jitter: [low, high] = GROWING_JITTER, random = Math.random } = options;
  const doubled = Math.min(maxMs, initialMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(Math.min(maxMs, doubled * (low + random() * (high - low))));
}
