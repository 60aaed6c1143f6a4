'use client';
import { useState, useTransition } from 'react';
import { Button } from '@/components/ui/button';

export function RevokeButton({ what, revoke }: { what: string; revoke: () => Promise<string | null> }) {
  const [pending, start] = useTransition();
  const [error, setError] = useState<string | null>(null);
  return (
    <span className="inline-flex items-center gap-2">
      <Button
        size="sm"
        variant="danger"
        disabled={pending}
        onClick={() => {
          if (!window.confirm(`Revoke ${what}? Anything using it stops working at once.`)) return;
          start(async () => setError(await revoke()));
        }}
      >
        {pending ? 'Revoking…' : 'Revoke'}
      </Button>
      {error ? <span className="text-xs text-rose-600">{error}</span> : null}
    </span>
  );
}
