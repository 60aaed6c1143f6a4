'use client';
import { useActionState, useEffect, useRef, useState } from 'react';
import { useRouter } from 'next/navigation';
import { decideApprovalAction, type DecideState } from '@/app/(console)/approvals/actions';
import { Button } from '@/components/ui/button';
import { Field } from '@/components/ui/field';
import { Notice } from '@/components/ui/card';
import { isTypingTarget } from './keys';

type Decision = 'approve' | 'deny';

/**
 * Approve or deny with a required reason, from the version the reviewer saw. The reason is kept
 * whatever the answer (React resets a form after its action: the field is controlled). Keys outside
 * text fields: `a` / `d` choose and focus the reason; Enter in the reason then submits the choice.
 */
export function DecisionForm({ id, version, initial }: { id: string; version: number; initial?: Decision | null }) {
  const [state, action, pending] = useActionState<DecideState, FormData>(decideApprovalAction, { status: 'idle' });
  const [reason, setReason] = useState('');
  const [chosen, setChosen] = useState<Decision | null>(initial ?? null);
  const reasonField = useRef<HTMLTextAreaElement>(null);
  const form = useRef<HTMLFormElement>(null);
  const router = useRouter();
  // After a lost race on a request still pending, decide again from its current version.
  const seen = state.current?.status === 'pending' ? state.current.version : version;
  const settledElsewhere = state.status === 'error' && state.current && state.current.status !== 'pending';

  useEffect(() => {
    if (initial) reasonField.current?.focus();
  }, [initial]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.metaKey || e.ctrlKey || e.altKey || isTypingTarget(e.target)) return;
      if (e.key !== 'a' && e.key !== 'd') return;
      e.preventDefault();
      setChosen(e.key === 'a' ? 'approve' : 'deny');
      reasonField.current?.focus();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);

  const err = state.status === 'error' ? (state.fields ?? {}) : {};
  return (
    <form ref={form} action={action} className="space-y-3" aria-label="Decide">
      <input type="hidden" name="id" value={id} />
      <input type="hidden" name="version" value={seen} />
      <Field
        label={
          chosen ? `Reason to ${chosen} (required, kept in the audit log)` : 'Reason (required, kept in the audit log)'
        }
        htmlFor="reason"
        error={err.reason}
      >
        <textarea
          ref={reasonField}
          id="reason"
          name="reason"
          required
          maxLength={1000}
          rows={3}
          value={reason}
          onChange={(e) => setReason(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Escape') {
              setChosen(null);
              e.currentTarget.blur();
            } else if (e.key === 'Enter' && !e.shiftKey && chosen && reason.trim()) {
              e.preventDefault();
              form.current?.requestSubmit(form.current.querySelector<HTMLButtonElement>(`button[value="${chosen}"]`));
            }
          }}
          aria-invalid={!!err.reason}
          aria-describedby="reason-hint"
          className="block w-full rounded-md border-0 bg-white px-3 py-2 text-sm text-slate-900 shadow-xs ring-1 ring-inset ring-slate-300 focus:ring-2 focus:ring-indigo-500"
        />
      </Field>
      <p id="reason-hint" className="text-xs text-slate-500">
        {chosen
          ? `Enter ${chosen === 'approve' ? 'approves' : 'denies'}; Shift+Enter starts a new line; Esc cancels.`
          : 'Keys: a to approve, d to deny (the reason field takes focus).'}
      </p>
      {state.status === 'error' ? (
        <Notice tone="bad" testId="decision-error">
          {state.message}
          {settledElsewhere ? (
            <>
              {' '}
              <button type="button" className="font-medium underline" onClick={() => router.refresh()}>
                Show the request as it is now
              </button>
            </>
          ) : null}
        </Notice>
      ) : null}
      <div className="flex gap-3">
        <Button
          type="submit"
          name="decision"
          value="approve"
          disabled={pending || !!settledElsewhere}
          onClick={() => setChosen('approve')}
        >
          {pending && chosen === 'approve' ? 'Approving…' : 'Approve'}
        </Button>
        <Button
          type="submit"
          name="decision"
          value="deny"
          variant="danger"
          disabled={pending || !!settledElsewhere}
          onClick={() => setChosen('deny')}
        >
          {pending && chosen === 'deny' ? 'Denying…' : 'Deny'}
        </Button>
      </div>
    </form>
  );
}
