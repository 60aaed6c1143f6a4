import Link from 'next/link';
import { RequirementSelect, type Requirement } from '@/components/admin/requirement-select';
import { ServerTrustToggle } from '@/components/admin/server-trust-toggle';
import { AdvertisedHints, BelievedHints } from '@/components/admin/tool-hints';
import { Badge, Card, EmptyState, PageHeader } from '@/components/ui/card';
import { Table, Td } from '@/components/ui/table';
import { authorize } from '@/lib/auth/permissions';
import { formatDate } from '@/lib/format';
import { requireViewer } from '@/lib/server/auth/session';
import {
  INVENTORY_MAX_TOOLS,
  listToolInventory,
  type InventoryRule,
  type InventoryServer,
  type InventoryTool,
} from '@/lib/server/tools/tools';
import { listCatalogServers, listTools } from '@/lib/server/catalog/catalog';
import { CatalogSection } from './catalog';

export const metadata = { title: 'Tools' };

type Req = { requiredApprovals: number; blocked: boolean };
const approvalsLabel = (r: Req) =>
  r.blocked
    ? 'Blocked'
    : r.requiredApprovals === 0
      ? 'No approval'
      : r.requiredApprovals === 1
        ? '1 approval'
        : `${r.requiredApprovals} approvals`;
const requirementTone = (r: Req): 'good' | 'info' | 'warn' | 'bad' =>
  r.blocked ? 'bad' : r.requiredApprovals === 0 ? 'good' : r.requiredApprovals === 1 ? 'info' : 'warn';
const choiceOf = (rule: InventoryRule | null): Requirement =>
  rule ? (rule.blocked ? 'blocked' : (String(rule.requiredApprovals) as Requirement)) : 'default';

export default async function ToolsPage({ searchParams }: { searchParams: Promise<{ server?: string | string[] }> }) {
  const viewer = await requireViewer('outcomes.read');
  const inventory = await listToolInventory(viewer);
  if (!inventory.ok) throw new Error('listToolInventory refused a signed-in viewer');
  const asked = (await searchParams).server;
  const catalogServers = await listCatalogServers(viewer);
  const known = catalogServers.ok ? catalogServers.value : [];
  // The server asked for (a tool.changed message links here), else the first with a change held, else the first.
  const chosen =
    known.find((s) => s.server === (Array.isArray(asked) ? asked[0] : asked)) ?? known.find((s) => s.held) ?? known[0];
  const catalog = chosen ? await listTools(viewer, chosen.server) : null;
  const manage = { trust: authorize(viewer, 'servers.manage'), policy: authorize(viewer, 'policy.manage') };
  const { servers, truncated, since } = inventory.value;
  return (
    <>
      <PageHeader
        title="Tools"
        description="Every server and tool seen in outcome records and approval requests: what each advertises, what policy believes of it, and how many approvals its writes need now. Calls and failures cover the last seven days; a failure is any call that did not complete ok."
        actions={
          manage.policy ? (
            <Link href="/admin/policy" className="text-sm font-medium text-indigo-600 hover:text-indigo-500">
              Policy rules →
            </Link>
          ) : null
        }
      />
      <div className="mb-6">
        <CatalogSection servers={known} catalog={catalog?.ok ? catalog.value : null} canManage={manage.trust} />
      </div>
      {servers.length === 0 ? (
        <EmptyState title="No tools seen yet">
          Tools appear here once an agent runtime or gateway reports an outcome record or stages an approval request for
          them.
        </EmptyState>
      ) : (
        <div className="space-y-6">
          {truncated ? (
            <p className="text-sm text-amber-800">Showing the first {INVENTORY_MAX_TOOLS} tools by server and name.</p>
          ) : null}
          {servers.map((s) => (
            <ServerSection key={s.name} server={s} manage={manage} since={since} />
          ))}
        </div>
      )}
    </>
  );
}

function ServerSection({
  server,
  manage,
  since,
}: {
  server: InventoryServer;
  manage: { trust: boolean; policy: boolean };
  since: Date;
}) {
  const trusted = server.trust !== null;
  return (
    <div data-testid={`server-${server.name}`}>
      <Card
        title={
          <span className="flex items-center gap-2">
            <span className="font-mono">{server.name}</span>
            {trusted ? <Badge tone="good">Trusted</Badge> : <Badge tone="bad">Untrusted</Badge>}
          </span>
        }
        description={
          <>
            {server.trust ? (
              <>
                Trusted by {server.trust.by} since {formatDate(server.trust.at)}: its tools&apos; annotations count.
              </>
            ) : (
              <>Its annotations are display-only: every tool counts as destructive and open-world.</>
            )}{' '}
            {server.serverRule ? (
              <>
                Rule for every tool: {approvalsLabel(server.serverRule)} (by {server.serverRule.createdBy},{' '}
                {formatDate(server.serverRule.createdAt)}).
              </>
            ) : null}{' '}
            Last seen {formatDate(server.lastSeen)}.
          </>
        }
        actions={manage.trust ? <ServerTrustToggle server={server.name} trusted={trusted} /> : null}
      >
        {manage.policy ? (
          <div className="mb-4 flex flex-wrap items-center justify-between gap-3">
            <p className="text-sm text-slate-600">Every tool of this server, unless a tool has its own rule:</p>
            <RequirementSelect
              server={server.name}
              tool={null}
              current={choiceOf(server.serverRule)}
              label={`Approvals for every tool of ${server.name}`}
              defaultLabel="Default: by hints"
            />
          </div>
        ) : null}
        <Table
          head={['Tool', 'Advertised', 'Believed', 'Approvals required', 'Calls', 'Failures']}
          caption={`Tools of ${server.name}`}
        >
          {/* ToolRow is a component: its cells name their own columns (Table labels only direct rows). */}
          {server.tools.map((t) => (
            <ToolRow key={t.name} server={server} tool={t} managePolicy={manage.policy} since={since} />
          ))}
        </Table>
      </Card>
    </div>
  );
}

function ToolRow({
  server,
  tool,
  managePolicy,
  since,
}: {
  server: InventoryServer;
  tool: InventoryTool;
  managePolicy: boolean;
  since: Date;
}) {
  const outcomes = new URLSearchParams({ server: server.name, tool: tool.name, from: since.toISOString() });
  return (
    <tr data-testid={`tool-${server.name}-${tool.name}`}>
      <Td label="Tool">
        {/* Long names and titles wrap: the numbers at the row's end stay in view at 1280 px. */}
        <div className="max-w-60 break-words whitespace-normal">
          <span className="font-mono text-xs text-slate-900">{tool.name}</span>
          {tool.advertised?.title ? (
            <span className="block text-xs text-slate-500">{tool.advertised.title}</span>
          ) : null}
          <span className="mt-1 block text-xs text-slate-500" data-testid="last-seen">
            Last seen {formatDate(tool.lastSeen)}
          </span>
        </div>
      </Td>
      <Td label="Advertised">
        <AdvertisedHints annotations={tool.advertised} />
      </Td>
      <Td label="Believed">
        <BelievedHints hints={tool.believed} trusted={server.trust !== null} />
      </Td>
      <Td label="Approvals required" className="whitespace-normal">
        <div className="w-60 whitespace-normal max-md:w-auto">
          <span data-testid="requirement">
            <Badge tone={requirementTone(tool.requirement)}>{approvalsLabel(tool.requirement)}</Badge>
          </span>
          <span className="block text-xs text-slate-500" data-testid="requirement-basis">
            {tool.requirement.basisText}
          </span>
          {managePolicy ? (
            <div className="mt-2">
              <RequirementSelect
                server={server.name}
                tool={tool.name}
                current={choiceOf(tool.toolRule)}
                label={`Approvals for ${tool.name} on ${server.name}`}
                defaultLabel={server.serverRule ? 'Default: server rule' : 'Default: by hints'}
              />
            </div>
          ) : null}
        </div>
      </Td>
      <Td label="Calls" className="tabular-nums">
        {tool.calls7d > 0 ? (
          <Link href={`/outcomes?${outcomes}`} className="text-indigo-600 hover:text-indigo-500">
            {tool.calls7d}
          </Link>
        ) : (
          0
        )}
        {tool.requests7d > 0 ? (
          <span className="block text-xs text-slate-500" title="approval requests in the last seven days">
            {tool.requests7d} staged
          </span>
        ) : null}
      </Td>
      <Td label="Failures" className="tabular-nums">
        <span className={tool.failures7d > 0 ? 'font-medium text-rose-700' : undefined}>{tool.failures7d}</span>
      </Td>
    </tr>
  );
}
