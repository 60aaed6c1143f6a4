import { SignInProblem } from '@/components/auth/sign-in-problem';
import { signInErrorText } from '@/lib/identity/errors';

export const metadata = { title: 'Sign-in failed' };

// Auth.js sends failed sign-ins here (`?error=<type>`): a tampered or expired answer from the
// identity provider, a refused sign-in, a misconfiguration.
export default async function SignInErrorPage({ searchParams }: { searchParams: Promise<{ error?: string }> }) {
  const { error } = await searchParams;
  return (
    <SignInProblem title="Sign-in failed" testId="sign-in-failed">
      <p>{signInErrorText(error)}</p>
      <p>You are not signed in, and nothing was changed.</p>
    </SignInProblem>
  );
}
