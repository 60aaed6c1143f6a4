const widths = ['max-w-36', 'max-w-32', 'max-w-80', 'max-w-28', 'max-w-32', 'max-w-24'];

/** What a page shows while its data loads (loading.tsx): its title and grey rows where the list will be. */
export function PageSkeleton({ title, rows = 8, columns = 5 }: { title?: string; rows?: number; columns?: number }) {
  return (
    <div role="status" aria-live="polite" data-testid="page-loading">
      <span className="sr-only">Loading{title ? ` ${title}` : ''}…</span>
      <div className="mb-6" aria-hidden>
        {title ? (
          <p className="text-xl font-semibold tracking-tight text-slate-900">{title}</p>
        ) : (
          <div className="h-7 w-48 animate-pulse rounded bg-slate-200" />
        )}
        <div className="mt-2 h-4 w-full max-w-xl animate-pulse rounded bg-slate-200" />
      </div>
      <div aria-hidden className="overflow-hidden rounded-lg bg-white shadow-xs ring-1 ring-slate-200">
        <div className="h-8 bg-slate-50" />
        {Array.from({ length: rows }, (_, r) => (
          <div key={r} className="flex h-10 items-center gap-4 border-t border-slate-100 px-3">
            {Array.from({ length: columns }, (_, c) => (
              <div key={c} className={`h-3 flex-1 animate-pulse rounded bg-slate-200 ${widths[c % widths.length]}`} />
            ))}
          </div>
        ))}
      </div>
    </div>
  );
}
