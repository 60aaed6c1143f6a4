import 'server-only';
import { db } from '../db/db';
import { open } from '../secrets';
import { authorize } from '@/lib/auth/permissions';
import type { Actor } from '@/lib/auth/actor';
import { argumentPreview, type JsonObject } from '@/lib/approvals/arguments';
import { WHOLE_SERVER } from '@/lib/approvals/policy';
import { argumentsAbsence, type ApprovalView } from '@/lib/approvals/view';

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
  const named = new Map<string, string[]>();
  for (const r of rules) if (r.showFields?.length) named.set(`${r.server}\u0000${r.toolName}`, r.showFields);
  return (server, tool) => named.get(`${server}\u0000${tool}`) ?? named.get(`${server}\u0000${WHOLE_SERVER}`) ?? null;
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
  const hidden = (note: string) => ({ ...view, arguments: null, argumentsNote: note, argumentsPreview: null });
  const absent = argumentsAbsence(view, authorize(reader, 'approvals.readArguments'));
  if (absent) return hidden(absent);
  // Open by every rule the view knows, yet erased: the sweep or a terminal move got there between reads.
  if (row.argumentsSealed === null) return hidden('erased');
  let args: JsonObject;
  try {
    args = JSON.parse(open('approval-arguments', row.argumentsSealed, row.id)) as JsonObject;
  } catch (err) {
    // The reason only (another AUTH_SECRET, an altered box): never the box or what it holds.
    console.error(`[approvals] the arguments of approval ${row.id} cannot be opened: ${(err as Error).message}`);
    return hidden('cannot be opened on this server (sealed under another AUTH_SECRET, or altered)');
  }
  return {
    ...view,
    arguments: whole ? args : null,
    argumentsNote: null,
    argumentsPreview: argumentPreview(args, fields(view.server, view.tool.name)),
  };
}
