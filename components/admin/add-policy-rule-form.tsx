'use client';
import { useActionState } from 'react';
import { addPolicyRuleAction } from '@/app/(console)/admin/policy/actions';
import { Button } from '@/components/ui/button';
import { Notice } from '@/components/ui/card';
import { Field, Input, Select } from '@/components/ui/field';

const approvals = (n: number | 'blocked') =>
  n === 'blocked'
    ? 'is blocked: not exposed, never called'
    : n === 0
      ? 'needs no approval'
      : n === 1
        ? 'needs 1 approval'
        : `needs ${n} approvals`;

export function AddPolicyRuleForm() {
  const [state, action, pending] = useActionState(addPolicyRuleAction, { status: 'idle' } as Awaited<
    ReturnType<typeof addPolicyRuleAction>
  >);
  const err = state.status === 'error' ? (state.fields ?? {}) : {};
  const typed = state.status === 'error' ? state.input : undefined;
  return (
    <form
      action={action}
      className="grid gap-4 sm:grid-cols-[1fr_1fr_12rem_auto] sm:items-start"
      key={state.status === 'ok' ? state.at : 'form'}
    >
      <Field label="Server" htmlFor="rule-server" error={err.server} hint="As agents report it, e.g. billing-mcp">
        <Input
          id="rule-server"
          name="server"
          defaultValue={typed?.server}
          required
          maxLength={200}
          aria-invalid={!!err.server}
        />
      </Field>
      <Field label="Tool" htmlFor="rule-tool" error={err.tool} hint="Empty: every tool of the server">
        <Input id="rule-tool" name="tool" defaultValue={typed?.tool} maxLength={200} aria-invalid={!!err.tool} />
      </Field>
      <Field label="Approvals required" htmlFor="rule-approvals" error={err.requiredApprovals}>
        <Select
          id="rule-approvals"
          name="requiredApprovals"
          defaultValue={typed?.requiredApprovals ?? '1'}
          aria-invalid={!!err.requiredApprovals}
        >
          <option value="0">0: none</option>
          <option value="1">1 reviewer</option>
          <option value="2">2 distinct reviewers</option>
          <option value="blocked">Blocked: not exposed</option>
        </Select>
      </Field>
      <div className="sm:col-span-3">
        <Field
          label="Fields shown in the queue"
          htmlFor="rule-show"
          error={err.show}
          hint="Argument fields of this tool, comma-separated (order_id, amount; a dotted path reaches into an object), at most 10. Empty: the first three."
        >
          <Input
            id="rule-show"
            name="show"
            defaultValue={typed?.show}
            maxLength={1100}
            placeholder="order_id, amount, currency"
            aria-invalid={!!err.show}
          />
        </Field>
      </div>
      <div className="sm:pt-6">
        <Button type="submit" disabled={pending}>
          {pending ? 'Saving…' : 'Save rule'}
        </Button>
      </div>
      <div className="sm:col-span-4 empty:hidden">
        {state.status === 'ok' ? (
          <Notice tone="good">
            Saved:{' '}
            {state.value.tool ? (
              <>
                {state.value.tool} on {state.value.server}
              </>
            ) : (
              <>every tool of {state.value.server}</>
            )}{' '}
            {approvals(state.value.requiredApprovals)}
            {state.value.showFields ? `; its queue rows show ${state.value.showFields.join(', ')}` : ''}.
          </Notice>
        ) : null}
        {state.status === 'error' ? (
          <Notice tone="bad" testId="form-error">
            {state.message}
          </Notice>
        ) : null}
      </div>
    </form>
  );
}
