import Link from 'next/link';

export default function NotFound() {
  return (
    <main className="flex min-h-screen items-center justify-center px-4">
      <div className="max-w-md text-center">
        <p className="text-sm font-semibold text-indigo-600">404</p>
        <h1 className="mt-2 text-xl font-semibold text-slate-900">Nothing here</h1>
        <p className="mt-2 text-sm text-slate-600">The page or record you asked for does not exist.</p>
        <Link href="/" className="mt-6 inline-block text-sm font-medium text-indigo-600 hover:text-indigo-500">
          Back to the overview
        </Link>
      </div>
    </main>
  );
}
