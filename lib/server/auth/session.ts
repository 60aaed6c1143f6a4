import 'server-only';
import { cache } from 'react';
import { forbidden, redirect } from 'next/navigation';
import { auth } from './auth';
import { findSessionViewer } from '../users/sessions';
import { authorize, type Action, type Viewer } from '@/lib/auth/permissions';

/**
 * The one place that reads the session: the signed-in, enabled user with their current role, and
 * only while the session the cookie names is live (not ended, of the person's current version).
 */
export const getSession = cache(async (): Promise<{ viewer: Viewer; sessionId: string } | null> => {
  const session = await auth();
  const userId = session?.user?.id;
  const { sessionId, sessionVersion } = session ?? {};
  if (!userId || !sessionId || typeof sessionVersion !== 'number') return null;
  const viewer = await findSessionViewer(userId, sessionId, sessionVersion);
  return viewer ? { viewer, sessionId } : null;
});

export const getViewer = cache(async (): Promise<Viewer | null> => (await getSession())?.viewer ?? null);

/** For pages: the viewer, or a redirect to sign-in; `forbidden()` when the role may not. */
export async function requireViewer(action: Action = 'console.view'): Promise<Viewer> {
  const viewer = await getViewer();
  if (!viewer) redirect('/sign-in');
  if (!authorize(viewer, action)) forbidden();
  return viewer;
}
