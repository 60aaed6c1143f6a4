import Link from 'next/link';
import { AddPolicyRuleForm } from '@/components/admin/add-policy-rule-form';
import { Card, EmptyState, PageHeader } from '@/components/ui/card';
import { ConfirmButton } from '@/components/ui/confirm-button';
import { sortColumn, Table, Td, wideOnly } from '@/components/ui/table';
import { readSort, sortRows } from '@/lib/sort';
import { formatDate } from '@/lib/format';
import { requireViewer } from '@/lib/server/auth/session';
import { listPolicyRulesToManage } from '@/lib/server/tools/tools';
import type { PolicyRuleView } from '@/lib/server/policy/policy-rules';
import { deletePolicyRuleAction } from './actions';

export const metadata = { title: 'Policy rules' };

const approvalsLabel = (r: { requiredApprovals: number; blocked: boolean }) =>
  r.blocked
    ? 'Blocked: not exposed'
    : r.requiredApprovals === 0
      ? 'None'
      : r.requiredApprovals === 1
        ? '1 reviewer'
        : `${r.requiredApprovals} distinct reviewers`;

// The budgets a rule sets, one per line; the ones it leaves out are inherited.
const budgetLines = (b: PolicyRuleView['budgets']) =>
  [
    b.failedAttempts === null ? null : `${b.failedAttempts} failed attempts`,
    b.calls === null ? null : `${b.calls} calls`,
    b.backoffBaseMs === null ? null : `backoff ${b.backoffBaseMs} ms`,
  ].filter((l) => l !== null);

const sortKeys = ['server', 'tool', 'approvals', 'when'] as const;

export default async function PolicyPage({ searchParams }: { searchParams: Promise<{ sort?: string }> }) {
  const viewer = await requireViewer('policy.manage');
  const rules = await listPolicyRulesToManage(viewer);
  if (!rules.ok) throw new Error('listPolicyRulesToManage refused an admin');
  const sort = readSort((await searchParams).sort, sortKeys, null);
  const href = (s: string) => `/admin/policy?sort=${s}`;
  const rows = sortRows(rules.value, sort, {
    server: (r) => r.server,
    tool: (r) => r.tool,
    approvals: (r) => (r.blocked ? Number.MAX_SAFE_INTEGER : r.requiredApprovals),
    when: (r) => r.createdAt,
  });
  return (
    <>
      <PageHeader
        title="Policy rules"
        description={
          <>
            Without a rule, a tool that a trusted server calls read-only needs no approval, one that is destructive and
            open-world needs two distinct reviewers, and any other write one. An untrusted server&apos;s hints never
            lower the bar: its tools count as destructive and open-world. A rule for a tool wins over a rule for its
            whole server, which wins over the hints. A blocked tool is not exposed at all: the gateway leaves it out of
            the tool list and refuses every call to it, and no approval can be requested for it.
          </>
        }
        actions={
          <Link href="/admin/tools" className="text-sm font-medium text-indigo-600 hover:text-indigo-500">
            Tools →
          </Link>
        }
      />
      <div className="space-y-6">
        <Card
          title="Add a rule"
          description="Saving a rule for a server and tool that already has one changes it. Requests already staged keep the requirement they were given."
        >
          <AddPolicyRuleForm />
        </Card>
        {rules.value.length === 0 ? (
          <EmptyState title="No rules">Every request is judged by the defaults above.</EmptyState>
        ) : (
          <Table
            head={[
              sortColumn('Server', 'server', sort, href),
              sortColumn('Tool', 'tool', sort, href),
              sortColumn('Approvals required', 'approvals', sort, href),
              'Fields shown in the queue',
              'Budgets',
              // Left out below 1440 px, so a row with fields shown keeps its Delete button on screen.
              { label: 'By', wide: true },
              sortColumn('When', 'when', sort, href, 'desc'),
              { label: 'Actions', hidden: true },
            ]}
            caption="Policy rules"
          >
            {rows.map((r) => (
              <tr key={r.id} data-testid={`rule-${r.server}-${r.tool ?? '*'}`}>
                <Td className="font-mono text-xs text-slate-900">{r.server}</Td>
                <Td>
                  {r.tool ? (
                    <span className="font-mono text-xs text-slate-900">{r.tool}</span>
                  ) : (
                    <span className="italic text-slate-500">every tool</span>
                  )}
                </Td>
                <Td>{approvalsLabel(r)}</Td>
                <Td className="min-w-40 max-w-64 whitespace-normal">
                  {r.showFields ? (
                    <span className="break-all font-mono text-xs text-slate-900">{r.showFields.join(', ')}</span>
                  ) : (
                    <span className="text-slate-500">{r.tool ? 'the first three' : '—'}</span>
                  )}
                </Td>
                <Td className="min-w-28 max-w-36 whitespace-normal">
                  {budgetLines(r.budgets).length ? (
                    <span className="block text-xs text-slate-900">
                      {budgetLines(r.budgets).map((l) => (
                        <span key={l} className="block">
                          {l}
                        </span>
                      ))}
                    </span>
                  ) : (
                    <span className="text-slate-500">inherited</span>
                  )}
                </Td>
                <Td className={wideOnly}>{r.createdBy}</Td>
                <Td>{formatDate(r.createdAt)}</Td>
                <Td className="text-right">
                  <ConfirmButton
                    label="Delete"
                    confirm={`Delete the rule for ${r.tool ? `${r.tool} on ${r.server}` : `every tool of ${r.server}`}? New requests fall back to ${r.tool ? 'the server rule or ' : ''}the defaults.`}
                    run={deletePolicyRuleAction.bind(null, r.id)}
                  />
                </Td>
              </tr>
            ))}
          </Table>
        )}
      </div>
    </>
  );
}
