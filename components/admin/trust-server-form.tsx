'use client';
import { useActionState } from 'react';
import { trustServerAction } from '@/app/(console)/admin/servers/actions';
import { Button } from '@/components/ui/button';
import { Field, Input } from '@/components/ui/field';
import { Notice } from '@/components/ui/card';
import { idle } from '@/lib/action-state';

type State = Awaited<ReturnType<typeof trustServerAction>>;

export function TrustServerForm() {
  const [state, action, pending] = useActionState<State, FormData>(
    (_prev, form) => trustServerAction(String(form.get('name') ?? '')),
    idle,
  );
  const err = state.status === 'error' ? (state.fields ?? {}) : {};
  return (
    <form action={action} className="flex flex-wrap items-end gap-3" key={state.status === 'ok' ? state.at : 'form'}>
      <div className="w-80">
        <Field
          label="Server name"
          htmlFor="server-name"
          error={err.name}
          hint="As agents report it in the server field, e.g. billing-mcp"
        >
          <Input id="server-name" name="name" required maxLength={200} aria-invalid={!!err.name} />
        </Field>
      </div>
      <Button type="submit" disabled={pending}>
        {pending ? 'Trusting…' : 'Trust server'}
      </Button>
      {state.status === 'ok' ? <Notice tone="good">{state.value.name} is trusted.</Notice> : null}
      {state.status === 'error' && !err.name ? <Notice tone="bad">{state.message}</Notice> : null}
    </form>
  );
}
