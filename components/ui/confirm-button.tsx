'use client';
import { useState, useTransition } from 'react';
import { Button } from './button';
import { actionError, type ActionState } from '@/lib/action-state';

/** An action behind a confirmation (destructive unless said otherwise); shows the action's own error next to it. */
export function ConfirmButton({
  label,
  confirm,
  run,
  variant = 'danger',
  fieldLabel,
}: {
  label: string;
  confirm: string;
  run: () => Promise<ActionState<unknown>>;
  variant?: 'danger' | 'secondary';
  /** Show a field's message, so named, rather than the action's (see actionError). */
  fieldLabel?: string;
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
          start(async () => setError(actionError(await run(), fieldLabel)));
        }}
      >
        {pending ? 'Working…' : label}
      </Button>
      {error ? <span className="text-xs text-rose-600">{error}</span> : null}
    </span>
  );
}
