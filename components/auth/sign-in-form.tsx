'use client';
import { useActionState } from 'react';
import { signInAction } from '@/app/sign-in/actions';
import { idle, type ActionState } from '@/lib/action-state';
import { Button } from '@/components/ui/button';
import { Field, Input } from '@/components/ui/field';

export function SignInForm({ next }: { next?: string }) {
  const [state, action, pending] = useActionState<ActionState, FormData>(signInAction, idle);
  const error = state.status === 'error' ? state.message : undefined;
  return (
    <form action={action} className="space-y-4" noValidate>
      <input type="hidden" name="next" value={next ?? '/'} />
      <Field label="Email" htmlFor="email">
        <Input
          id="email"
          name="email"
          type="email"
          autoComplete="username"
          required
          autoFocus
          defaultValue={state.status === 'error' ? state.input?.email : undefined}
          aria-invalid={!!error}
        />
      </Field>
      <Field label="Password" htmlFor="password">
        <Input
          id="password"
          name="password"
          type="password"
          autoComplete="current-password"
          required
          aria-invalid={!!error}
        />
      </Field>
      {error ? (
        <p
          data-testid="sign-in-error"
          className="rounded-md bg-rose-50 px-3 py-2 text-sm text-rose-700 ring-1 ring-inset ring-rose-200"
        >
          {error}
        </p>
      ) : null}
      <Button type="submit" className="w-full" disabled={pending}>
        {pending ? 'Signing in…' : 'Sign in'}
      </Button>
    </form>
  );
}
