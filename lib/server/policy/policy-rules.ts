import 'server-only';
import { db, type Tx } from '../db/db';
import { isRecordNotFound } from '../db/errors';
import { appendAudit } from '../audit/audit';
import { first } from '../db/kysely';
import { lockPolicyRule } from './sql';
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
import { fail, ok, type Result } from '@/lib/result';

/** An admin's rule: `tool` null means every tool of the server. */
export type PolicyRuleView = {
  id: string;
  server: string;
  tool: string | null;
  requiredApprovals: number;
  /** Not exposed at all; `requiredApprovals` is then 2. */
  blocked: boolean;
  createdBy: string;
  createdAt: Date;
};

const ruleSelect = {
  id: true,
  server: true,
  toolName: true,
  requiredApprovals: true,
  blocked: true,
  createdBy: true,
  createdAt: true,
} satisfies Prisma.PolicyRuleSelect;
const toView = (r: Prisma.PolicyRuleGetPayload<{ select: typeof ruleSelect }>): PolicyRuleView => ({
  id: r.id,
  server: r.server,
  tool: r.toolName === WHOLE_SERVER ? null : r.toolName,
  requiredApprovals: r.requiredApprovals,
  blocked: r.blocked,
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
  const blocked = input.requiredApprovals === 'blocked';
  const requiredApprovals = blocked ? 2 : (input.requiredApprovals as number);
  const requirement = requirementOf({ requiredApprovals, blocked });
  return db.$transaction(async (tx) => {
    // ON CONFLICT DO NOTHING: a rule made a moment ago by another admin is changed below.
    const [inserted] = await tx.policyRule.createManyAndReturn({
      data: [{ server: input.server, toolName, requiredApprovals, blocked, createdBy: actorName }],
      skipDuplicates: true,
      select: ruleSelect,
    });
    if (inserted) {
      await appendAudit(tx, {
        actor: actorName,
        action: 'policy.create',
        targetType: 'policy_rule',
        targetId: inserted.id,
        data: { ...audit, requiredApprovals: requirement },
      });
      return ok(toView(inserted));
    }
    // It exists (perhaps since a moment ago): lock it, so two admins changing it at once serialize.
    const before = await first(lockPolicyRule(input.server, toolName), tx);
    if (!before) return fail('conflict', 'This rule was deleted at the same moment; try again.');
    const was = requirementOf({ requiredApprovals: before.required_approvals, blocked: before.blocked });
    if (was === requirement) {
      return ok(toView(await tx.policyRule.findUniqueOrThrow({ where: { id: before.id }, select: ruleSelect })));
    }
    const rule = await tx.policyRule.update({
      where: { id: before.id },
      data: { requiredApprovals, blocked, createdBy: actorName },
      select: ruleSelect,
    });
    await appendAudit(tx, {
      actor: actorName,
      action: 'policy.change',
      targetType: 'policy_rule',
      targetId: rule.id,
      data: { ...audit, from: was, to: requirement },
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
      data: { server: rule.server, tool: rule.tool, requiredApprovals: requirementOf(rule) },
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
  requiredApprovals: RequiredApprovals;
  reason: string;
};

/** `POST /api/v1/policy/evaluate`: what policy requires of each tool. Changes nothing. */
export async function evaluatePolicy(
  actor: Actor,
  body: PolicyEvaluateBody,
): Promise<Result<{ server: string; trusted: boolean; tools: ToolPolicy[] }>> {
  if (!authorize(actor, 'policy.evaluate')) return fail('forbidden');
  const [trusted, rules] = await Promise.all([
    db.trustedServer.count({ where: { name: body.server } }).then((n) => n > 0),
    db.policyRule.findMany({
      where: { server: body.server },
      select: { toolName: true, requiredApprovals: true, blocked: true },
    }),
  ]);
  const tools = body.tools.map((tool): ToolPolicy => {
    const verdict = requiredApprovalsFor({
      toolName: tool.name,
      annotations: tool.annotations,
      serverTrusted: trusted,
      rules,
    });
    const readOnly = believedHints(tool.annotations, trusted).readOnly;
    const reason = verdict.blocked ? `blocked by ${policyBasisText[verdict.basis]}` : policyBasisText[verdict.basis];
    return {
      name: tool.name,
      readOnly,
      blocked: verdict.blocked,
      requiredApprovals: verdict.requiredApprovals,
      reason,
    };
  });
  return ok({ server: body.server, trusted, tools });
}
