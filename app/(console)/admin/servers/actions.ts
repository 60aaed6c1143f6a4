'use server';
import { revalidatePath } from 'next/cache';
import { runAction } from '@/lib/server/http/action';
import { trustServer, untrustServer } from '@/lib/server/data/trusted-servers';
import { trustServerSchema } from '@/lib/mcp-servers/schemas';

export async function trustServerAction(_prev: unknown, form: FormData) {
  const state = await runAction(trustServerSchema, { name: form.get('name') }, (viewer, d) =>
    trustServer(viewer, d.name),
  );
  if (state.status === 'ok') revalidatePath('/admin/servers');
  return state.status === 'ok' ? { ...state, value: { name: state.value.name } } : state;
}

export async function untrustServerAction(name: string) {
  const state = await runAction(trustServerSchema, { name }, (viewer, d) => untrustServer(viewer, d.name));
  revalidatePath('/admin/servers');
  return state.status === 'error' ? state.message : null;
}
