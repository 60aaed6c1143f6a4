'use server';
import { signOut } from '@/lib/server/http/auth';

export async function signOutAction(): Promise<void> {
  await signOut({ redirectTo: '/sign-in' });
}
