'use client';
import { useActionState } from 'react';
import { revokeApprovalAction } from '@/app/(console)/approvals/actions';
import { Button } from '@/components/ui/button';
import { Notice } from '@/components/ui/card';
import { cn } from '@/components/ui/cn';

type State = Awaited<ReturnType<typeof revokeApprovalAction>>;

/** Revoke a pending request or an unused grant at once, with a reason and a confirmation. */
export function RevokeForm({ id, what, compact = false }: { id: string; what: string; compact?: boolean }) {
  const [state, action, pending] = useActionState<State, FormData>(revokeApprovalAction, { status: 'idle' });
  if (state.status === 'ok')
    return (
      <span className="text-xs font-medium text-rose-700" data-testid="revoked">
        Revoked
      </span>
    );
  const err = state.status === 'error' ? (state.fields?.reason ?? state.message) : null;
  return (
    <form
      action={action}
      className={compact ? 'flex items-center justify-end gap-2' : 'space-y-2'}
      onSubmit={(e) => {
        if (!window.confirm(`Revoke ${what}? It stops working at once.`)) e.preventDefault();
      }}
    >
      <input type="hidden" name="id" value={id} />
      <label className="sr-only" htmlFor={`revoke-reason-${id}`}>
        Reason for revoking
      </label>
      <input
        id={`revoke-reason-${id}`}
        name="reason"
        required
        maxLength={1000}
        placeholder="Reason"
        aria-invalid={!!err}
        className={cn(
          compact ? 'w-32 min-w-0 2xl:w-48' : 'w-48',
          'rounded-md border-0 bg-white px-2 py-1 text-sm ring-1 ring-inset ring-slate-300 focus:ring-2 focus:ring-indigo-500',
        )}
      />
      <Button type="submit" size="sm" variant="danger" disabled={pending}>
        {pending ? 'Revoking…' : 'Revoke'}
      </Button>
      {err ? compact ? <span className="text-xs text-rose-600">{err}</span> : <Notice tone="bad">{err}</Notice> : null}
    </form>
  );
}
