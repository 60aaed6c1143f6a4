'use server';
import { AuthError } from 'next-auth';
import { identity, signIn, SignInUnavailable } from '@/lib/server/auth/auth';
import { signInSchema } from '@/lib/users/schemas';
import type { ActionState } from '@/lib/action-state';

// A failure gives the e-mail back as typed, so the form keeps it.
const refused = (message: string, email: string): ActionState => ({
  status: 'error',
  message,
  input: { email },
  at: Date.now(),
});

/** Only same-site paths: an attacker-supplied `next` must never send people elsewhere. */
function safeNext(next: FormDataEntryValue | null): string {
  return typeof next === 'string' && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\')
    ? next
    : '/';
}

export async function signInAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  const email = String(form.get('email') ?? '');
  if (!identity.passwordSignIn) return refused('Password sign-in is turned off here: use single sign-on.', email);
  const parsed = signInSchema.safeParse({ email, password: form.get('password') });
  if (!parsed.success) return refused('Enter your email address and password.', email);
  try {
    await signIn('credentials', { ...parsed.data, redirectTo: safeNext(form.get('next')) });
    return { status: 'ok', value: undefined, at: Date.now() };
  } catch (err) {
    // signIn redirects by throwing NEXT_REDIRECT: only Auth.js' own errors mean "wrong credentials".
    if (err instanceof SignInUnavailable)
      return refused('The console cannot reach its database right now. Try again in a moment.', email);
    if (err instanceof AuthError) return refused('Wrong email or password, or the account is disabled.', email);
    throw err;
  }
}

/** Off to the identity provider (Auth.js sets state, nonce and the PKCE verifier in cookies). */
export async function ssoSignInAction(form: FormData): Promise<void> {
  if (!identity.oidc) throw new Error('Single sign-on is not configured.');
  await signIn('oidc', { redirectTo: safeNext(form.get('next')) });
}
