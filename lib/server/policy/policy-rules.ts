import 'server-only';
import { db, type Tx } from '../db/db';
import { isRecordNotFound } from '../db/errors';
import { appendAudit } from '../audit/audit';
import { affected, first } from '../db/kysely';
import { lockPolicyRule, setShowFields } from './sql';
import { budgetColumns, budgetsFor, budgetsOf } from './budgets';
import { pinDefinitions } from '../catalog/catalog';
import { unreviewable } from '@/lib/catalog/schemas';
import { Prisma } from '@/lib/generated/prisma/client';
import { authorize } from '@/lib/auth/permissions';
import { auditName, type Actor } from '@/lib/auth/actor';
import {
  believedHints,
  policyBasisText,
  requiredApprovalsFor,
  requirementOf,
  WHOLE_SERVER,
  type PolicyVerdict,
  type RequiredApprovals,
} from '@/lib/approvals/policy';
import { isUuid, type PolicyEvaluateBody, type PolicyRuleInput } from '@/lib/approvals/schemas';
import type { ToolAnnotations } from '@/lib/outcomes/schemas';
import { BUDGET_KEYS, type BudgetOverrides, type GuardBudgets } from '@/lib/guards/budgets';
import { fail, ok, type Result } from '@/lib/result';

/** An admin's rule: `tool` null means every tool of the server. */
export type PolicyRuleView = {
  id: string;
  server: string;
  tool: string | null;
  requiredApprovals: number;
  /** Not exposed at all; `requiredApprovals` is then 2. */
  blocked: boolean;
  /** The argument fields the queue row shows for this tool; null: the first scalar fields. */
  showFields: string[] | null;
  /** The guards' budgets this rule sets; null where it inherits (lib/guards/budgets.ts). */
  budgets: BudgetOverrides;
  createdBy: string;
  createdAt: Date;
};

const ruleSelect = {
  id: true,
  server: true,
  toolName: true,
  requiredApprovals: true,
  blocked: true,
  showFields: true,
  ...budgetColumns,
  createdBy: true,
  createdAt: true,
} satisfies Prisma.PolicyRuleSelect;
// No fields named reads as null, however the column holds it.
const shown = (fields: readonly string[] | null | undefined) => (fields?.length ? [...fields] : null);
const sameFields = (a: readonly string[] | null, b: readonly string[] | null) =>
  (a ?? []).join('\u0000') === (b ?? []).join('\u0000');
// The budgets a rule sets, for its audit entries: the inherited ones left out.
const setBudgets = (b: BudgetOverrides) =>
  Object.fromEntries(BUDGET_KEYS.filter((k) => b[k] !== null).map((k) => [k, b[k]])) as Partial<GuardBudgets>;
// Each budget as the columns name it.
const budgetData = (b: Partial<BudgetOverrides>) => ({
  ...(b.failedAttempts !== undefined ? { failedAttemptsBudget: b.failedAttempts } : {}),
  ...(b.calls !== undefined ? { callBudget: b.calls } : {}),
  ...(b.backoffBaseMs !== undefined ? { backoffBaseMs: b.backoffBaseMs } : {}),
});
const toView = (r: Prisma.PolicyRuleGetPayload<{ select: typeof ruleSelect }>): PolicyRuleView => ({
  id: r.id,
  server: r.server,
  tool: r.toolName === WHOLE_SERVER ? null : r.toolName,
  requiredApprovals: r.requiredApprovals,
  blocked: r.blocked,
  showFields: shown(r.showFields),
  budgets: budgetsOf(r),
  createdBy: r.createdBy,
  createdAt: r.createdAt,
});

// Policy is no secret: reviewers may see why a request needs two of them.
export async function listPolicyRules(viewer: Actor): Promise<Result<PolicyRuleView[]>> {
  if (!authorize(viewer, 'approvals.read')) return fail('forbidden');
  const rules = await db.policyRule.findMany({
    select: ruleSelect,
    orderBy: [{ server: 'asc' }, { toolName: 'asc' }],
    take: 1000,
  });
  return ok(rules.map(toView));
}

/**
 * What `policy:set` and the Policy page write. Without `requiredApprovals` only the fields shown
 * and the budgets change, on a rule that exists; without `show` they stay as they are (an empty
 * list clears them), and so does each budget left out (null clears it back to inherited).
 */
export type PolicyRuleChange = Omit<PolicyRuleInput, 'requiredApprovals'> &
  Partial<Pick<PolicyRuleInput, 'requiredApprovals'>>;

/** Creates or changes the rule for (server, tool); the same value again changes nothing. */
export async function setPolicyRule(actor: Actor, input: PolicyRuleChange): Promise<Result<PolicyRuleView>> {
  if (!authorize(actor, 'policy.manage')) return fail('forbidden');
  const show = input.show === undefined ? undefined : shown(input.show);
  // Arguments differ from tool to tool: the fields a queue row shows are named per tool.
  if (show && input.tool === null)
    return fail('invalid_input', 'The fields shown in the queue are named for one tool: name the tool too.', [
      { path: 'show', message: 'needs a tool: the fields shown are named for one tool' },
    ]);
  const actorName = auditName(actor);
  const toolName = input.tool ?? WHOLE_SERVER;
  const audit = { server: input.server, tool: input.tool };
  const given = input.requiredApprovals;
  const blocked = given === 'blocked';
  const requiredApprovals = blocked ? 2 : (given as number);
  const budgetsGiven: Partial<BudgetOverrides> = Object.fromEntries(
    BUDGET_KEYS.filter((k) => input[k] !== undefined).map((k) => [k, input[k]]),
  );
  return db.$transaction(async (tx) => {
    if (given !== undefined) {
      // ON CONFLICT DO NOTHING: a rule made a moment ago by another admin is changed below.
      const [inserted] = await tx.policyRule.createManyAndReturn({
        data: [
          {
            server: input.server,
            toolName,
            requiredApprovals,
            blocked,
            createdBy: actorName,
            showFields: show ?? undefined,
            ...budgetData(budgetsGiven),
          },
        ],
        skipDuplicates: true,
        select: ruleSelect,
      });
      if (inserted) {
        const budgets = setBudgets(budgetsOf(inserted));
        await appendAudit(tx, {
          actor: actorName,
          action: 'policy.create',
          targetType: 'policy_rule',
          targetId: inserted.id,
          data: {
            ...audit,
            requiredApprovals: requirementOf({ requiredApprovals, blocked }),
            ...(show ? { showFields: show } : {}),
            ...(Object.keys(budgets).length ? { budgets } : {}),
          },
        });
        return ok(toView(inserted));
      }
    }
    // It exists (perhaps since a moment ago): lock it, so two admins changing it at once serialize.
    const before = await first(lockPolicyRule(input.server, toolName), tx);
    if (!before)
      return given === undefined
        ? fail(
            'not_found',
            `No rule for ${input.tool ? `${input.tool} on ` : 'every tool of '}${input.server} yet: say the approvals it needs too.`,
            [{ path: 'requiredApprovals', message: 'is required for a new rule (0, 1, 2 or blocked)' }],
          )
        : fail('conflict', 'This rule was deleted at the same moment; try again.');
    const was = requirementOf({ requiredApprovals: before.required_approvals, blocked: before.blocked });
    const to = given === undefined ? was : requirementOf({ requiredApprovals, blocked });
    const wasShown = shown(before.show_fields);
    const toShown = show === undefined ? wasShown : show;
    const requirementChanged = was !== to;
    const showChanged = !sameFields(wasShown, toShown);
    const wasBudgets = budgetsOf({
      failedAttemptsBudget: before.failed_attempts_budget,
      callBudget: before.call_budget,
      backoffBaseMs: before.backoff_base_ms,
    });
    const budgetChanges = BUDGET_KEYS.filter((k) => budgetsGiven[k] !== undefined && budgetsGiven[k] !== wasBudgets[k]);
    if (!requirementChanged && !showChanged && !budgetChanges.length) {
      return ok(toView(await tx.policyRule.findUniqueOrThrow({ where: { id: before.id }, select: ruleSelect })));
    }
    if (showChanged) await affected(setShowFields(before.id, toShown), tx);
    const rule = await tx.policyRule.update({
      where: { id: before.id },
      data: {
        ...(requirementChanged ? { requiredApprovals, blocked } : {}),
        // Only the budgets that change, as the audit entry below says.
        ...budgetData(Object.fromEntries(budgetChanges.map((k) => [k, budgetsGiven[k]]))),
        createdBy: actorName,
      },
      select: ruleSelect,
    });
    await appendAudit(tx, {
      actor: actorName,
      action: 'policy.change',
      targetType: 'policy_rule',
      targetId: rule.id,
      data: {
        ...audit,
        ...(requirementChanged ? { from: was, to } : {}),
        ...(showChanged ? { showFields: { from: wasShown, to: toShown } } : {}),
        ...(budgetChanges.length
          ? {
              budgets: Object.fromEntries(
                budgetChanges.map((k) => [k, { from: wasBudgets[k], to: budgetsGiven[k] ?? null }]),
              ),
            }
          : {}),
      },
    });
    return ok(toView(rule));
  });
}

export async function deletePolicyRule(viewer: Actor, id: string): Promise<Result<PolicyRuleView>> {
  if (!authorize(viewer, 'policy.manage')) return fail('forbidden');
  if (!isUuid(id)) return fail('not_found');
  return db.$transaction(async (tx) => {
    const gone = await tx.policyRule.delete({ where: { id }, select: ruleSelect }).catch((err: unknown) => {
      // Deleted already (or never there): nothing was changed.
      if (isRecordNotFound(err)) return null;
      throw err;
    });
    if (!gone) return fail('not_found');
    const rule = toView(gone);
    await appendAudit(tx, {
      actor: auditName(viewer),
      action: 'policy.delete',
      targetType: 'policy_rule',
      targetId: id,
      data: {
        server: rule.server,
        tool: rule.tool,
        requiredApprovals: requirementOf(rule),
        ...(rule.showFields ? { showFields: rule.showFields } : {}),
        ...(Object.keys(setBudgets(rule.budgets)).length ? { budgets: setBudgets(rule.budgets) } : {}),
      },
    });
    return ok(rule);
  });
}

/** What policy asks of this tool call, read inside the caller's transaction. */
export async function policyFor(
  tx: Tx,
  input: { server: string; toolName: string; annotations: ToolAnnotations | null | undefined; serverTrusted: boolean },
): Promise<PolicyVerdict> {
  const rules = await tx.policyRule.findMany({
    where: { server: input.server, toolName: { in: [input.toolName, WHOLE_SERVER] } },
    select: { toolName: true, requiredApprovals: true, blocked: true },
  });
  return requiredApprovalsFor({ ...input, rules });
}

export type ToolPolicy = {
  name: string;
  readOnly: boolean;
  blocked: boolean;
  /** The definition sent is not the accepted one (docs/catalog.md "Pinning"): hide it, refuse its calls. */
  held: boolean;
  requiredApprovals: RequiredApprovals;
  reason: string;
  /** The guards' budgets for this tool, resolved: the gateway counts trusted reads against them itself. */
  budgets: GuardBudgets;
};

/**
 * `POST /api/v1/policy/evaluate`: what policy requires of each tool, and whether its definition is
 * held. Pins the definitions sent (pinDefinitions); changes nothing else.
 */
export async function evaluatePolicy(
  actor: Actor,
  body: PolicyEvaluateBody,
): Promise<Result<{ server: string; trusted: boolean; tools: ToolPolicy[] }>> {
  if (!authorize(actor, 'policy.evaluate')) return fail('forbidden');
  const refused = body.tools.map(unreviewable);
  const [trusted, rules, pins] = await Promise.all([
    db.trustedServer.count({ where: { name: body.server } }).then((n) => n > 0),
    db.policyRule.findMany({
      where: { server: body.server },
      select: { toolName: true, requiredApprovals: true, blocked: true, ...budgetColumns },
    }),
    // A definition too large (or too odd) to review is held and never pinned: nothing of it is
    // stored, so nothing of it can be accepted, and it is held again at every evaluation.
    pinDefinitions(
      actor,
      body.server,
      body.tools.filter((_, i) => !refused[i]),
    ).then((list) => new Map(list.map((p) => [p.name, p.held]))),
  ]);
  const tools = body.tools.map((tool, i): ToolPolicy => {
    const verdict = requiredApprovalsFor({
      toolName: tool.name,
      annotations: tool.annotations,
      serverTrusted: trusted,
      rules,
    });
    const readOnly = believedHints(tool.annotations, trusted).readOnly;
    const refusal = refused[i];
    const held = refusal ? true : pins.get(tool.name)!;
    const basis = verdict.blocked ? `blocked by ${policyBasisText[verdict.basis]}` : policyBasisText[verdict.basis];
    const reason = refusal
      ? `${refusal.reason}; held, and cannot be accepted as it is; ${basis}`
      : held
        ? `definition changed: held until an admin accepts it; ${basis}`
        : basis;
    return {
      name: tool.name,
      readOnly,
      blocked: verdict.blocked,
      held,
      requiredApprovals: verdict.requiredApprovals,
      reason,
      budgets: budgetsFor(rules, tool.name),
    };
  });
  return ok({ server: body.server, trusted, tools });
}
