import Link from 'next/link';
import { Badge, Card, Notice, PageHeader } from '@/components/ui/card';
import { Table, Td } from '@/components/ui/table';
import { formatDate } from '@/lib/format';
import { listAuditEntries, verifyAuditChainAs } from '@/lib/server/audit/audit';
import { getRetentionStatus } from '@/lib/server/retention/status';
import { getReplicaStatus, type ReplicaStatus } from '@/lib/server/db/replica';
import { describeRetention } from '@/lib/outcomes/retention';
import { requireViewer } from '@/lib/server/auth/session';
import { firstValues } from '@/lib/url';

export const metadata = { title: 'Audit log' };

export default async function AuditPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const viewer = await requireViewer('audit.read');
  const before = Number(firstValues(await searchParams).before) || undefined;
  const [verification, page, retention, replica] = await Promise.all([
    verifyAuditChainAs(viewer),
    listAuditEntries(viewer, before),
    getRetentionStatus(viewer),
    getReplicaStatus(viewer),
  ]);
  if (!verification.ok || !page.ok || !retention.ok || !replica.ok) throw new Error('the audit log refused an admin');
  const v = verification.value;
  const { setting, lastPurge } = retention.value;
  return (
    <>
      <PageHeader
        title="Audit log"
        description="Every state change and human decision, append-only and hash-chained: each entry's hash covers the one before it, so an edited, removed or inserted entry breaks the chain from there on."
      />
      <Card
        title="Chain verification"
        description="Recomputed from the first entry now, on every visit."
        className="mb-6"
      >
        {v.ok ? (
          <Notice tone="good" testId="audit-ok">
            Intact: {v.entries} entries.
          </Notice>
        ) : (
          <Notice tone="bad" testId="audit-broken">
            Broken at entry {v.firstBrokenEntry}: {v.reason}. {v.entries} entries verified before it.
          </Notice>
        )}
        <p className="mt-3 text-xs text-slate-500">
          Head hash, to anchor elsewhere (also <code className="font-mono">GET /api/v1/audit/verify</code> and{' '}
          <code className="font-mono">npm run cli -- audit:verify</code>):
        </p>
        <code className="mt-1 block break-all font-mono text-xs text-slate-800" data-testid="audit-head">
          {v.head}
        </code>
      </Card>
      <Table head={['#', 'When', 'Actor', 'Action', 'Target', 'Hash']} caption="Audit entries, newest first">
        {page.value.items.map((e) => (
          <tr key={e.seq} data-testid="audit-row">
            <Td className="tabular-nums text-slate-500">{e.seq}</Td>
            <Td className="text-xs">{formatDate(e.at)}</Td>
            <Td className="max-w-56">
              <span className="block truncate" title={e.actor}>
                {e.actor}
              </span>
            </Td>
            <Td>
              <Badge>{e.action}</Badge>
            </Td>
            {/* The target gives way (truncated, whole on hover) so the row fits its card. */}
            <Td className="w-full max-w-0 min-w-40 font-mono text-xs">
              <span className="block truncate" title={`${e.targetType}:${e.targetId}`}>
                {e.targetType}:{e.targetId}
              </span>
            </Td>
            <Td className="font-mono text-xs text-slate-500">{e.hash.slice(7, 19)}…</Td>
          </tr>
        ))}
      </Table>
      <p className="mt-4 text-xs text-slate-500" data-testid="retention">
        {'invalid' in setting ? (
          <span className="text-rose-700">{setting.invalid}.</span>
        ) : (
          <>
            {describeRetention(setting)}
            {setting.enabled ? ', purged hourly' : ''}.
          </>
        )}{' '}
        {lastPurge ? (
          <>
            Last purge: {formatDate(lastPurge.at)}, {lastPurge.deleted} deleted
            {lastPurge.kept ? `, ${lastPurge.kept} kept for approvals still in play` : ''} (action{' '}
            <code className="font-mono">outcomes.purge</code>).
          </>
        ) : (
          'No purge has deleted anything yet.'
        )}
      </p>
      <ReplicaLine status={replica.value} />
      {page.value.nextBefore ? (
        <div className="mt-4 text-right text-sm">
          <Link className="font-medium text-indigo-600" href={`/admin/audit?before=${page.value.nextBefore}`}>
            Older entries →
          </Link>
        </div>
      ) : null}
    </>
  );
}

/** Where the console's read-only pages read from, and why (DATABASE_REPLICA_URL). */
function ReplicaLine({ status }: { status: ReplicaStatus }) {
  return (
    <p className="mt-2 text-xs text-slate-500" data-testid="replica">
      {!status.configured ? (
        <>
          Reads: the primary only (no <code className="font-mono">DATABASE_REPLICA_URL</code>).
        </>
      ) : status.usable ? (
        <>
          Read replica: in use, {status.lagMs} ms behind the primary (bound {status.maxLagMs} ms, checked{' '}
          {formatDate(status.checkedAt)}). A person&apos;s reads stay on the primary for{' '}
          {Math.round(status.ownWriteWindowMs / 1000)} s after their own change.
        </>
      ) : (
        <span className="text-amber-700">
          Read replica: not in use, {status.reason}; every read goes to the primary
          {status.lagMs !== null ? ` (${status.lagMs} ms behind, bound ${status.maxLagMs} ms)` : ''}.
        </span>
      )}
    </p>
  );
}
