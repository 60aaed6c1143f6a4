import Link from 'next/link';

/** Footer of a newest-first (or oldest-first) list read a page at a time: back to the start, or further back. */
export function CursorPager({
  count,
  noun,
  backHref,
  olderHref,
  oldestFirst = false,
}: {
  count: number;
  noun: string;
  backHref: string | null;
  olderHref: string | null;
  /** The list reads oldest first: the links say so. */
  oldestFirst?: boolean;
}) {
  return (
    <div className="mt-4 flex items-center justify-between text-sm">
      <span className="text-slate-500">
        {count} {noun} on this page
      </span>
      <div className="flex gap-4">
        {backHref ? (
          <Link className="font-medium text-slate-600 hover:text-slate-900" href={backHref}>
            {oldestFirst ? 'Back to oldest' : 'Back to newest'}
          </Link>
        ) : null}
        {olderHref ? (
          <Link className="font-medium text-indigo-600 hover:text-indigo-500" href={olderHref} data-testid="next-page">
            {oldestFirst ? 'Newer' : 'Older'} {noun} →
          </Link>
        ) : null}
      </div>
    </div>
  );
}
