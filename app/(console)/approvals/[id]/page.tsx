import Link from 'next/link';
import { notFound } from 'next/navigation';
import { DecisionForm } from '@/components/approvals/decision-form';
import { RevokeForm } from '@/components/approvals/revoke-form';
import { RiskBadges } from '@/components/approvals/risk-badges';
import { WhatWillRun } from '@/components/approvals/what-will-run';
import { CategoryBadge, DeliveryBadge } from '@/components/outcomes/outcome-badges';
import { Badge, Card, Notice } from '@/components/ui/card';
import { Facts } from '@/components/ui/facts';
import { authorize } from '@/lib/auth/permissions';
import { statusLabel, statusTone } from '@/lib/approvals/present';
import { describeSettled } from '@/lib/approvals/view';
import { formatDate } from '@/lib/format';
import { BadgeSync } from '@/components/approvals/pending-badge';
import {
  countPendingApprovals,
  getApproval,
  listApprovals,
  type ApprovalView,
  type DecisionView,
} from '@/lib/server/approvals';
import { listOutcomes } from '@/lib/server/outcomes';
import { catalogEntry } from '@/lib/server/catalog/catalog';
import { requireViewer } from '@/lib/server/auth/session';

export const metadata = { title: 'Approval request' };

/** What the viewer's decision did, in a sentence. */
function confirmation(a: ApprovalView, mine: DecisionView): string {
  const approvals = a.decisions.filter((d) => d.decision === 'approve').length;
  if (mine.decision === 'deny')
    return `You denied this request at ${formatDate(mine.at)}. A denial is final: the agent's call will not run.`;
  const you = `You approved this request at ${formatDate(mine.at)}.`;
  if (a.status === 'approved' || a.status === 'redeemed')
    return `${you} It is approved: the agent may run it once, within ${Math.round(a.grantTtlSeconds / 60)} min.`;
  if (a.status === 'pending')
    return `${you} It has ${approvals} of ${a.requiredApprovals} approvals and now waits for another reviewer.`;
  return `${you} ${describeSettled(a, formatDate)}`;
}

const yesNo = (v: boolean | null | undefined) => (v === undefined || v === null ? 'not stated' : v ? 'yes' : 'no');

type Search = Promise<{ decide?: string | string[]; done?: string | string[] }>;
const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

export default async function ApprovalPage({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>;
  searchParams: Search;
}) {
  const viewer = await requireViewer('approvals.read');
  const { id } = await params;
  const search = await searchParams;
  const decide = one(search.decide);
  const initialDecision = decide === 'approve' || decide === 'deny' ? decide : null;
  const done = one(search.done);
  const found = await getApproval(viewer, id);
  if (!found.ok) notFound();
  const a = found.value;
  const [evidence, entry] = await Promise.all([
    listOutcomes(viewer, { requestRef: a.requestRef, readOnly: true, limit: 20 }),
    catalogEntry(viewer, a.server, a.tool.name),
  ]);
  const catalog =
    entry.ok && entry.value ? { ...entry.value, href: `/admin/tools?server=${encodeURIComponent(a.server)}` } : null;
  const approvals = a.decisions.filter((d) => d.decision === 'approve').length;
  const ownRequest = viewer.principalId === a.principal;
  const mine = a.decisions.find((d) => d.reviewer === viewer.email);
  const alreadyDecided = !!mine;
  const next =
    mine && done ? await listApprovals(viewer, { status: 'pending', queue: 'needs_my_decision', limit: 1 }) : null;
  const nextId = next?.ok ? next.value.items[0]?.id : undefined;
  const revocable =
    authorize(viewer, 'approval.revoke') &&
    (a.status === 'pending' || (a.status === 'approved' && a.grant?.state === 'active'));

  return (
    <>
      <nav className="mb-4 text-sm">
        <Link href="/approvals" className="text-slate-500 hover:text-slate-800">
          ← Approvals
        </Link>
      </nav>
      <div className="mb-6 flex flex-wrap items-start justify-between gap-4">
        <div className="min-w-0 flex-1">
          <h1 className="break-all font-mono text-lg font-semibold text-slate-900">
            {a.tool.name} <span className="text-slate-500">on</span> {a.server}
          </h1>
          <p className="mt-1 max-w-3xl break-words text-base text-slate-800" data-testid="approval-summary">
            <span className="text-sm text-slate-600">The agent says: </span>
            {a.summary}
          </p>
          <div className="mt-2 flex flex-wrap items-center gap-x-4 gap-y-1 text-sm text-slate-600">
            <RiskBadges annotations={a.tool.annotations} trusted={a.annotationsTrusted} />
            <span className="tabular-nums" data-testid="approval-count">
              {approvals} of {a.requiredApprovals} approvals
            </span>
            {a.status === 'pending' ? <span>Decide before {formatDate(a.expiresAt)}</span> : null}
          </div>
        </div>
        <span data-testid="approval-status">
          <Badge tone={statusTone[a.status]}>{statusLabel[a.status]}</Badge>
        </span>
      </div>

      {mine && done ? (
        <div className="mb-6">
          <Notice tone="good" testId="decision-done">
            <BadgeSync count={await countPendingApprovals(viewer)} />
            {confirmation(a, mine)}{' '}
            <Link href={nextId ? `/approvals/${nextId}` : '/approvals'} className="font-medium underline">
              {nextId ? 'Next request needing your decision →' : 'Back to the queue'}
            </Link>
          </Notice>
        </div>
      ) : null}
      <div className="grid gap-6 lg:grid-cols-3">
        <div className="space-y-6 lg:col-span-2">
          <WhatWillRun
            args={a.arguments}
            note={a.argumentsNote}
            sent={a.argumentsSent}
            description={a.tool.description}
            summary={a.summary}
            tool={a.tool.name}
            server={a.server}
            argsDigest={a.argsDigest}
            resource={a.resource}
            grantTtlSeconds={a.grantTtlSeconds}
            catalog={catalog}
            when={formatDate}
          />
          <Card title="Who asks, on whose behalf">
            <Facts
              items={[
                ['On behalf of (principal)', a.principal],
                ['Agent', a.agent],
                ['Organization', a.organization],
                [
                  'Request reference',
                  <Link
                    key="r"
                    href={`/incidents/${encodeURIComponent(a.requestRef)}`}
                    className="font-mono text-xs text-indigo-700 hover:underline"
                  >
                    {a.requestRef}
                  </Link>,
                ],
                ['Requested', formatDate(a.createdAt)],
                ['Decide before', formatDate(a.expiresAt)],
              ]}
            />
          </Card>
          <Card
            title="Tool and risk"
            description={
              a.annotationsTrusted
                ? 'The server is trusted: its annotations count.'
                : 'The server is not trusted: its annotations are shown but policy treats the tool as destructive and open-world.'
            }
          >
            <div className="mb-3">
              <RiskBadges annotations={a.tool.annotations} trusted={a.annotationsTrusted} />
            </div>
            <Facts
              items={[
                ['Read-only (hint)', yesNo(a.tool.annotations?.readOnlyHint)],
                ['Destructive (hint)', yesNo(a.tool.annotations?.destructiveHint)],
                ['Idempotent (hint)', yesNo(a.tool.annotations?.idempotentHint)],
                ['Open world (hint)', yesNo(a.tool.annotations?.openWorldHint)],
              ]}
            />
          </Card>
          <Card
            title="Evidence so far"
            description="Read-only calls in the same request reference: what the agent looked at before asking."
          >
            {evidence.ok && evidence.value.items.length ? (
              <ul className="divide-y divide-slate-100" data-testid="evidence">
                {evidence.value.items.map((r) => (
                  <li key={r.id} className="flex flex-wrap items-center justify-between gap-2 py-2">
                    <span>
                      <Link href={`/outcomes/${r.id}`} className="font-mono text-xs text-indigo-700 hover:underline">
                        {r.tool.name}
                      </Link>{' '}
                      <span className="text-sm text-slate-700">{r.summary}</span>
                    </span>
                    <span className="flex items-center gap-2">
                      <DeliveryBadge delivery={r.classification.delivery} category={r.classification.category} />
                      <CategoryBadge category={r.classification.category} />
                    </span>
                  </li>
                ))}
              </ul>
            ) : (
              <p className="text-sm text-slate-500">No read-only calls were reported for this request reference.</p>
            )}
          </Card>
        </div>

        {/* On a phone the decision comes first, right under the summary: no scrolling to Approve. */}
        <div className="order-first space-y-6 lg:order-none">
          <Card title="Decision" description={`${approvals} of ${a.requiredApprovals} approvals · one denial is final`}>
            {a.decisions.length ? (
              <ul className="mb-4 space-y-2" data-testid="decisions">
                {a.decisions.map((d, i) => (
                  <li key={i} className="text-sm">
                    <Badge tone={d.decision === 'approve' ? 'good' : 'bad'}>
                      {d.decision === 'approve' ? 'Approved' : 'Denied'}
                    </Badge>{' '}
                    <span className="font-medium">{d.reviewer}</span>{' '}
                    <span className="text-xs text-slate-500">{formatDate(d.at)}</span>
                    <p className="mt-0.5 text-slate-700">“{d.reason}”</p>
                  </li>
                ))}
              </ul>
            ) : null}
            {a.status !== 'pending' ? (
              <Notice tone="info">{describeSettled(a, formatDate)}</Notice>
            ) : !authorize(viewer, 'approval.decide') ? (
              <p className="text-sm text-slate-500">Your role reviews but does not decide.</p>
            ) : ownRequest ? (
              <Notice tone="bad" testId="own-request">
                This request acts on your behalf (principal {a.principal}): someone else must decide it.
              </Notice>
            ) : alreadyDecided ? (
              <p className="text-sm text-slate-500">You have decided; it waits for another reviewer.</p>
            ) : (
              <DecisionForm id={a.id} version={a.version} initial={initialDecision} />
            )}
          </Card>
          {a.grant ? (
            <Card title="Grant" description="Single-use, bound to this tool, server and argument digest.">
              <Facts
                items={[
                  [
                    'Grant id',
                    <code key="g" className="font-mono text-xs">
                      {a.grant.id}
                    </code>,
                  ],
                  ['State', a.grant.state],
                  ['Expires', formatDate(a.grant.expiresAt)],
                  ['Redeemed', a.grant.redeemedAt ? formatDate(a.grant.redeemedAt) : null],
                  ['Revoked', a.grant.revokedAt ? formatDate(a.grant.revokedAt) : null],
                ]}
              />
            </Card>
          ) : null}
          {revocable ? (
            <Card
              title="Revoke"
              description="Takes effect at once: a pending request can no longer be approved, an unused grant can no longer be redeemed."
            >
              <RevokeForm id={a.id} what={`this ${a.status === 'pending' ? 'request' : 'grant'}`} />
            </Card>
          ) : null}
        </div>
      </div>
    </>
  );
}
