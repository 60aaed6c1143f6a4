'use client';
import { useState, useTransition } from 'react';
import { trustServerAction, untrustServerAction } from '@/app/(console)/admin/tools/actions';
import { Button } from '@/components/ui/button';
import { ConfirmButton } from '@/components/ui/confirm-button';

/** Trust or stop trusting a server from the inventory; both change what policy believes, so both ask first. */
export function ServerTrustToggle({ server, trusted }: { server: string; trusted: boolean }) {
  const [pending, start] = useTransition();
  const [error, setError] = useState<string | null>(null);
  if (trusted) {
    return <ConfirmButton label="Stop trusting" confirm={`Stop trusting ${server}? Its tools' annotations will be ignored from now on: every tool counts as destructive and open-world.`} run={untrustServerAction.bind(null, server)} />;
  }
  return (
    <span className="inline-flex items-center gap-2">
      <Button
        size="sm"
        variant="secondary"
        disabled={pending}
        onClick={() => {
          if (!window.confirm(`Trust ${server}? Its tools' annotations will count: tools it calls read-only will need no approval.`)) return;
          start(async () => setError(await trustServerAction(server)));
        }}
      >
        {pending ? 'Working…' : 'Trust server'}
      </Button>
      {error ? <span className="text-xs text-rose-600">{error}</span> : null}
    </span>
  );
}
