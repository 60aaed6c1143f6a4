'use client';
import { Button } from '@/components/ui/button';

// What a page shows when rendering it failed on the server, most often because the database is
// restarting or out of reach. Production hides the error itself; the digest matches the server log.
export default function PageError({ error, retry }: { error: unknown; retry: () => void }) {
  const digest = error instanceof Error && 'digest' in error && typeof error.digest === 'string' ? error.digest : null;
  return (
    <main className="flex min-h-screen items-center justify-center px-4">
      <div className="max-w-md text-center" data-testid="page-error">
        <p className="text-sm font-semibold text-rose-600">Temporarily unavailable</p>
        <h1 className="mt-2 text-xl font-semibold text-slate-900">This page could not be loaded</h1>
        <p className="mt-2 text-sm text-slate-600">
          The console could not read what this page needs, usually because its database is restarting or out of reach.
          Try again in a moment.
        </p>
        <Button className="mt-6" onClick={() => retry()}>
          Try again
        </Button>
        {digest ? <p className="mt-6 text-xs text-slate-500">Reference for the server log: {digest}</p> : null}
      </div>
    </main>
  );
}
