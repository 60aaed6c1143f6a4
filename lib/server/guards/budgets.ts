import 'server-only';
import { DEFAULT_BUDGETS, type GuardBudgets } from '@/lib/guards/budgets';

/** The budgets of one server's tool. Admin-set budgets come from the policy rules (lib/server/policy/budgets.ts guardBudgets); until then, the defaults. */
export async function budgetsFor(_server: string, _tool: string): Promise<GuardBudgets> {
  return DEFAULT_BUDGETS;
}
