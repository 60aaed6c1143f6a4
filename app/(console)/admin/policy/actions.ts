'use server';
import { revalidatePath } from 'next/cache';
import { z } from 'zod';
import { policyRuleIdSchema, policyRuleSchema } from '@/lib/approvals/schemas';
import { done, runAction } from '@/lib/server/http/action';
import { deletePolicyRule, setPolicyRule } from '@/lib/server/policy/policy-rules';

// The shared schema coerces, so a missing or blank count would read as 0 (no approval): from a
// form, only an explicit 0, 1, 2 or blocked is a requirement, as on the command line.
const ruleFormSchema = policyRuleSchema.extend({
  requiredApprovals: z
    .enum(['0', '1', '2', 'blocked'], 'must be 0, 1, 2 or blocked')
    .transform((v) => (v === 'blocked' ? v : Number(v))),
});

function revalidatePolicy() {
  revalidatePath('/admin/policy');
  revalidatePath('/admin/tools');
}

/**
 * Adds a rule, or changes the one for the same server and tool (as the CLI does). The form holds
 * the whole rule: a blank "Fields shown in the queue" clears them, and a blank budget inherits.
 */
export async function addPolicyRuleAction(_prev: unknown, form: FormData) {
  const text = (name: string) => String(form.get(name) ?? '');
  const input = {
    server: text('server'),
    tool: text('tool'),
    requiredApprovals: text('requiredApprovals'),
    show: text('show'),
    failedAttempts: text('failedAttempts'),
    calls: text('calls'),
    backoffBaseMs: text('backoffBaseMs'),
  };
  const state = await runAction(ruleFormSchema, input, (viewer, d) => setPolicyRule(viewer, d));
  // What was typed comes back with the errors: React resets the form after every action.
  if (state.status !== 'ok') return { ...state, input };
  revalidatePolicy();
  const { server, tool, requiredApprovals, blocked, showFields, budgets } = state.value;
  return {
    ...state,
    value: {
      server,
      tool,
      requiredApprovals: blocked ? ('blocked' as const) : requiredApprovals,
      showFields,
      budgets,
    },
  };
}

export async function deletePolicyRuleAction(id: string) {
  const state = await runAction(policyRuleIdSchema, { id }, (viewer, d) => deletePolicyRule(viewer, d.id));
  revalidatePolicy();
  return done(state);
}
