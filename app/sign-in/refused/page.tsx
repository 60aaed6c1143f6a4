import { SignInProblem } from '@/components/auth/sign-in-problem';

export const metadata = { title: 'Sign-in refused' };

// The reasons lib/server/auth/auth-oidc.ts gives; anything else reads as "invalid".
const reasons: Record<string, { title: string; text: string }> = {
  no_role: {
    title: 'Your account has no access to Countersign',
    text: 'The identity provider signed you in, but none of your groups or roles is mapped to a Countersign role. Ask an administrator to add you to a group that gives access.',
  },
  disabled: {
    title: 'Your Countersign account is disabled',
    text: 'An administrator has disabled your account in Countersign. Signing in through the identity provider does not enable it again.',
  },
  no_email: {
    title: 'The identity provider gave no e-mail address',
    text: 'Countersign needs a verified e-mail address claim to know who you are. Ask an administrator to include the email claim.',
  },
  no_principal: {
    title: 'The identity provider gave no principal',
    text: 'The claim configured as your principal is missing or empty. Ask an administrator to check AUTH_OIDC_PRINCIPAL_CLAIM.',
  },
  conflict: {
    title: 'This e-mail address belongs to another identity',
    text: 'A Countersign account with your e-mail address is already linked to a different identity at the provider. Ask an administrator.',
  },
  invalid: {
    title: 'Sign-in refused',
    text: 'The identity provider’s answer was incomplete. Try again, or ask an administrator.',
  },
};

export default async function SignInRefusedPage({ searchParams }: { searchParams: Promise<{ reason?: string }> }) {
  const { reason } = await searchParams;
  const { title, text } = reasons[reason ?? ''] ?? reasons.invalid;
  return (
    <SignInProblem title={title} testId="sign-in-refused">
      <p>{text}</p>
      <p>You are not signed in.</p>
    </SignInProblem>
  );
}
