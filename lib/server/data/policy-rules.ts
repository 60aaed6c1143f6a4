import 'server-only';
import { db, type Tx } from './db';
import { appendAudit } from './audit';
import { first } from './sql/kysely';
import { lockPolicyRule } from './sql/policy';
import { Prisma } from '@/lib/generated/prisma/client';
import { authorize } from '@/lib/auth/permissions';
import { auditName, type Actor } from '@/lib/auth/actor';
import { requiredApprovalsFor, WHOLE_SERVER, type PolicyVerdict } from '@/lib/approvals/policy';
import { isUuid, type PolicyRuleInput } from '@/lib/approvals/schemas';
import type { ToolAnnotations } from '@/lib/outcomes/schemas';
import { fail, ok, type Result } from '@/lib/result';

/** An admin's rule: `tool` null means every tool of the server. */
export type PolicyRuleView = {
  id: string;
  server: string;
  tool: string | null;
  requiredApprovals: number;
  createdBy: string;
  createdAt: Date;
};

const ruleSelect = {
  id: true,
  server: true,
  toolName: true,
  requiredApprovals: true,
  createdBy: true,
  createdAt: true,
} satisfies Prisma.PolicyRuleSelect;
const toView = (r: Prisma.PolicyRuleGetPayload<{ select: typeof ruleSelect }>): PolicyRuleView => ({
  id: r.id,
  server: r.server,
  tool: r.toolName === WHOLE_SERVER ? null : r.toolName,
  requiredApprovals: r.requiredApprovals,
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

/** Creates or changes the rule for (server, tool); the same value again changes nothing. */
export async function setPolicyRule(actor: Actor, input: PolicyRuleInput): Promise<Result<PolicyRuleView>> {
  if (!authorize(actor, 'policy.manage')) return fail('forbidden');
  const actorName = auditName(actor);
  const toolName = input.tool ?? WHOLE_SERVER;
  const audit = { server: input.server, tool: input.tool };
  return db.$transaction(async (tx) => {
    // ON CONFLICT DO NOTHING: a rule made a moment ago by another admin is changed below.
    const [inserted] = await tx.policyRule.createManyAndReturn({
      data: [{ server: input.server, toolName, requiredApprovals: input.requiredApprovals, createdBy: actorName }],
      skipDuplicates: true,
      select: ruleSelect,
    });
    if (inserted) {
      await appendAudit(tx, {
        actor: actorName,
        action: 'policy.create',
        targetType: 'policy_rule',
        targetId: inserted.id,
        data: { ...audit, requiredApprovals: input.requiredApprovals },
      });
      return ok(toView(inserted));
    }
    // It exists (perhaps since a moment ago): lock it, so two admins changing it at once serialize.
    const before = await first(lockPolicyRule(input.server, toolName), tx);
    if (!before) return fail('conflict', 'This rule was deleted at the same moment; try again.');
    if (before.required_approvals === input.requiredApprovals) {
      return ok(toView(await tx.policyRule.findUniqueOrThrow({ where: { id: before.id }, select: ruleSelect })));
    }
    const rule = await tx.policyRule.update({
      where: { id: before.id },
      data: { requiredApprovals: input.requiredApprovals, createdBy: actorName },
      select: ruleSelect,
    });
    await appendAudit(tx, {
      actor: actorName,
      action: 'policy.change',
      targetType: 'policy_rule',
      targetId: rule.id,
      data: { ...audit, from: before.required_approvals, to: input.requiredApprovals },
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
      if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2025') return null;
      throw err;
    });
    if (!gone) return fail('not_found');
    const rule = toView(gone);
    await appendAudit(tx, {
      actor: auditName(viewer),
      action: 'policy.delete',
      targetType: 'policy_rule',
      targetId: id,
      data: { server: rule.server, tool: rule.tool, requiredApprovals: rule.requiredApprovals },
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
    select: { toolName: true, requiredApprovals: true },
  });
  return requiredApprovalsFor({ ...input, rules });
}
