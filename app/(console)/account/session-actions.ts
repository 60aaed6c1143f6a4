'use server';
import { revalidatePath } from 'next/cache';
import { done, runAction } from '@/lib/server/http/action';
import { signOut } from '@/lib/server/auth/auth';
import { endOwnSession, endOwnSessions } from '@/lib/server/users/sessions';
import { sessionIdSchema } from '@/lib/identity/schemas';
import { z } from 'zod';

export async function endSessionAction(sessionId: string) {
  const state = await runAction(sessionIdSchema, { sessionId }, (viewer, d) => endOwnSession(viewer, d.sessionId));
  revalidatePath('/account');
  return done(state);
}

/** Every session of one's own ends, this browser's too: back to sign-in. */
export async function signOutEverywhereAction(): Promise<void> {
  const state = await runAction(z.object({}), {}, (viewer) => endOwnSessions(viewer));
  if (state.status === 'error') throw new Error(state.message);
  await signOut({ redirectTo: '/sign-in' });
}
