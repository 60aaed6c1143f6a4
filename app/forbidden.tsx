import Link from 'next/link';

export default function Forbidden() {
  return (
    <main className="flex min-h-screen items-center justify-center px-4">
      <div className="max-w-md text-center" data-testid="forbidden">
        <p className="text-sm font-semibold text-rose-600">403</p>
        <h1 className="mt-2 text-xl font-semibold text-slate-900">Your role cannot open this page</h1>
        <p className="mt-2 text-sm text-slate-600">Ask an admin if you need access. Nothing was changed.</p>
        <Link href="/" className="mt-6 inline-block text-sm font-medium text-indigo-600 hover:text-indigo-500">
          Back to the overview
        </Link>
      </div>
    </main>
  );
}
