import type { ReactNode } from 'react';

/** A definition list of label → value pairs; empty values show as a dash. */
export function Facts({ items }: { items: [string, ReactNode][] }) {
  return (
    <dl className="grid grid-cols-1 gap-x-6 gap-y-3 sm:grid-cols-2">
      {items.map(([label, value]) => (
        <div key={label} className="min-w-0">
          <dt className="text-xs font-medium text-slate-600">{label}</dt>
          <dd className="mt-0.5 break-words text-sm text-slate-900">
            {value === null || value === undefined || value === '' ? <span className="text-slate-500">—</span> : value}
          </dd>
        </div>
      ))}
    </dl>
  );
}
