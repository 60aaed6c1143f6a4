import Link from 'next/link';
import { Logo } from '@/components/shell/logo';

/** The page a refused or failed sign-in lands on: what happened, what to do, a way back. */
export function SignInProblem({
  title,
  children,
  testId,
}: {
  title: string;
  children: React.ReactNode;
  testId: string;
}) {
  return (
    <main className="flex min-h-screen items-center justify-center px-4">
      <div className="w-full max-w-md">
        <Logo className="mb-8 justify-center text-lg text-slate-900" />
        <div className="rounded-xl bg-white p-6 shadow-sm ring-1 ring-slate-200" data-testid={testId}>
          <h1 className="text-base font-semibold text-slate-900">{title}</h1>
          <div className="mt-2 space-y-2 text-sm text-slate-600">{children}</div>
          <Link href="/sign-in" className="mt-5 inline-block text-sm font-medium text-indigo-600 hover:text-indigo-500">
            Back to sign-in
          </Link>
        </div>
      </div>
    </main>
  );
}
