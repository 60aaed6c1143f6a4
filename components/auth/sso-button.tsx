'use client';
import { useFormStatus } from 'react-dom';
import { ssoSignInAction } from '@/app/sign-in/actions';
import { Button } from '@/components/ui/button';

function Submit({ label, primary }: { label: string; primary: boolean }) {
  const { pending } = useFormStatus();
  return (
    <Button type="submit" variant={primary ? 'primary' : 'secondary'} className="w-full" disabled={pending}>
      {pending ? 'Redirecting…' : `Sign in with ${label}`}
    </Button>
  );
}

/** "Sign in with …": off to the company's identity provider and back to `next`. */
export function SsoButton({ label, next, primary }: { label: string; next?: string; primary: boolean }) {
  return (
    <form action={ssoSignInAction}>
      <input type="hidden" name="next" value={next ?? '/'} />
      <Submit label={label} primary={primary} />
    </form>
  );
}
