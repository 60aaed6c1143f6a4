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

/**
 * What an admin may set each budget to (`policy:set`, the Policy page; CHECK constraints on
 * policy_rules hold the same). At least one attempt and one call, or the guard would refuse the
 * first call outright, which is blocking, and policy says that already. The backoff base stays
 * within the ceiling it doubles towards, and above a few scheduler ticks, so a retry is spaced at all.
 */
export const BUDGET_BOUNDS: { readonly [K in keyof GuardBudgets]: { readonly min: number; readonly max: number } } = {
  failedAttempts: { min: 1, max: 1000 },
  calls: { min: 1, max: 100_000 },
  backoffBaseMs: { min: 100, max: BACKOFF_MAX_MS },
};

/** The budgets one policy rule sets; null inherits. */
export type BudgetOverrides = { [K in keyof GuardBudgets]: number | null };

export const BUDGET_KEYS = [
  'failedAttempts',
  'calls',
  'backoffBaseMs',
] as const satisfies readonly (keyof GuardBudgets)[];

/**
 * The budgets a tool works under: each one from the tool's rule, else the server's `*` rule, else
 * the default. Field by field, so a tool's rule that sets only its backoff keeps the server's call
 * budget.
 */
export function resolveBudgets(
  serverRule: BudgetOverrides | null | undefined,
  toolRule: BudgetOverrides | null | undefined,
): GuardBudgets {
  const pick = (key: keyof GuardBudgets) => toolRule?.[key] ?? serverRule?.[key] ?? DEFAULT_BUDGETS[key];
  return { failedAttempts: pick('failedAttempts'), calls: pick('calls'), backoffBaseMs: pick('backoffBaseMs') };
}
