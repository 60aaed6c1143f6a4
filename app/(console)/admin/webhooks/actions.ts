'use server';
import { revalidatePath } from 'next/cache';
import { z } from 'zod';
import { done, runAction } from '@/lib/server/http/action';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  redeliverWebhook,
  updateWebhookEndpoint,
} from '@/lib/server/webhooks/webhooks';
import { endpointInputSchema, endpointUpdateSchema } from '@/lib/webhooks/events';

const idSchema = z.object({ id: z.uuid({ message: 'not an id' }) });

export async function createWebhookAction(_prev: unknown, form: FormData) {
  const input = { url: form.get('url'), format: form.get('format'), events: form.getAll('events'), enabled: true };
  const state = await runAction(endpointInputSchema, input, (viewer, data) => createWebhookEndpoint(viewer, data));
  if (state.status !== 'ok') return state;
  revalidatePath('/admin/webhooks');
  // The secret travels to the browser once, in this response; it is kept sealed, never shown again.
  return state;
}

export async function setWebhookEnabledAction(id: string, enabled: boolean) {
  const state = await runAction(endpointUpdateSchema, { id, enabled }, (viewer, d) => updateWebhookEndpoint(viewer, d));
  revalidatePath('/admin/webhooks');
  return done(state);
}

export async function deleteWebhookAction(id: string) {
  const state = await runAction(idSchema, { id }, (viewer, d) => deleteWebhookEndpoint(viewer, d.id));
  revalidatePath('/admin/webhooks');
  return done(state);
}

export async function redeliverAction(id: string) {
  const state = await runAction(idSchema, { id }, (viewer, d) => redeliverWebhook(viewer, d.id));
  revalidatePath('/admin/webhooks');
  return done(state);
}
