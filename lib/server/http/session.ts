import 'server-only';
import { cache } from 'react';
import { forbidden, redirect } from 'next/navigation';
import { auth } from './auth';
import { findActiveViewer } from '../data/users';
import { authorize, type Action, type Viewer } from '@/lib/auth/permissions';

/** The one place that reads the session: the signed-in, enabled user with their current role. */
export const getViewer = cache(async (): Promise<Viewer | null> => {
  const session = await auth();
  const userId = session?.user?.id;
  return userId ? findActiveViewer(userId) : null;
});

/** For pages: the viewer, or a redirect to sign-in; `forbidden()` when the role may not. */
export async function requireViewer(action: Action = 'console.view'): Promise<Viewer> {
  const viewer = await getViewer();
  if (!viewer) redirect('/sign-in');
  if (!authorize(viewer, action)) forbidden();
  return viewer;
}
