import Link from 'next/link';
import { notFound } from 'next/navigation';
import { CategoryBadge, DeliveryBadge } from '@/components/outcomes/outcome-badges';
import { Badge, Card } from '@/components/ui/card';
import { Facts } from '@/components/ui/facts';
import { formatDate } from '@/lib/format';
import { annotationLabel } from '@/components/admin/tool-hints';
import { boundaryLabel, categoryLabel, deliveryLabel, isUnknownWrite, retryLabel } from '@/lib/outcomes/present';
import { findApprovalIdForGrant } from '@/lib/server/data/approvals';
import { getOutcome } from '@/lib/server/data/outcomes';
import { requireViewer } from '@/lib/server/http/session';

export const metadata = { title: 'Outcome record' };

const code = (v: unknown) =>
  v === null || v === undefined ? null : <code className="font-mono text-xs">{String(v)}</code>;
const yesNo = (v: boolean | null | undefined) => (v === undefined || v === null ? null : v ? 'yes' : 'no');

export default async function OutcomePage({ params }: { params: Promise<{ id: string }> }) {
  const viewer = await requireViewer('outcomes.read');
  const { id } = await params;
  const found = await getOutcome(viewer, id);
  if (!found.ok) notFound();
  const r = found.value;
  const c = r.classification;
  const o = r.observed;
  const a = r.tool.annotations;
  const approvalId = await findApprovalIdForGrant(viewer, r.grantId);

  return (
    <>
      <nav className="mb-4 text-sm">
        <Link href="/outcomes" className="text-slate-500 hover:text-slate-800">
          ← Outcomes
        </Link>
      </nav>
      <div className="mb-6 flex flex-wrap items-start justify-between gap-4">
        <div>
          <h1 className="font-mono text-lg font-semibold text-slate-900">
            {r.tool.name} <span className="text-slate-500">on</span> {r.server}
          </h1>
          <p className="mt-1 text-sm text-slate-600">{r.summary ?? 'No summary was sent.'}</p>
        </div>
        <div className="flex items-center gap-2">
          <DeliveryBadge delivery={c.delivery} category={c.category} />
          <CategoryBadge category={c.category} />
        </div>
      </div>

      <div
        className={`mb-6 rounded-lg p-5 ring-1 ring-inset ${isUnknownWrite(c) ? 'bg-rose-50 ring-rose-200' : c.delivery === 'completed' && c.category === 'ok' ? 'bg-emerald-50 ring-emerald-200' : 'bg-amber-50 ring-amber-200'}`}
      >
        <p className="text-xs font-semibold uppercase tracking-wide text-slate-600">What was and was not done</p>
        <p className="mt-1 text-base font-medium text-slate-900" data-testid="what-happened">
          {c.whatHappened}
        </p>
        <p className="mt-3 text-xs font-semibold uppercase tracking-wide text-slate-600">
          Next step · {retryLabel[c.retry]}
        </p>
        <p className="mt-1 text-sm text-slate-800" data-testid="next-step">
          {c.nextStep}
        </p>
      </div>

      <div className="grid gap-6 lg:grid-cols-2">
        <Card title="What the caller observed">
          <Facts
            items={[
              ['Sent', yesNo(o.sent)],
              ['Blocked locally', code(o.clientBlock)],
              ['HTTP status', code(o.httpStatus)],
              ['Auth challenge', code(o.authError)],
              ['JSON-RPC error code', code(o.jsonRpcErrorCode)],
              ['Client error', code(o.clientError)],
              ['Tool result isError', yesNo(o.result?.isError)],
              ['Declared error category', code(o.result?.errorCategory)],
              ['Output validation', code(o.result?.outputValidation)],
              ['Duration', r.durationMs === null ? null : `${r.durationMs} ms`],
            ]}
          />
        </Card>
        <Card title="Classification" description={`Boundary, delivery and category from the shared classifier.`}>
          <Facts
            items={[
              ['Boundary', boundaryLabel[c.boundary]],
              ['Delivery', deliveryLabel[c.delivery]],
              ['Category', categoryLabel(c.category)],
              ['Retry', retryLabel[c.retry]],
              ['Treated as read-only', yesNo(c.readOnly)],
            ]}
          />
        </Card>
        <Card
          title="Tool annotations"
          description={
            r.annotationsTrusted
              ? 'The server was trusted when this was classified: its annotations counted.'
              : 'The server was not trusted: these hints are shown but did not count (MCP defaults apply: a destructive, open-world write).'
          }
          actions={r.annotationsTrusted ? <Badge tone="good">Trusted</Badge> : <Badge tone="warn">Untrusted</Badge>}
        >
          <Facts
            items={[
              [annotationLabel.readOnlyHint, yesNo(a?.readOnlyHint)],
              [annotationLabel.destructiveHint, yesNo(a?.destructiveHint)],
              [annotationLabel.idempotentHint, yesNo(a?.idempotentHint)],
              [annotationLabel.openWorldHint, yesNo(a?.openWorldHint)],
            ]}
          />
        </Card>
        <Card title="Identity">
          <Facts
            items={[
              [
                'Request reference',
                <Link
                  key="ref"
                  href={`/incidents/${encodeURIComponent(r.requestRef)}`}
                  className="font-mono text-xs text-indigo-700 hover:underline"
                  data-testid="incident-link"
                >
                  {r.requestRef} (incident)
                </Link>,
              ],
              ['Idempotency key', code(r.idempotencyKey)],
              ['Attempt', r.attempt],
              [
                'Grant',
                approvalId ? (
                  <Link
                    key="grant"
                    href={`/approvals/${approvalId}`}
                    className="font-mono text-xs text-indigo-700 hover:underline"
                    data-testid="grant-link"
                  >
                    {r.grantId} (approval)
                  </Link>
                ) : (
                  code(r.grantId)
                ),
              ],
              ['Organization', r.organization],
              ['Principal', r.principal],
              ['Agent', r.agent],
              ['Occurred', formatDate(r.occurredAt)],
              ['Received', formatDate(r.receivedAt)],
              ['Event id', code(r.eventId)],
              ['MCP request id (display only)', code(r.mcpRequestId)],
              ['Argument digest', code(r.argsDigest)],
              ['Server version', r.serverVersion],
              ['Protocol version', r.protocolVersion],
            ]}
          />
        </Card>
      </div>
    </>
  );
}
