'use client';
import { useActionState } from 'react';
import { createWebhookAction } from '@/app/(console)/admin/webhooks/actions';
import { Button } from '@/components/ui/button';
import { Field, Input, Select } from '@/components/ui/field';
import { Notice } from '@/components/ui/card';
import { SecretOnce } from '@/components/ui/secret-once';
import { webhookEventTypes } from '@/lib/webhooks/events';

export function CreateWebhookForm() {
  const [state, action, pending] = useActionState(createWebhookAction, { status: 'idle' } as Awaited<
    ReturnType<typeof createWebhookAction>
  >);
  const err = state.status === 'error' ? (state.fields ?? {}) : {};
  return (
    <div className="space-y-4">
      {state.status === 'ok' && state.value.secret ? (
        <SecretOnce label="Endpoint created: its signing secret" secret={state.value.secret} />
      ) : state.status === 'ok' ? (
        <Notice tone="good">Endpoint created.</Notice>
      ) : null}
      <form action={action} className="grid gap-4 sm:grid-cols-2" key={state.status === 'ok' ? state.at : 'form'}>
        <Field
          label="URL"
          htmlFor="webhook-url"
          error={err.url}
          hint="http(s); a Slack incoming webhook or your receiver"
        >
          <Input id="webhook-url" name="url" type="url" required maxLength={2048} aria-invalid={!!err.url} />
        </Field>
        <Field label="Format" htmlFor="webhook-format" error={err.format} hint="standard: signed (Standard Webhooks)">
          <Select id="webhook-format" name="format" defaultValue="slack">
            <option value="slack">slack</option>
            <option value="standard">standard</option>
          </Select>
        </Field>
        <fieldset className="sm:col-span-2">
          <legend className="text-sm font-medium text-slate-700">Events</legend>
          <div className="mt-2 grid gap-2 sm:grid-cols-3">
            {webhookEventTypes.map((t) => (
              <label key={t} className="flex items-center gap-2 rounded-md p-2 text-sm ring-1 ring-slate-200">
                <input type="checkbox" name="events" value={t} defaultChecked />
                <code className="font-mono text-xs text-slate-900">{t}</code>
              </label>
            ))}
          </div>
          {err.events ? <p className="mt-1 text-xs text-rose-600">{err.events}</p> : null}
        </fieldset>
        <div className="flex items-center gap-3 sm:col-span-2">
          <Button type="submit" disabled={pending}>
            {pending ? 'Creating…' : 'Add endpoint'}
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
