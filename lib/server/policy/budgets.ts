import 'server-only';
import { WHOLE_SERVER } from '@/lib/approvals/policy';
import { resolveBudgets, type BudgetOverrides, type GuardBudgets } from '@/lib/guards/budgets';

/** The columns of a policy rule that hold its budgets, as Prisma selects them. */
export const budgetColumns = { failedAttemptsBudget: true, callBudget: true, backoffBaseMs: true } as const;

type BudgetRow = { failedAttemptsBudget: number | null; callBudget: number | null; backoffBaseMs: number | null };

/** A rule's own budgets, null where it inherits. */
export const budgetsOf = (r: BudgetRow): BudgetOverrides => ({
  failedAttempts: r.failedAttemptsBudget,
  calls: r.callBudget,
  backoffBaseMs: r.backoffBaseMs,
});

/** The rows of a server's rules (any of them) resolved for one tool: its rule over the server's. */
export function budgetsFor(rules: readonly (BudgetRow & { toolName: string })[], tool: string): GuardBudgets {
  const serverRule = rules.find((r) => r.toolName === WHOLE_SERVER);
  const toolRule = tool === WHOLE_SERVER ? undefined : rules.find((r) => r.toolName === tool);
  return resolveBudgets(serverRule && budgetsOf(serverRule), toolRule && budgetsOf(toolRule));
}
