'use server';
import { revalidatePath } from 'next/cache';
import { z } from 'zod';
import { stateCheckBodySchema } from '@/lib/outcomes/resolution';
import { runAction } from '@/lib/server/http/action';
import { recordStateCheck } from '@/lib/server/outcomes';

const stateCheckInput = stateCheckBodySchema.extend({ id: z.uuid() });

/** "It happened" / "it did not happen" on an unresolved unknown write, with a required note. */
export async function stateCheckAction(_prev: unknown, form: FormData) {
  const input = { id: form.get('id'), verdict: form.get('verdict'), note: form.get('note') };
  const state = await runAction(stateCheckInput, input, (viewer, data) =>
    recordStateCheck(viewer, data.id, { verdict: data.verdict, note: data.note }),
  );
  // On a conflict the page stays as it was, with the message naming what resolved it first.
  if (state.status !== 'ok') return state;
  revalidatePath(`/outcomes/${String(input.id)}`);
  revalidatePath(`/incidents/${encodeURIComponent(state.value.requestRef)}`);
  return { ...state, value: { verdict: state.value.resolution?.verdict ?? null } };
}
