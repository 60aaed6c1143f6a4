'use client';
import { useActionState } from 'react';
import { createApiKeyAction } from '@/app/(console)/admin/api-keys/actions';
import { Button } from '@/components/ui/button';
import { Field, Input } from '@/components/ui/field';
import { Notice } from '@/components/ui/card';
import { SecretOnce } from '@/components/ui/secret-once';
import { apiScopes, scopeDescription } from '@/lib/credentials/scopes';

export function CreateApiKeyForm() {
  const [state, action, pending] = useActionState(createApiKeyAction, { status: 'idle' } as Awaited<
    ReturnType<typeof createApiKeyAction>
  >);
  const err = state.status === 'error' ? (state.fields ?? {}) : {};
  return (
    <div className="space-y-4">
      {state.status === 'ok' ? (
        <SecretOnce label={`API key "${state.value.name}" created`} secret={state.value.secret} />
      ) : null}
      <form action={action} className="grid gap-4 sm:grid-cols-2" key={state.status === 'ok' ? state.at : 'form'}>
        <Field label="Name" htmlFor="key-name" error={err.name} hint="Which service uses it, e.g. support-bot gateway">
          <Input id="key-name" name="name" required maxLength={100} aria-invalid={!!err.name} />
        </Field>
        <Field
          label="Organization"
          htmlFor="key-org"
          error={err.organization}
          hint="Optional: limit the key to one organization's records"
        >
          <Input id="key-org" name="organization" maxLength={200} />
        </Field>
        <fieldset className="sm:col-span-2">
          <legend className="text-sm font-medium text-slate-700">Scopes</legend>
          <div className="mt-2 grid gap-2 sm:grid-cols-2">
            {apiScopes.map((s) => (
              <label
                key={s}
                className="flex items-start gap-2 rounded-md p-2 text-sm ring-1 ring-slate-200 hover:bg-slate-50"
              >
                <input
                  type="checkbox"
                  name="scopes"
                  value={s}
                  className="mt-0.5"
                  defaultChecked={s === 'outcomes:write'}
                />
                <span>
                  <code className="font-mono text-xs text-slate-900">{s}</code>
                  <span className="block text-xs text-slate-500">{scopeDescription[s]}</span>
                </span>
              </label>
            ))}
          </div>
          {err.scopes ? <p className="mt-1 text-xs text-rose-600">{err.scopes}</p> : null}
        </fieldset>
        <div className="flex items-center gap-3 sm:col-span-2">
          <Button type="submit" disabled={pending}>
            {pending ? 'Creating…' : 'Create API key'}
          </Button>
          {state.status === 'error' ? (
            <Notice tone="bad" testId="form-error">
              {state.message}
            </Notice>
          ) : null}
        </div>
      </form>
    </div>
  );
}
