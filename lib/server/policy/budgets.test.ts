// The guards' budgets on policy rules (docs/design.md "Guards at the point of execution"), as
// `policy:set` and the Policy page write them through setPolicyRule, read back as the guards and
// policy/evaluate resolve them (budgetsFor). Defaults: 5 failed attempts, 200 calls, a 1000 ms backoff base.
import { beforeAll, describe, expect, it } from 'vitest';
import { db } from '../db/db';
import { budgetColumns, budgetsFor } from './budgets';
import { deletePolicyRule, setPolicyRule } from './policy-rules';
import { makeUser, uniq, value } from '@/testing/factories';
import { policyRuleSchema } from '@/lib/approvals/schemas';
import type { Viewer } from '@/lib/auth/permissions';

let admin: Viewer;
let otherAdmin: Viewer;
let reviewer: Viewer;
beforeAll(async () => {
  [admin, otherAdmin, reviewer] = await Promise.all([makeUser('admin'), makeUser('admin'), makeUser('reviewer')]);
});

const stored = (id: string) =>
  db.$queryRaw<
    {
      required_approvals: number;
      show_fields: string[] | null;
      failed_attempts_budget: number | null;
      call_budget: number | null;
      backoff_base_ms: number | null;
    }[]
  >`SELECT required_approvals, show_fields, failed_attempts_budget, call_budget, backoff_base_ms
    FROM policy_rules WHERE id = ${id}::uuid`;
/** A tool's budgets as its server's rules set them. */
async function guardBudgets(server: string, tool: string) {
  const rules = await db.policyRule.findMany({
    where: { server, toolName: { in: [tool, '*'] } },
    select: { toolName: true, ...budgetColumns },
  });
  return budgetsFor(rules, tool);
}

const auditOf = (id: string) =>
  db.auditEntry.findMany({
    where: { targetType: 'policy_rule', targetId: id },
    orderBy: { seq: 'asc' },
    select: { action: true, data: true },
  });

describe('guardBudgets', () => {
  it('answers the defaults where no rule sets a budget', async () => {
    const server = uniq('bud-none');
    expect(await guardBudgets(server, 'refund_payment')).toEqual({
      failedAttempts: 5,
      calls: 200,
      backoffBaseMs: 1000,
    });
    // A rule about approvals alone sets no budget.
    value(await setPolicyRule(admin, { server, tool: 'refund_payment', requiredApprovals: 2 }));
    expect(await guardBudgets(server, 'refund_payment')).toEqual({
      failedAttempts: 5,
      calls: 200,
      backoffBaseMs: 1000,
    });
  });

  it("inherits field by field: the tool's rule, then the server's, then the defaults", async () => {
    const server = uniq('bud-inherit');
    value(await setPolicyRule(admin, { server, tool: null, requiredApprovals: 1, calls: 50, backoffBaseMs: 2000 }));
    value(await setPolicyRule(admin, { server, tool: 'refund_payment', requiredApprovals: 2, failedAttempts: 2 }));
    value(await setPolicyRule(admin, { server, tool: 'get_order', requiredApprovals: 0, backoffBaseMs: 250 }));
    expect(await guardBudgets(server, 'refund_payment')).toEqual({ failedAttempts: 2, calls: 50, backoffBaseMs: 2000 });
    expect(await guardBudgets(server, 'get_order')).toEqual({ failedAttempts: 5, calls: 50, backoffBaseMs: 250 });
    expect(await guardBudgets(server, 'list_refunds')).toEqual({ failedAttempts: 5, calls: 50, backoffBaseMs: 2000 });
    // Another server's rules never count.
    expect(await guardBudgets(uniq('bud-other'), 'refund_payment')).toEqual({
      failedAttempts: 5,
      calls: 200,
      backoffBaseMs: 1000,
    });
  });
});

describe('setPolicyRule: budgets', () => {
  it('sets them alone on a rule that exists, keeps them when not given, clears them with null, audits each change', async () => {
    const server = uniq('bud-set');
    const tool = 'refund_payment';
    const created = value(
      await setPolicyRule(admin, { server, tool, requiredApprovals: 1, show: ['amount'], failedAttempts: 3 }),
    );
    expect(created.budgets).toEqual({ failedAttempts: 3, calls: null, backoffBaseMs: null });

    // Budgets alone: the requirement and the fields shown stay.
    const changed = value(await setPolicyRule(admin, { server, tool, calls: 40, backoffBaseMs: 500 }));
    expect(changed).toMatchObject({ id: created.id, requiredApprovals: 1, showFields: ['amount'] });
    expect(changed.budgets).toEqual({ failedAttempts: 3, calls: 40, backoffBaseMs: 500 });
    // The requirement alone: the budgets stay.
    const stricter = value(await setPolicyRule(admin, { server, tool, requiredApprovals: 2 }));
    expect(stricter.budgets).toEqual({ failedAttempts: 3, calls: 40, backoffBaseMs: 500 });
    // The same again changes nothing, and is not audited.
    value(await setPolicyRule(admin, { server, tool, calls: 40, failedAttempts: 3 }));
    // Cleared: inherited again.
    const cleared = value(await setPolicyRule(admin, { server, tool, failedAttempts: null, calls: null }));
    expect(cleared.budgets).toEqual({ failedAttempts: null, calls: null, backoffBaseMs: 500 });
    expect(await stored(created.id)).toEqual([
      {
        required_approvals: 2,
        show_fields: ['amount'],
        failed_attempts_budget: null,
        call_budget: null,
        backoff_base_ms: 500,
      },
    ]);
    expect(await guardBudgets(server, tool)).toEqual({ failedAttempts: 5, calls: 200, backoffBaseMs: 500 });

    expect(await auditOf(created.id)).toEqual([
      {
        action: 'policy.create',
        data: { server, tool, requiredApprovals: 1, showFields: ['amount'], budgets: { failedAttempts: 3 } },
      },
      {
        action: 'policy.change',
        data: {
          server,
          tool,
          budgets: { calls: { from: null, to: 40 }, backoffBaseMs: { from: null, to: 500 } },
        },
      },
      { action: 'policy.change', data: { server, tool, from: 1, to: 2 } },
      {
        action: 'policy.change',
        data: {
          server,
          tool,
          budgets: { failedAttempts: { from: 3, to: null }, calls: { from: 40, to: null } },
        },
      },
    ]);
  });

  it('sets them on a whole-server rule, and says which a deleted rule set', async () => {
    const server = uniq('bud-server');
    const rule = value(await setPolicyRule(admin, { server, tool: null, requiredApprovals: 0, calls: 1000 }));
    expect(rule).toMatchObject({ tool: null, budgets: { failedAttempts: null, calls: 1000, backoffBaseMs: null } });
    expect(await guardBudgets(server, 'anything')).toEqual({ failedAttempts: 5, calls: 1000, backoffBaseMs: 1000 });
    value(await deletePolicyRule(admin, rule.id));
    expect((await auditOf(rule.id)).at(-1)).toEqual({
      action: 'policy.delete',
      data: { server, tool: null, requiredApprovals: 0, budgets: { calls: 1000 } },
    });
    expect(await guardBudgets(server, 'anything')).toEqual({ failedAttempts: 5, calls: 200, backoffBaseMs: 1000 });
  });

  it('refuses budgets alone where no rule exists, and people who are not admins', async () => {
    const server = uniq('bud-bad');
    expect(await setPolicyRule(admin, { server, tool: 'refund_payment', calls: 10 })).toMatchObject({
      ok: false,
      failure: 'not_found',
      detail: `No rule for refund_payment on ${server} yet: say the approvals it needs too.`,
    });
    expect(await setPolicyRule(reviewer, { server, tool: null, requiredApprovals: 1, calls: 10 })).toMatchObject({
      ok: false,
      failure: 'forbidden',
    });
    expect(await db.policyRule.count({ where: { server } })).toBe(0);
  });

  it('concurrent changes of one rule: the last write wins, nothing else of the rule is lost, one audit entry each', async () => {
    const server = uniq('bud-race');
    const tool = 'refund_payment';
    const rule = value(
      await setPolicyRule(admin, {
        server,
        tool,
        requiredApprovals: 2,
        show: ['amount', 'currency'],
        backoffBaseMs: 300,
      }),
    );
    const values = [10, 20, 30, 40, 50, 60];
    const results = await Promise.all([
      ...values.map((calls, i) => setPolicyRule(i % 2 ? otherAdmin : admin, { server, tool, calls })),
      setPolicyRule(otherAdmin, { server, tool, failedAttempts: 9 }),
    ]);
    for (const r of results) expect(r.ok).toBe(true);

    const changes = (await auditOf(rule.id)).slice(1);
    expect(changes).toHaveLength(7);
    // Serialized by the row lock: each change starts from what the one before it left.
    const callChanges = changes
      .map((c) => (c.data as { budgets: { calls?: { from: number | null; to: number } } }).budgets.calls)
      .filter((c) => c !== undefined);
    expect(callChanges).toHaveLength(6);
    expect(callChanges[0].from).toBeNull();
    for (let i = 1; i < callChanges.length; i++) expect(callChanges[i].from).toBe(callChanges[i - 1].to);
    expect(callChanges.map((c) => c.to).sort((a, b) => a - b)).toEqual(values);

    const last = callChanges.at(-1)!.to;
    expect(await stored(rule.id)).toEqual([
      {
        required_approvals: 2,
        show_fields: ['amount', 'currency'],
        failed_attempts_budget: 9,
        call_budget: last,
        backoff_base_ms: 300,
      },
    ]);
    expect(await guardBudgets(server, tool)).toEqual({ failedAttempts: 9, calls: last, backoffBaseMs: 300 });
  });
});

describe('the bounds', () => {
  const parse = (budgets: Record<string, unknown>) =>
    policyRuleSchema.safeParse({ server: 'billing-mcp', requiredApprovals: 1, ...budgets });
  const issue = (budgets: Record<string, unknown>) => {
    const r = parse(budgets);
    return r.success ? null : r.error.issues.map((i) => `${String(i.path[0])}: ${i.message}`);
  };

  it('takes whole numbers within them, typed or not, and blank or null as inherit', () => {
    const ok = (budgets: Record<string, unknown>) => {
      const r = parse(budgets);
      if (!r.success) throw new Error(JSON.stringify(r.error.issues));
      return { failedAttempts: r.data.failedAttempts, calls: r.data.calls, backoffBaseMs: r.data.backoffBaseMs };
    };
    expect(ok({ failedAttempts: '1', calls: '100000', backoffBaseMs: ' 60000 ' })).toEqual({
      failedAttempts: 1,
      calls: 100000,
      backoffBaseMs: 60000,
    });
    expect(ok({ failedAttempts: 1000, calls: 1, backoffBaseMs: 100 })).toEqual({
      failedAttempts: 1000,
      calls: 1,
      backoffBaseMs: 100,
    });
    expect(ok({ failedAttempts: '', calls: null, backoffBaseMs: '  ' })).toEqual({
      failedAttempts: null,
      calls: null,
      backoffBaseMs: null,
    });
    expect(ok({})).toEqual({ failedAttempts: undefined, calls: undefined, backoffBaseMs: undefined });
  });

  it('refuses anything else, naming the field', () => {
    const attempts = 'failedAttempts: must be a whole number from 1 to 1000 (empty: inherit)';
    const calls = 'calls: must be a whole number from 1 to 100000 (empty: inherit)';
    const backoff = 'backoffBaseMs: must be a whole number from 100 to 60000 (empty: inherit)';
    expect(issue({ failedAttempts: '0' })).toEqual([attempts]);
    expect(issue({ failedAttempts: '1001' })).toEqual([attempts]);
    expect(issue({ failedAttempts: '-1' })).toEqual([attempts]);
    expect(issue({ failedAttempts: '2.5' })).toEqual([attempts]);
    expect(issue({ failedAttempts: 2.5 })).toEqual([attempts]);
    expect(issue({ failedAttempts: 'five' })).toEqual([attempts]);
    expect(issue({ calls: '100001' })).toEqual([calls]);
    expect(issue({ calls: '1e3' })).toEqual([calls]);
    expect(issue({ calls: '99999999999999999999999' })).toEqual([calls]);
    expect(issue({ calls: Number.NaN })).toEqual([calls]);
    expect(issue({ backoffBaseMs: '99' })).toEqual([backoff]);
    expect(issue({ backoffBaseMs: '60001' })).toEqual([backoff]);
    expect(issue({ backoffBaseMs: true })).toEqual([backoff]);
  });

  it('hold in the database too, whoever writes', async () => {
    const rule = value(
      await setPolicyRule(admin, { server: uniq('bud-check'), tool: 'refund_payment', requiredApprovals: 1 }),
    );
    for (const [column, v] of [
      ['failed_attempts_budget', 0],
      ['failed_attempts_budget', 1001],
      ['call_budget', 0],
      ['call_budget', 100001],
      ['backoff_base_ms', 99],
      ['backoff_base_ms', 60001],
    ] as const) {
      await expect(
        db.$executeRawUnsafe(`UPDATE policy_rules SET ${column} = $1 WHERE id = $2::uuid`, v, rule.id),
        `${column} = ${v}`,
      ).rejects.toThrow(/check/i);
    }
  });
});
