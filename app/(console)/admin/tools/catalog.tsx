import Link from 'next/link';
import { AcceptToolButton, HoldNewToolsToggle } from '@/components/admin/catalog-buttons';
import { Badge, Card } from '@/components/ui/card';
import { formatDate } from '@/lib/format';
import type { DefinitionPart, PinnedDefinition } from '@/lib/catalog/definition';
import type { LintFinding } from '@/lib/catalog/lint';
import type { CatalogTool, ToolCatalog } from '@/lib/server/catalog/catalog';

// The tool catalog on the Tools page (docs/catalog.md): per server, each tool's accepted definition,
// a change held beside it, and the lint of them all. Boxes, not a table: descriptions and schemas
// are long, and must stay readable at 390 px.

const severityTone = { high: 'bad', medium: 'warn', low: 'neutral' } as const;
const partLabel: Record<DefinitionPart, string> = {
  title: 'Title',
  description: 'Description',
  inputSchema: 'Input schema',
  outputSchema: 'Output schema',
  annotations: 'Annotations',
};

export type CatalogServerLink = { server: string; tools: number; held: number };

export function CatalogSection({
  servers,
  catalog,
  canManage,
}: {
  servers: CatalogServerLink[];
  catalog: ToolCatalog | null;
  canManage: boolean;
}) {
  return (
    <Card
      title="Tool catalog"
      description="Definitions as gateways report them from tools/list. A tool seen for the first time is accepted; a definition that later differs is held: the gateway hides the tool and refuses its calls until an admin accepts the change."
    >
      {servers.length === 0 ? (
        <p className="text-sm text-slate-500" data-testid="catalog-empty">
          No gateway has reported tool definitions yet. They appear here once a gateway asks policy about a
          server&apos;s tools with their descriptions and schemas.
        </p>
      ) : (
        <div className="space-y-4">
          <nav aria-label="Catalog servers" className="flex flex-wrap gap-2">
            {servers.map((s) => (
              <Link
                key={s.server}
                href={`/admin/tools?server=${encodeURIComponent(s.server)}`}
                aria-current={catalog?.server === s.server ? 'page' : undefined}
                className={`rounded-md border px-2 py-1 text-xs break-all ${
                  catalog?.server === s.server
                    ? 'border-indigo-500 bg-indigo-50 text-indigo-800'
                    : 'border-slate-200 text-slate-700 hover:border-slate-300'
                }`}
              >
                <span className="font-mono">{s.server}</span> · {s.tools} tool{s.tools === 1 ? '' : 's'}
                {s.held ? <span className="ml-1 font-medium text-amber-800">· {s.held} held</span> : null}
              </Link>
            ))}
          </nav>
          {catalog ? <CatalogServer catalog={catalog} canManage={canManage} /> : null}
        </div>
      )}
    </Card>
  );
}

function CatalogServer({ catalog, canManage }: { catalog: ToolCatalog; canManage: boolean }) {
  const held = catalog.tools.filter((t) => t.held);
  return (
    <section data-testid={`catalog-${catalog.server}`} className="space-y-4">
      <div className="flex flex-wrap items-center justify-between gap-3">
        <h3 className="flex flex-wrap items-center gap-2 text-sm font-semibold text-slate-900">
          <span className="font-mono break-all">{catalog.server}</span>
          {held.length ? <Badge tone="warn">{held.length} held</Badge> : <Badge tone="good">All accepted</Badge>}
          {catalog.holdNewTools ? <Badge tone="info">Holds new tools</Badge> : null}
        </h3>
        {canManage ? <HoldNewToolsToggle server={catalog.server} hold={catalog.holdNewTools} /> : null}
      </div>
      <div>
        <h4 className="text-xs font-semibold tracking-wide text-slate-500 uppercase">Lint</h4>
        {catalog.lint.length === 0 ? (
          <p className="mt-1 text-sm text-slate-500" data-testid="lint-none">
            No findings: every definition says what it does and nothing aimed at the model.
          </p>
        ) : (
          <ul className="mt-1 space-y-1" data-testid="lint-findings">
            {catalog.lint.map((f, i) => (
              <Finding key={i} finding={f} />
            ))}
          </ul>
        )}
      </div>
      <ul className="space-y-3">
        {catalog.tools.map((t) => (
          <ToolBox
            key={t.name}
            server={catalog.server}
            tool={t}
            findings={catalog.lint.filter((f) => f.tools.includes(t.name))}
            canManage={canManage}
          />
        ))}
      </ul>
    </section>
  );
}

function Finding({ finding, compact = false }: { finding: LintFinding; compact?: boolean }) {
  return (
    <li className="text-sm break-words text-slate-700" data-testid={`finding-${finding.rule}`}>
      <Badge tone={severityTone[finding.severity]}>{finding.severity}</Badge>{' '}
      <span className="font-mono text-xs">{finding.rule}</span>
      {!compact && finding.tools.length ? (
        <span className="font-mono text-xs text-slate-500"> ({finding.tools.join(', ')})</span>
      ) : null}
      : {finding.message}
    </li>
  );
}

function ToolBox({
  server,
  tool,
  findings,
  canManage,
}: {
  server: string;
  tool: CatalogTool;
  findings: LintFinding[];
  canManage: boolean;
}) {
  const shown = tool.accepted?.definition ?? tool.held?.definition;
  return (
    <li className="rounded-md border border-slate-200 p-3" data-testid={`catalog-tool-${tool.name}`}>
      <div className="flex flex-wrap items-start justify-between gap-2">
        <div className="min-w-0">
          <span className="font-mono text-sm break-all text-slate-900">{tool.name}</span>
          {shown?.title ? <span className="block text-xs text-slate-500">{shown.title}</span> : null}
        </div>
        <div className="flex flex-wrap items-center gap-2">
          {tool.held ? (
            <span data-testid="held">
              <Badge tone="warn">{tool.accepted ? 'Held: changed' : 'Held: new'}</Badge>
            </span>
          ) : null}
          {tool.blocked ? <Badge tone="bad">Blocked</Badge> : null}
        </div>
      </div>
      {tool.accepted ? (
        <Text value={tool.accepted.definition.description} testId="accepted-description" />
      ) : (
        <p className="mt-2 text-sm text-slate-500">Not accepted yet: new on a server that holds new tools.</p>
      )}
      {findings.length ? (
        <ul className="mt-2 space-y-1">
          {findings.map((f, i) => (
            <Finding key={i} finding={f} compact />
          ))}
        </ul>
      ) : null}
      {tool.held ? (
        <div className="mt-3 rounded-md bg-amber-50 p-3" data-testid="held-change">
          <p className="text-xs text-amber-900">
            Seen {formatDate(tool.held.since)}; differs in {tool.held.differs.map((d) => partLabel[d]).join(', ')}. The
            gateway hides this tool until the change is accepted.
          </p>
          {tool.held.differs.map((part) => (
            <SideBySide
              key={part}
              part={part}
              before={tool.accepted?.definition ?? null}
              after={tool.held!.definition}
            />
          ))}
          {canManage ? (
            <div className="mt-3">
              <AcceptToolButton server={server} tool={tool.name} hash={tool.held.definitionHash} />
            </div>
          ) : null}
        </div>
      ) : null}
    </li>
  );
}

function SideBySide({
  part,
  before,
  after,
}: {
  part: DefinitionPart;
  before: PinnedDefinition | null;
  after: PinnedDefinition;
}) {
  return (
    <div className="mt-3">
      <h5 className="text-xs font-semibold text-slate-700">{partLabel[part]}</h5>
      <div className="mt-1 grid gap-2 md:grid-cols-2">
        <div className="min-w-0">
          <span className="text-xs text-slate-500">Accepted</span>
          <Text value={before?.[part]} testId={`before-${part}`} />
        </div>
        <div className="min-w-0">
          <span className="text-xs text-slate-500">Held</span>
          <Text value={after[part]} testId={`after-${part}`} />
        </div>
      </div>
    </div>
  );
}

// A description as written (line breaks kept), a schema as indented JSON; long ones scroll in their box.
function Text({ value, testId }: { value: unknown; testId?: string }) {
  if (value === undefined || value === null)
    return (
      <p className="mt-1 text-sm text-slate-400 italic" data-testid={testId}>
        none
      </p>
    );
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  return (
    <pre
      data-testid={testId}
      // A long one scrolls: reachable by keyboard, so its end can be read without a mouse.
      tabIndex={0}
      className={`mt-1 max-h-48 overflow-auto rounded bg-white/70 p-2 text-xs break-words whitespace-pre-wrap text-slate-800 ${
        typeof value === 'string' ? 'font-sans text-sm' : 'font-mono'
      }`}
    >
      {text}
    </pre>
  );
}
