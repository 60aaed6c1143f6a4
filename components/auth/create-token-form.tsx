'use client';
import { useActionState } from 'react';
import { createTokenAction } from '@/app/(console)/account/actions';
import { Button } from '@/components/ui/button';
import { Field, Input } from '@/components/ui/field';
import { Notice } from '@/components/ui/card';
import { SecretOnce } from '@/components/ui/secret-once';

export function CreateTokenForm() {
  const [state, action, pending] = useActionState(createTokenAction, { status: 'idle' } as Awaited<
    ReturnType<typeof createTokenAction>
  >);
  const err = state.status === 'error' ? (state.fields ?? {}) : {};
  return (
    <div className="space-y-4">
      {state.status === 'ok' ? (
        <SecretOnce label={`Personal token "${state.value.name}" created`} secret={state.value.secret} />
      ) : null}
      <form action={action} className="flex flex-wrap items-end gap-3" key={state.status === 'ok' ? state.at : 'form'}>
        <div className="w-72">
          <Field label="Token name" htmlFor="token-name" error={err.name}>
            <Input id="token-name" name="name" required maxLength={100} placeholder="e.g. chat-ops script" />
          </Field>
        </div>
        <Button type="submit" disabled={pending}>
          {pending ? 'Creating…' : 'Create token'}
        </Button>
        {state.status === 'error' ? <Notice tone="bad">{state.message}</Notice> : null}
      </form>
    </div>
  );
}
