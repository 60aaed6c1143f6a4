'use client';
import { useActionState } from 'react';
import { createUserAction } from '@/app/(console)/admin/users/actions';
import { Button } from '@/components/ui/button';
import { Field, Input, Select } from '@/components/ui/field';
import { Notice } from '@/components/ui/card';
import { roleLabel, roles } from '@/lib/auth/permissions';

export function CreateUserForm() {
  const [state, action, pending] = useActionState(createUserAction, { status: 'idle' } as Awaited<
    ReturnType<typeof createUserAction>
  >);
  const err = state.status === 'error' ? (state.fields ?? {}) : {};
  return (
    <form action={action} className="grid gap-4 sm:grid-cols-2" key={state.status === 'ok' ? state.at : 'form'}>
      <Field label="Email" htmlFor="new-email" error={err.email}>
        <Input id="new-email" name="email" type="email" required aria-invalid={!!err.email} />
      </Field>
      <Field label="Name" htmlFor="new-name" error={err.name} hint="Optional">
        <Input id="new-name" name="name" />
      </Field>
      <Field label="Role" htmlFor="new-role" error={err.role}>
        <Select id="new-role" name="role" defaultValue="reviewer">
          {roles.map((r) => (
            <option key={r} value={r}>
              {roleLabel[r]}
            </option>
          ))}
        </Select>
      </Field>
      <Field
        label="Initial password"
        htmlFor="new-password"
        error={err.password}
        hint="At least 12 characters; share it privately."
      >
        <Input
          id="new-password"
          name="password"
          type="password"
          autoComplete="new-password"
          required
          minLength={12}
          aria-invalid={!!err.password}
        />
      </Field>
      <Field
        label="Principal id"
        htmlFor="new-principal"
        error={err.principalId}
        hint="The delegated identity agents act for on this person's behalf. Default: the email."
      >
        <Input id="new-principal" name="principalId" />
      </Field>
      <div className="flex items-end gap-3 sm:col-span-2">
        <Button type="submit" disabled={pending}>
          {pending ? 'Creating…' : 'Create user'}
        </Button>
        {state.status === 'ok' ? <Notice tone="good">Created {state.value.email}.</Notice> : null}
        {state.status === 'error' ? (
          <Notice tone="bad" testId="form-error">
            {state.message}
          </Notice>
        ) : null}
      </div>
    </form>
  );
}
