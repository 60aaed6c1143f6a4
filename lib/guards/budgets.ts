// The budgets the guards enforce (docs/design.md "Guards at the point of execution"): how many
// failed attempts of one tool and how many calls one request reference may make, and the base of
// the bounded backoff between failed attempts. An admin sets them per server or tool (Policy
// page, `policy:set`); these are the defaults. Pure: the console, the gateway and lib/mcp share it.
import { backoffDelay } from '../backoff';

export type GuardBudgets = {
  /** Failed attempts of one tool in one request reference; the next one is refused. */
  failedAttempts: number;
  /** Calls of any tool of the server in one request reference; the next one is refused. */
  calls: number;
  /** The first wait after a failure; it doubles with each further failure, up to BACKOFF_MAX_MS. */
  backoffBaseMs: number;
};

export const DEFAULT_BUDGETS: GuardBudgets = { failedAttempts: 5, calls: 200, backoffBaseMs: 1000 };

/** The bounded backoff's ceiling. */
export const BACKOFF_MAX_MS = 60_000;

/** The wait required after the `failures`-th consecutive failure (1 → the base): the one backoff, without jitter. */
export function backoffMs(failures: number, baseMs: number): number {
  if (failures < 1) return 0;
  return backoffDelay(failures, { initialMs: baseMs, maxMs: BACKOFF_MAX_MS, jitter: [1, 1] });
}
