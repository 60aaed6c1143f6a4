import { redirect } from 'next/navigation';
import { SignInForm } from '@/components/auth/sign-in-form';
import { SsoButton } from '@/components/auth/sso-button';
import { Logo } from '@/components/shell/logo';
import { getViewer } from '@/lib/server/auth/session';
import { identity } from '@/lib/server/auth/auth';
import { signInErrorText } from '@/lib/identity/errors';

export const metadata = { title: 'Sign in' };

export default async function SignInPage({
  searchParams,
}: {
  searchParams: Promise<{ next?: string; error?: string }>;
}) {
  if (await getViewer()) redirect('/');
  const { next, error } = await searchParams;
  return (
    <main className="flex min-h-screen items-center justify-center px-4">
      <div className="w-full max-w-sm">
        <Logo className="mb-8 justify-center text-lg text-slate-900" />
        <div className="rounded-xl bg-white p-6 shadow-sm ring-1 ring-slate-200">
          <h1 className="text-base font-semibold text-slate-900">Sign in to the console</h1>
          <p className="mb-5 mt-1 text-sm text-slate-500">See what your agents did, and decide what they may do.</p>
          {error ? (
            <p
              data-testid="sign-in-failed"
              className="mb-4 rounded-md bg-rose-50 px-3 py-2 text-sm text-rose-700 ring-1 ring-inset ring-rose-200"
            >
              {signInErrorText(error)}
            </p>
          ) : null}
          {identity.oidc ? (
            <SsoButton label={identity.oidc.name} next={next} primary={!identity.passwordSignIn} />
          ) : null}
          {identity.oidc && identity.passwordSignIn ? (
            <p className="my-4 text-center text-xs uppercase tracking-wide text-slate-500">or with a password</p>
          ) : null}
          {identity.passwordSignIn ? <SignInForm next={next} /> : null}
        </div>
      </div>
    </main>
  );
}
