'use client';
import { useState } from 'react';
import { Button } from './button';

/** Shows a freshly created secret exactly once, with a copy button. */
export function SecretOnce({ label, secret }: { label: string; secret: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="rounded-md bg-amber-50 p-4 ring-1 ring-inset ring-amber-200" data-testid="secret-once">
      <p className="text-sm font-medium text-amber-900">{label}</p>
      <p className="mt-1 text-xs text-amber-800">Copy it now: it is shown only this once and cannot be recovered.</p>
      <div className="mt-3 flex items-center gap-2">
        <code
          data-testid="secret-value"
          className="min-w-0 flex-1 truncate rounded bg-white px-2 py-1.5 font-mono text-xs text-slate-900 ring-1 ring-amber-200"
        >
          {secret}
        </code>
        <Button
          size="sm"
          variant="secondary"
          type="button"
          onClick={async () => {
            await navigator.clipboard?.writeText(secret);
            setCopied(true);
          }}
        >
          {copied ? 'Copied' : 'Copy'}
        </Button>
      </div>
    </div>
  );
}
