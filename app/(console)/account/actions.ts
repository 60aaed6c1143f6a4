'use server';
import { revalidatePath } from 'next/cache';
import { done, runAction } from '@/lib/server/http/action';
import { createPersonalToken, revokePersonalToken } from '@/lib/server/credentials/credentials';
import { createPersonalTokenSchema, revokeCredentialSchema } from '@/lib/credentials/schemas';

export async function createTokenAction(_prev: unknown, form: FormData) {
  const state = await runAction(createPersonalTokenSchema, { name: form.get('name') }, (viewer, d) =>
    createPersonalToken(viewer, viewer.userId, d.name),
  );
  if (state.status !== 'ok') return state;
  revalidatePath('/account');
  return { ...state, value: { name: state.value.token.name, secret: state.value.secret } };
}

export async function revokeTokenAction(id: string) {
  const state = await runAction(revokeCredentialSchema, { id }, (viewer, d) => revokePersonalToken(viewer, d.id));
  revalidatePath('/account');
  return done(state);
}
