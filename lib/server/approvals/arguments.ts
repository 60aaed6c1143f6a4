import 'server-only';
import { db } from '../db/db';
import { keyId, open } from '../secrets';
import { authorize } from '@/lib/auth/permissions';
import type { Actor } from '@/lib/auth/actor';
import { argumentPreview, type JsonObject, type PreviewField } from '@/lib/approvals/arguments';
import { WHOLE_SERVER } from '@/lib/approvals/policy';
import { argumentsAbsence, type ApprovalView } from '@/lib/approvals/view';
import { dropOldest } from '../../bounded';

// What a reader is shown of a request's arguments (docs/design.md "What a reviewer sees: what will
// run"): opened only for reviewers and admins, only while the request is open, and only here.

/** The stored fields the arguments are read from. */
export type SealedArguments = { id: string; argumentsSealed: string | null };

/** The fields an admin named for a tool's queue rows (`policy:set --show`), by server and tool. */
export type ShowFields = (server: string, tool: string) => string[] | null;

const NO_FIELDS: ShowFields = () => null;

/**
 * The named fields of every (server, tool) among `views`, in one query: a rule for the exact tool
 * first, else the server's whole-server rule, else none (the first three scalar fields).
 */
export async function showFieldsFor(views: readonly Pick<ApprovalView, 'server' | 'tool'>[]): Promise<ShowFields> {
  if (views.length === 0) return NO_FIELDS;
  const servers = [...new Set(views.map((v) => v.server))];
  const tools = [...new Set(views.map((v) => v.tool.name)), WHOLE_SERVER];
  const rules = await db.policyRule.findMany({
    where: { server: { in: servers }, toolName: { in: tools } },
    select: { server: true, toolName: true, showFields: true },
  });
  return lookupShowFields(rules);
}

/**
 * The named fields of every tool that has any, in one query that needs nothing from the page: a
 * list runs it beside its own query instead of after it. Admins name fields for a few tools, so
 * the rows are few.
 */
export async function namedShowFields(): Promise<ShowFields> {
  const rules = await db.policyRule.findMany({
    where: { showFields: { isEmpty: false } },
    select: { server: true, toolName: true, showFields: true },
  });
  return lookupShowFields(rules);
}

function lookupShowFields(rules: { server: string; toolName: string; showFields: string[] | null }[]): ShowFields {
  const named = new Map<string, string[]>();
  for (const r of rules) if (r.showFields?.length) named.set(`${r.server}\u0000${r.toolName}`, r.showFields);
  return (server, tool) => named.get(`${server}\u0000${tool}`) ?? named.get(`${server}\u0000${WHOLE_SERVER}`) ?? null;
}

// A queue polls every few seconds and shows the same requests each time: their previews are kept
// here, so each box is opened once rather than on every refresh. An entry is only ever answered for
// the very box it came from, under the same key and the same named fields, after every check a
// fresh open would pass (open, not erased, a reader who may see them), so what a reader sees is
// what opening would show. Only previews (masked, three short fields at most), never whole
// arguments; bounded in number and age, so a request erased since lingers here for a minute at most (docs/design.md "What a reviewer sees").
const PREVIEWS_KEPT = 2_000;
const PREVIEW_AGE_MS = 60_000;
type KeptPreview = { box: string; stamp: string; at: number; preview: PreviewField[] };
const previews = new Map<string, KeptPreview>();

function keptPreview(id: string, box: string, stamp: string, now: number): PreviewField[] | null {
  const kept = previews.get(id);
  if (!kept) return null;
  if (kept.box === box && kept.stamp === stamp && now - kept.at < PREVIEW_AGE_MS) return kept.preview;
  previews.delete(id);
  return null;
}

function keepPreview(id: string, entry: KeptPreview): void {
  previews.delete(id);
  previews.set(id, entry);
  dropOldest(previews, PREVIEWS_KEPT);
}

/**
 * `view` with the arguments as `reader` may see them. `whole`: the arguments themselves (one
 * request read); a list carries only the preview. Only the lookup of open, sealed arguments by a
 * reviewer or admin decrypts anything.
 */
export function withArguments(
  view: ApprovalView,
  row: SealedArguments,
  reader: Actor | null,
  { whole, fields = NO_FIELDS }: { whole: boolean; fields?: ShowFields },
): ApprovalView {
  const hidden = (note: string) => {
    previews.delete(row.id);
    return { ...view, arguments: null, argumentsNote: note, argumentsPreview: null };
  };
  const absent = argumentsAbsence(view, authorize(reader, 'approvals.readArguments'));
  if (absent) return hidden(absent);
  // Open by every rule the view knows, yet erased: the sweep or a terminal move got there between reads.
  if (row.argumentsSealed === null) return hidden('erased');
  const named = fields(view.server, view.tool.name);
  const now = Date.now();
  let stamp: string;
  let args: JsonObject;
  try {
    // The key's fingerprint too: a preview kept under one AUTH_SECRET is not answered under another.
    stamp = `${keyId('approval-arguments')}\u0000${named?.join('\u0000') ?? ''}`;
    const kept = whole ? null : keptPreview(row.id, row.argumentsSealed, stamp, now);
    if (kept) return { ...view, arguments: null, argumentsNote: null, argumentsPreview: kept };
    args = JSON.parse(open('approval-arguments', row.argumentsSealed, row.id)) as JsonObject;
  } catch (err) {
    // The reason only (another AUTH_SECRET, an altered box): never the box or what it holds.
    console.error(`[approvals] the arguments of approval ${row.id} cannot be opened: ${(err as Error).message}`);
    return hidden('cannot be opened on this server (sealed under another AUTH_SECRET, or altered)');
  }
  const preview = argumentPreview(args, named);
  keepPreview(row.id, { box: row.argumentsSealed, stamp, at: now, preview });
  return { ...view, arguments: whole ? args : null, argumentsNote: null, argumentsPreview: preview };
}
