'use server';
import { revalidatePath } from 'next/cache';
import { done, runAction } from '@/lib/server/http/action';
import { createApiKey, revokeApiKey } from '@/lib/server/credentials/credentials';
import { createApiKeySchema, revokeCredentialSchema } from '@/lib/credentials/schemas';

export async function createApiKeyAction(_prev: unknown, form: FormData) {
  const organization = String(form.get('organization') ?? '').trim();
  const input = { name: form.get('name'), scopes: form.getAll('scopes'), organization: organization || undefined };
  const state = await runAction(createApiKeySchema, input, (viewer, data) => createApiKey(viewer, data));
  if (state.status !== 'ok') return state;
  revalidatePath('/admin/api-keys');
  // The secret travels to the browser once, in this response, and is stored nowhere.
  return { ...state, value: { name: state.value.key.name, secret: state.value.secret } };
}

export async function revokeApiKeyAction(id: string) {
  const state = await runAction(revokeCredentialSchema, { id }, (viewer, d) => revokeApiKey(viewer, d.id));
  revalidatePath('/admin/api-keys');
  return done(state);
}
