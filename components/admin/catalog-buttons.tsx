'use client';
import { acceptToolAction, setHoldNewToolsAction } from '@/app/(console)/admin/tools/actions';
import { ConfirmButton } from '@/components/ui/confirm-button';

/** Accepts the held definition shown beside it (by its hash): the gateway shows the tool again. */
export function AcceptToolButton({ server, tool, hash }: { server: string; tool: string; hash: string }) {
  return (
    <ConfirmButton
      label="Accept change"
      variant="secondary"
      confirm={`Accept the new definition of ${tool} on ${server}? The gateway will show it to models again, as shown here.`}
      run={acceptToolAction.bind(null, server, tool, hash)}
    />
  );
}

/** Hold new tools of a server until an admin accepts them, or accept them at their first sighting. */
export function HoldNewToolsToggle({ server, hold }: { server: string; hold: boolean }) {
  return hold ? (
    <ConfirmButton
      label="Accept new tools"
      variant="secondary"
      confirm={`Accept tools first seen on ${server} at once? They will be shown to models without review.`}
      run={setHoldNewToolsAction.bind(null, server, false)}
    />
  ) : (
    <ConfirmButton
      label="Hold new tools"
      variant="secondary"
      confirm={`Hold tools first seen on ${server} until an admin accepts them? The gateway hides them meanwhile.`}
      run={setHoldNewToolsAction.bind(null, server, true)}
    />
  );
}
