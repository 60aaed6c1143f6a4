import { Badge } from '@/components/ui/card';

type Annotations = {
  readOnlyHint?: boolean | null;
  destructiveHint?: boolean | null;
  idempotentHint?: boolean | null;
  openWorldHint?: boolean | null;
};
type Hints = { readOnly: boolean; destructive: boolean; idempotent: boolean; openWorld: boolean };

/** MCP's annotation names as people read them (the protocol's camelCase stays in the tooltip). */
export const annotationLabel = {
  readOnlyHint: 'Read-only hint',
  destructiveHint: 'Destructive hint',
  idempotentHint: 'Idempotent hint',
  openWorldHint: 'Open-world hint',
} as const satisfies Record<keyof Annotations, string>;

const advertisedKeys = [
  ['Read-only', 'readOnlyHint'],
  ['Destructive', 'destructiveHint'],
  ['Idempotent', 'idempotentHint'],
  ['Open-world', 'openWorldHint'],
] as const;

/** The hints exactly as the tool last advertised them; a dash where it said nothing. */
export function AdvertisedHints({ annotations }: { annotations: Annotations | null }) {
  if (!annotations) return <span className="text-xs text-slate-500">none advertised</span>;
  return (
    <span className="flex flex-col text-xs text-slate-600">
      {advertisedKeys.map(([label, key]) => {
        const v = annotations[key];
        return (
          <span key={key} title={key}>
            {label}{' '}
            <span className={v == null ? 'text-slate-500' : 'text-slate-900'}>{v == null ? '—' : String(v)}</span>
          </span>
        );
      })}
    </span>
  );
}

/** What policy believes of the tool, as words. */
export function BelievedHints({ hints, trusted }: { hints: Hints; trusted: boolean }) {
  return (
    <span className="flex flex-col gap-1">
      <span className="flex w-28 flex-wrap gap-1">
        {hints.readOnly ? <Badge tone="good">read-only</Badge> : <Badge>writes</Badge>}
        {!hints.readOnly && hints.destructive ? <Badge tone="bad">destructive</Badge> : null}
        {hints.idempotent ? <Badge>idempotent</Badge> : null}
        {hints.openWorld ? <Badge tone="warn">open-world</Badge> : null}
      </span>
      {trusted ? null : <span className="text-xs text-slate-500">MCP defaults: server untrusted</span>}
    </span>
  );
}
