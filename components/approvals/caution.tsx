import type { ReactNode } from 'react';

/** A warning the reviewer must read before deciding: amber, with a sign that does not rely on colour. */
export function Caution({ children, testId }: { children: ReactNode; testId?: string }) {
  return (
    <div
      data-testid={testId}
      className="flex gap-2 rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-900 ring-1 ring-inset ring-amber-300"
    >
      <span aria-hidden className="font-bold">
        ⚠
      </span>
      <div className="min-w-0">
        <span className="sr-only">Warning: </span>
        {children}
      </div>
    </div>
  );
}
