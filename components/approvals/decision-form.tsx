'use client';
import { useActionState, useState } from 'react';
import { decideApprovalAction } from '@/app/(console)/approvals/actions';
import { Button } from '@/components/ui/button';
import { Field } from '@/components/ui/field';
import { Notice } from '@/components/ui/card';

type State = Awaited<ReturnType<typeof decideApprovalAction>>;

/** Approve or deny with a required reason; carries the version the reviewer saw (the clicked button names the decision). */
export function DecisionForm({ id, version }: { id: string; version: number }) {
  const [state, action, pending] = useActionState<State, FormData>(decideApprovalAction, { status: 'idle' });
  const [decision, setDecision] = useState<'approve' | 'deny' | null>(null);
  const err = state.status === 'error' ? (state.fields ?? {}) : {};
  if (state.status === 'ok') {
    return (
      <Notice tone="good" testId="decision-done">
        Your decision is recorded. The request is now {state.value.status}.
      </Notice>
    );
  }
  return (
    <form action={action} className="space-y-3" aria-label="Decide">
      <input type="hidden" name="id" value={id} />
      <input type="hidden" name="version" value={version} />
      <Field label="Reason (required, kept in the audit log)" htmlFor="reason" error={err.reason}>
        <textarea
          id="reason"
          name="reason"
          required
          maxLength={1000}
          rows={3}
          aria-invalid={!!err.reason}
          className="block w-full rounded-md border-0 bg-white px-3 py-2 text-sm text-slate-900 shadow-xs ring-1 ring-inset ring-slate-300 focus:ring-2 focus:ring-indigo-500"
        />
      </Field>
      {state.status === 'error' ? (
        <Notice tone="bad" testId="decision-error">
          {state.message}
        </Notice>
      ) : null}
      <div className="flex gap-3">
        <Button type="submit" name="decision" value="approve" disabled={pending} onClick={() => setDecision('approve')}>
          {pending && decision === 'approve' ? 'Approving…' : 'Approve'}
        </Button>
        <Button
          type="submit"
          name="decision"
          value="deny"
          variant="danger"
          disabled={pending}
          onClick={() => setDecision('deny')}
        >
          {pending && decision === 'deny' ? 'Denying…' : 'Deny'}
        </Button>
      </div>
    </form>
  );
}
