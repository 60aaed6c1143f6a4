import Link from 'next/link';
import { notFound } from 'next/navigation';
import { CategoryBadge, DeliveryBadge } from '@/components/outcomes/outcome-badges';
import { Badge, Card } from '@/components/ui/card';
import { Facts } from '@/components/ui/facts';
import { formatDate } from '@/lib/format';
import { annotationLabel } from '@/components/admin/tool-hints';
import {
  boundaryLabel,
  categoryLabel,
  deliveryLabel,
  isUnknownWrite,
  retryLabel,
  roundLabel,
  roundTime,
  taskStatusLabel,
} from '@/lib/outcomes/present';
import { findApprovalIdForGrant } from '@/lib/server/approvals';
import { getOutcome, listTaskRecords } from '@/lib/server/outcomes';
import { requireViewer } from '@/lib/server/auth/session';
import { StateCheckForm } from '@/components/outcomes/state-check-form';
import { authorize } from '@/lib/auth/permissions';
import { resolvedHow, verdictLabel } from '@/lib/outcomes/resolution';

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
  // The task's history: every record with the same task id in this organization, oldest first.
  const taskHistory = o.task ? await listTaskRecords(viewer, r.organization, o.task.id) : null;
  const history = taskHistory?.ok ? taskHistory.value : [];
  const current = history.at(-1);

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
        className={`mb-6 rounded-lg p-5 ring-1 ring-inset ${isUnknownWrite(c) && !r.resolution ? 'bg-rose-50 ring-rose-200' : c.delivery === 'completed' && c.category === 'ok' ? 'bg-emerald-50 ring-emerald-200' : 'bg-amber-50 ring-amber-200'}`}
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

      {r.resolution ? (
        <div className="mb-6" data-testid="resolution">
          <Card
            title={`Resolved: ${verdictLabel[r.resolution.verdict]}`}
            description={`${resolvedHow(r.resolution)[0].toUpperCase()}${resolvedHow(r.resolution).slice(1)}, ${formatDate(r.resolution.at)}.`}
            actions={
              <Badge tone={r.resolution.verdict === 'happened' ? 'good' : 'warn'}>
                {r.resolution.by === 'record' ? 'Later record' : 'State check'}
              </Badge>
            }
          >
            {r.resolution.note ? (
              <p className="text-sm text-slate-800" data-testid="resolution-note">
                {r.resolution.note}
              </p>
            ) : null}
            {r.resolution.recordId ? (
              <Link
                href={`/outcomes/${r.resolution.recordId}`}
                className="font-mono text-xs text-indigo-700 hover:underline"
                data-testid="resolution-record"
              >
                {r.resolution.recordId} (the settling record)
              </Link>
            ) : null}
          </Card>
        </div>
      ) : isUnknownWrite(c) && authorize(viewer, 'outcomes.state_check') ? (
        <div className="mb-6">
          <Card
            title="State check"
            description="Check the system this tool writes to, then record what you found. Nobody will be told to check again."
          >
            <StateCheckForm id={r.id} />
          </Card>
        </div>
      ) : null}

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
              ['Result type', code(o.resultType)],
              ['MCP task', o.task ? code(o.task.id) : null],
              ['Task status seen', o.task ? taskStatusLabel(o.task) : null],
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
              [
                'Classifier version',
                <span key="v" data-testid="classifier-version">
                  {r.classifierVersion}
                </span>,
              ],
            ]}
          />
        </Card>
        {o.task ? (
          <Card
            title="MCP task"
            description={`Every record of task ${o.task.id}, oldest first; the last is its current status.`}
          >
            <p className="mb-3 text-sm text-slate-800" data-testid="task-current">
              Current status:{' '}
              <span className="font-medium">
                {current?.status
                  ? taskStatusLabel({ status: current.status, expired: current.expired })
                  : taskStatusLabel(o.task)}
              </span>
            </p>
            <ol className="space-y-1 text-sm" data-testid="task-history">
              {history.map((h) => (
                <li key={h.id} className="flex flex-wrap items-baseline gap-x-2">
                  <span className="text-xs text-slate-500">{formatDate(h.occurredAt)}</span>
                  {h.id === r.id ? (
                    <span className="font-medium text-slate-900">
                      {h.status ? taskStatusLabel({ status: h.status, expired: h.expired }) : '—'} (this record)
                    </span>
                  ) : (
                    <Link href={`/outcomes/${h.id}`} className="text-indigo-700 hover:underline">
                      {h.status ? taskStatusLabel({ status: h.status, expired: h.expired }) : '—'}
                    </Link>
                  )}
                  <span className="text-xs text-slate-500">{categoryLabel(h.category)}</span>
                </li>
              ))}
            </ol>
          </Card>
        ) : null}
        {o.rounds?.length ? (
          <Card
            title="Rounds before the answer"
            description="Each time the call was answered with input_required before its end, from its first request: who asked and for what kind of input, never the question or the answer."
          >
            <ol className="space-y-1 text-sm" data-testid="rounds">
              {o.rounds.map((round, i) => (
                <li key={i} className="grid grid-cols-[5.5rem_minmax(0,1fr)] items-baseline gap-x-3">
                  <span className="font-mono text-xs tabular-nums text-slate-500">{roundTime(round.atMs)}</span>
                  <span className="text-slate-900">{roundLabel(round)}</span>
                </li>
              ))}
            </ol>
          </Card>
        ) : null}
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
