// resolveBudgets: each budget from the tool's rule, else the server's `*` rule, else the default
// (5 failed attempts, 200 calls, 1000 ms), field by field. Expectations written by hand.
import { describe, expect, it } from 'vitest';
import { resolveBudgets, type BudgetOverrides } from './budgets';

const rule = (failedAttempts: number | null, calls: number | null, backoffBaseMs: number | null): BudgetOverrides => ({
  failedAttempts,
  calls,
  backoffBaseMs,
});
const none = rule(null, null, null);

describe('resolveBudgets', () => {
  const table: [string, BudgetOverrides | null, BudgetOverrides | null, [number, number, number]][] = [
    ['no rules: the defaults', null, null, [5, 200, 1000]],
    ['rules that set nothing: the defaults', none, none, [5, 200, 1000]],
    ['the server rule alone', rule(3, 50, 2000), null, [3, 50, 2000]],
    ['the tool rule alone', null, rule(7, 300, 500), [7, 300, 500]],
    ['the tool rule over the server rule', rule(3, 50, 2000), rule(7, 300, 500), [7, 300, 500]],
    ['field by field: the tool sets one, the server another', rule(null, 50, null), rule(2, null, null), [2, 50, 1000]],
    ['the tool sets one; the server the rest', rule(3, 50, 2000), rule(null, null, 250), [3, 50, 250]],
    ['a tool rule that sets nothing inherits all', rule(3, 50, 2000), none, [3, 50, 2000]],
    ['the bounds themselves pass through', rule(1, 1, 100), rule(1000, 100000, 60000), [1000, 100000, 60000]],
  ];
  it.each(table)('%s', (_, serverRule, toolRule, [failedAttempts, calls, backoffBaseMs]) => {
    expect(resolveBudgets(serverRule, toolRule)).toEqual({ failedAttempts, calls, backoffBaseMs });
  });

  it('never hands out the shared defaults object', () => {
    const a = resolveBudgets(null, null);
    a.calls = 1;
    expect(resolveBudgets(undefined, undefined).calls).toBe(200);
  });
});
