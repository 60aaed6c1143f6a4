'use client';
import { useActionState } from 'react';
import { addPolicyRuleAction } from '@/app/(console)/admin/policy/actions';
import { Button } from '@/components/ui/button';
import { Notice } from '@/components/ui/card';
import { Field, Input, Select } from '@/components/ui/field';
import {
  BACKOFF_MAX_MS,
  BUDGET_BOUNDS,
  BUDGET_KEYS,
  DEFAULT_BUDGETS,
  type BudgetOverrides,
} from '@/lib/guards/budgets';

// Each budget's field: its label names it in its error too, as the command line names its option.
const budgetFields = {
  failedAttempts: { label: 'Failed attempts', saved: (n: number) => `${n} failed attempts` },
  calls: { label: 'Calls', saved: (n: number) => `${n} calls` },
  backoffBaseMs: { label: 'Backoff base (ms)', saved: (n: number) => `backoff base ${n} ms` },
} as const;

const savedBudgets = (b: BudgetOverrides) => {
  const set = BUDGET_KEYS.filter((k) => b[k] !== null).map((k) => budgetFields[k].saved(b[k]!));
  return set.length ? `; budgets: ${set.join(', ')}` : '';
};

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
      <div className="sm:col-span-4">
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
      <fieldset className="min-w-0 sm:col-span-4">
        <legend className="text-sm font-medium text-slate-700">Guard budgets per request reference</legend>
        <p className="mt-1 text-xs text-slate-500">
          Empty: the tool&apos;s rule, then the server&apos;s, then the default shown. More failed attempts of one tool,
          or more calls, are refused; a retry sooner than the backoff (doubling after each failure, at most{' '}
          {BACKOFF_MAX_MS / 1000} s) is refused.
        </p>
        <div className="mt-3 grid gap-4 sm:grid-cols-3">
          {BUDGET_KEYS.map((key) => {
            const { label } = budgetFields[key];
            const id = `rule-budget-${key}`;
            const error = err[key];
            return (
              <Field
                key={key}
                label={label}
                htmlFor={id}
                error={error ? `${label} ${error}` : undefined}
                hint={`${BUDGET_BOUNDS[key].min} to ${BUDGET_BOUNDS[key].max}; default ${DEFAULT_BUDGETS[key]}`}
              >
                <Input
                  id={id}
                  name={key}
                  inputMode="numeric"
                  autoComplete="off"
                  defaultValue={typed?.[key]}
                  maxLength={12}
                  placeholder={String(DEFAULT_BUDGETS[key])}
                  aria-invalid={!!error}
                  aria-describedby={error ? `${id}-error` : undefined}
                />
              </Field>
            );
          })}
        </div>
      </fieldset>
      <div className="sm:col-span-4">
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
            {state.value.showFields ? `; its queue rows show ${state.value.showFields.join(', ')}` : ''}
            {savedBudgets(state.value.budgets)}.
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
