'use client';
import { useState, useTransition } from 'react';
import { Button } from './button';

/** A destructive action behind a confirmation; shows the action's own error next to it. */
export function ConfirmButton({ label, confirm, run }: { label: string; confirm: string; run: () => Promise<string | null> }) {
  const [pending, start] = useTransition();
  const [error, setError] = useState<string | null>(null);
  return (
    <span className="inline-flex items-center gap-2">
      <Button
        size="sm"
        variant="danger"
        disabled={pending}
        onClick={() => {
          if (!window.confirm(confirm)) return;
          start(async () => setError(await run()));
        }}
      >
        {pending ? 'Working…' : label}
      </Button>
      {error ? <span className="text-xs text-rose-600">{error}</span> : null}
    </span>
  );
}
