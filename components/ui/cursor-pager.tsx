import Link from 'next/link';

/** Footer of a newest-first list read a page at a time: back to the start, or further back. */
export function CursorPager({
  count,
  noun,
  backHref,
  olderHref,
}: {
  count: number;
  noun: string;
  backHref: string | null;
  olderHref: string | null;
}) {
  return (
    <div className="mt-4 flex items-center justify-between text-sm">
      <span className="text-slate-500">
        {count} {noun} on this page
      </span>
      <div className="flex gap-4">
        {backHref ? (
          <Link className="font-medium text-slate-600 hover:text-slate-900" href={backHref}>
            Back to newest
          </Link>
        ) : null}
        {olderHref ? (
          <Link className="font-medium text-indigo-600 hover:text-indigo-500" href={olderHref} data-testid="next-page">
            Older {noun} →
          </Link>
        ) : null}
      </div>
    </div>
  );
}
