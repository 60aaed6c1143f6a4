'use client';
import { useState, useTransition } from 'react';
import { Button } from './button';

/** An action behind a confirmation (destructive unless said otherwise); shows the action's own error next to it. */
export function ConfirmButton({
  label,
  confirm,
  run,
  variant = 'danger',
}: {
  label: string;
  confirm: string;
  run: () => Promise<string | null>;
  variant?: 'danger' | 'secondary';
}) {
  const [pending, start] = useTransition();
  const [error, setError] = useState<string | null>(null);
  return (
    <span className="inline-flex items-center gap-2">
      <Button
        size="sm"
        variant={variant}
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
