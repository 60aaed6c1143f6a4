'use client';
import { trustServerAction, untrustServerAction } from '@/app/(console)/admin/servers/actions';
import { ConfirmButton } from '@/components/ui/confirm-button';

/** Trust or stop trusting a server from the inventory; both change what policy believes, so both ask first. */
export function ServerTrustToggle({ server, trusted }: { server: string; trusted: boolean }) {
  if (trusted) {
    return (
      <ConfirmButton
        label="Stop trusting"
        confirm={`Stop trusting ${server}? Its tools' annotations will be ignored from now on: every tool counts as destructive and open-world.`}
        run={untrustServerAction.bind(null, server)}
      />
    );
  }
  return (
    <ConfirmButton
      label="Trust server"
      variant="secondary"
      fieldLabel="Server name"
      confirm={`Trust ${server}? Its tools' annotations will count: tools it calls read-only will need no approval.`}
      run={trustServerAction.bind(null, server)}
    />
  );
}
