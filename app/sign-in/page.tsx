import { redirect } from 'next/navigation';
import { SignInForm } from '@/components/auth/sign-in-form';
import { Logo } from '@/components/shell/logo';
import { getViewer } from '@/lib/server/http/session';

export const metadata = { title: 'Sign in' };

export default async function SignInPage({ searchParams }: { searchParams: Promise<{ next?: string }> }) {
  if (await getViewer()) redirect('/');
  const { next } = await searchParams;
  return (
    <main className="flex min-h-screen items-center justify-center px-4">
      <div className="w-full max-w-sm">
        <Logo className="mb-8 justify-center text-lg text-slate-900" />
        <div className="rounded-xl bg-white p-6 shadow-sm ring-1 ring-slate-200">
          <h1 className="text-base font-semibold text-slate-900">Sign in to the console</h1>
          <p className="mb-5 mt-1 text-sm text-slate-500">See what your agents did, and decide what they may do.</p>
          <SignInForm next={next} />
        </div>
      </div>
    </main>
  );
}
