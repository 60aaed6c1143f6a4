'use client';
import { useActionState, useState } from 'react';
import { stateCheckAction } from '@/app/(console)/outcomes/actions';
import { Button } from '@/components/ui/button';
import { Field } from '@/components/ui/field';
import { Notice } from '@/components/ui/card';
import { STATE_CHECK_NOTE_MAX } from '@/lib/outcomes/resolution';

type State = Awaited<ReturnType<typeof stateCheckAction>>;

/** A state check on an unresolved unknown write: the clicked button names the verdict; the note is required. */
export function StateCheckForm({ id }: { id: string }) {
  const [state, action, pending] = useActionState<State, FormData>(stateCheckAction, { status: 'idle' });
  const [verdict, setVerdict] = useState<'happened' | 'did_not_happen' | null>(null);
  const err = state.status === 'error' ? (state.fields ?? {}) : {};
  if (state.status === 'ok') {
    return (
      <Notice tone="good" testId="state-check-done">
        Recorded: {state.value.verdict === 'happened' ? 'it happened' : 'it did not happen'}.
      </Notice>
    );
  }
  return (
    <form action={action} className="space-y-3" aria-label="State check">
      <input type="hidden" name="id" value={id} />
      <Field label="What you checked, and where (required, kept in the audit log)" htmlFor="note" error={err.note}>
        <textarea
          id="note"
          name="note"
          required
          maxLength={STATE_CHECK_NOTE_MAX}
          rows={3}
          aria-invalid={!!err.note}
          className="block w-full rounded-md border-0 bg-white px-3 py-2 text-sm text-slate-900 shadow-xs ring-1 ring-inset ring-slate-300 focus:ring-2 focus:ring-indigo-500"
        />
      </Field>
      {state.status === 'error' ? (
        <Notice tone="bad" testId="state-check-error">
          {state.message}
        </Notice>
      ) : null}
      <div className="flex flex-wrap gap-3">
        <Button type="submit" name="verdict" value="happened" disabled={pending} onClick={() => setVerdict('happened')}>
          {pending && verdict === 'happened' ? 'Recording…' : 'It happened'}
        </Button>
        <Button
          type="submit"
          name="verdict"
          value="did_not_happen"
          variant="secondary"
          disabled={pending}
          onClick={() => setVerdict('did_not_happen')}
        >
          {pending && verdict === 'did_not_happen' ? 'Recording…' : 'It did not happen'}
        </Button>
      </div>
    </form>
  );
}
