// The request page's first card (docs/design.md "What a reviewer sees: what will run"): the
// arguments the tool will be called with, beside the agent's own words and the tool's description
// as its server declared it, so a mismatch between them shows; beside the description the catalog
// accepted for the tool (docs/catalog.md), with a caution when the two differ or a change is held.
import Link from 'next/link';
import type { ReactNode } from 'react';
import type { JsonObject } from '@/lib/approvals/arguments-format';
import { Card } from '@/components/ui/card';
import { Facts } from '@/components/ui/facts';
import { ArgumentTree } from './argument-tree';
import { argumentsNoteView } from './argument-text';
import { Caution } from './caution';
import { FoldedText } from './folded-text';
import { MaskedText } from './masked-text';

export type WhatWillRunProps = {
  args: JsonObject | null;
  note: string | null;
  sent: boolean;
  description: string | null;
  summary: string;
  tool: string;
  server: string;
  argsDigest: string;
  resource: { type: string; id: string } | null;
  grantTtlSeconds: number;
  /** What the tool catalog holds for this tool; null when no gateway has reported its definition. */
  catalog: CatalogView | null;
  /** How the page writes times. */
  when: (d: Date) => string;
};

export type CatalogView = {
  accepted: { description: string | null; acceptedAt: Date; acceptedBy: string | null } | null;
  held: { since: Date } | null;
  /** The Tools page showing this server's catalog. */
  href: string;
};

function Part({ title, id, children }: { title: string; id: string; children: ReactNode }) {
  return (
    <section aria-labelledby={id} className="min-w-0">
      <h3 id={id} className="mb-2 text-xs font-semibold uppercase tracking-wide text-slate-600">
        {title}
      </h3>
      {children}
    </section>
  );
}

export function WhatWillRun(p: WhatWillRunProps) {
  const note = argumentsNoteView(p.note, p.sent, p.when);
  return (
    <Card
      title="What will run"
      description={`${p.tool} on ${p.server}, called with these arguments. The grant is bound to their digest: anything else is refused.`}
    >
      <div className="grid gap-6 md:grid-cols-[minmax(0,3fr)_minmax(0,2fr)]">
        <Part title="Arguments" id="arguments-heading">
          <div data-testid="arguments" className="space-y-3">
            {note ? (
              note.tone === 'warn' ? (
                <Caution testId="arguments-note">{note.text}</Caution>
              ) : (
                <p
                  data-testid="arguments-note"
                  className="rounded-md bg-slate-50 px-3 py-2 text-sm text-slate-700 ring-1 ring-inset ring-slate-200"
                >
                  {note.text}
                </p>
              )
            ) : null}
            {p.args ? <ArgumentTree args={p.args} /> : null}
          </div>
        </Part>
        <div className="space-y-5">
          <Part title="The agent’s own words" id="agent-words-heading">
            <blockquote
              data-testid="agent-words"
              className="border-l-2 border-indigo-200 pl-3 text-sm italic text-slate-800 [overflow-wrap:anywhere]"
            >
              <MaskedText text={p.summary} />
            </blockquote>
            <p className="mt-1 text-xs text-slate-600">
              What the agent says the call does{p.args ? ': check it against the arguments' : ''}.
            </p>
          </Part>
          <ToolDescriptions {...p} />
        </div>
      </div>
      <div className="mt-6 border-t border-slate-100 pt-4">
        <Facts
          items={[
            ['Resource', p.resource ? `${p.resource.type} ${p.resource.id}` : null],
            [
              'Argument digest',
              <code key="d" className="break-all font-mono text-xs">
                {p.argsDigest}
              </code>,
            ],
            ['Grant lifetime once approved', `${Math.round(p.grantTtlSeconds / 60)} min`],
          ]}
        />
      </div>
    </Card>
  );
}

const describe = (text: string, what: string) => (
  <FoldedText text={text} what={what} className="whitespace-pre-wrap [overflow-wrap:anywhere]" />
);

/**
 * The description staged with the request and the one accepted in the catalog: one block when they
 * agree (saying so), both with a caution when they differ, and a caution when a change is held.
 */
function ToolDescriptions(p: WhatWillRunProps) {
  const accepted = p.catalog?.accepted ?? null;
  const held = p.catalog?.held ?? null;
  const differs = !!accepted && p.description !== null && p.description !== (accepted.description ?? '');
  const acceptedWhen = accepted
    ? accepted.acceptedBy
      ? `Accepted by ${accepted.acceptedBy}, ${p.when(accepted.acceptedAt)}.`
      : `Accepted when first seen, ${p.when(accepted.acceptedAt)}.`
    : null;
  const staged = p.description ? (
    <Part
      title={differs ? 'As sent with this request' : 'The tool, as its server declared it'}
      id="tool-description-heading"
    >
      <div data-testid="tool-description" className="text-sm text-slate-800">
        {describe(p.description, 'the description')}
      </div>
      {accepted && !differs ? (
        <p data-testid="tool-description-accepted" className="mt-1 text-xs text-slate-600">
          The same as the description accepted in the catalog. {acceptedWhen}
        </p>
      ) : null}
    </Part>
  ) : null;
  return (
    <>
      {held ? (
        <Caution testId="tool-held">
          A changed definition of this tool is held in the catalog since {p.when(held.since)}, waiting for an admin:
          gateways hide the tool and refuse its calls until it is accepted.{' '}
          <Link href={p.catalog!.href} className="font-medium underline">
            See it on the Tools page
          </Link>
        </Caution>
      ) : null}
      {accepted && (differs || !p.description) ? (
        <Part title="The tool, as accepted in the catalog" id="tool-accepted-heading">
          <div data-testid="tool-accepted-description" className="text-sm text-slate-800">
            {accepted.description ? (
              describe(accepted.description, 'the accepted description')
            ) : (
              <p className="text-slate-600">The accepted definition has no description.</p>
            )}
          </div>
          <p className="mt-1 text-xs text-slate-600">{acceptedWhen}</p>
        </Part>
      ) : null}
      {differs ? (
        <Caution testId="tool-description-differs">
          The description sent with this request differs from the accepted definition: read both before deciding.
        </Caution>
      ) : null}
      {staged}
    </>
  );
}
