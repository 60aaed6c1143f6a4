import 'server-only';
import { db, type Tx } from '../db/db';
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

/**
 * The budgets the guards hold one tool of one server to (docs/design.md "Guards at the point of
 * execution"): both rules that may set them, in one query. Read inside the caller's transaction
 * when given one, so a guard's decision and the budgets it used agree.
 */
export async function guardBudgets(server: string, tool: string, on: Tx = db): Promise<GuardBudgets> {
  const rules = await on.policyRule.findMany({
    where: { server, toolName: { in: [tool, WHOLE_SERVER] } },
    select: { toolName: true, ...budgetColumns },
  });
  return budgetsFor(rules, tool);
}
