import 'server-only';
import { db } from '../db/db';
import { pool } from '../db/db';
import { appendAudit } from '../audit/audit';
import { isDeadlock } from '../db/errors';
import { rows } from '../db/kysely';
import {
  acceptHeldDefinition,
  enqueueToolChanged,
  selectCatalogServers,
  selectDefinitionStates,
  upsertDefinitions,
  withdrawHeld,
  type CatalogServerRow,
  type DefinitionState,
} from './sql';
import { authorize } from '@/lib/auth/permissions';
import { auditName, type Actor } from '@/lib/auth/actor';
import { requiredApprovalsFor, type RequiredApprovals } from '@/lib/approvals/policy';
import {
  definitionDiffers,
  definitionHash,
  pinnedDefinition,
  type DefinitionInput,
  type DefinitionPart,
  type PinnedDefinition,
} from '@/lib/catalog/definition';
import { lintCatalog, type LintFinding, type ToolDefinition } from '@/lib/catalog/lint';
import type { ToolAnnotations } from '@/lib/outcomes/schemas';
import { mask } from '@/lib/redaction/mask';
import { fail, ok, type Result } from '@/lib/result';

// The tool catalog (docs/catalog.md "Pinning"): per server, the accepted definition of every tool,
// and the change held until an admin accepts it. `pinDefinitions` runs inside policy/evaluate, so
// what a gateway is told to hide is decided by what it has just sent; accepting is for admins and
// audited; reading is for anyone who may read outcomes.

/** Tools listed per server at most: a misbehaving gateway can invent names. */
export const CATALOG_MAX_TOOLS = 5000;

/** Per tool asked: whether the gateway must hide it and refuse its calls. */
export type PinVerdict = { name: string; held: boolean };

type Seen = { name: string; hash: string; def: PinnedDefinition };

// Held: no accepted definition yet (a new tool on a server that holds new tools), or one that differs.
const heldFor = (state: DefinitionState | undefined, hash: string | null) =>
  !!state && (hash === null ? state.held_hash !== null || state.accepted_hash === null : state.accepted_hash !== hash);

/**
 * Pins what a gateway reports of a server's tools and says which are held. A tool is pinned only
 * when sent with its `inputSchema` (MCP gives one for every tool, so a full definition has it): a
 * gateway that sends names and annotations only cannot be compared with anything, and is told
 * `held` as the catalog stands (a change seen through another gateway stays held).
 *
 * Nothing is written when every definition is the accepted one (the usual case); otherwise, in one
 * transaction: first sightings accepted (or held), changes held, a change no longer offered (the
 * server went back to the accepted definition) withdrawn, one audit entry for all of it, and one
 * `tool.changed` event per tool newly held.
 */
export async function pinDefinitions(
  actor: Actor,
  server: string,
  tools: readonly (DefinitionInput & { inputSchema?: unknown })[],
): Promise<PinVerdict[]> {
  const seen = new Map<string, Seen>();
  for (const t of tools) {
    if (t.inputSchema === undefined || t.inputSchema === null) continue;
    const def = pinnedDefinition(t);
    seen.set(t.name, { name: t.name, hash: definitionHash(def), def });
  }
  const names = tools.map((t) => t.name);
  const before = new Map((await rows(selectDefinitionStates(server, names), pool())).map((s) => [s.tool_name, s]));
  const changing = [...seen.values()].filter((s) => {
    const state = before.get(s.name);
    return !state || (state.accepted_hash !== s.hash && state.held_hash !== s.hash);
  });
  const withdrawing = [...seen.values()].filter((s) => {
    const state = before.get(s.name);
    return !!state && state.accepted_hash === s.hash && state.held_hash !== null;
  });
  let after = before;
  if (changing.length || withdrawing.length) after = await retryOnDeadlock(() => writePins());
  return tools.map((t) => ({ name: t.name, held: heldFor(after.get(t.name), seen.get(t.name)?.hash ?? null) }));

  // Two gateways reporting opposite changes of one server at once (one withdrawing what the other
  // holds) can lock rows in crossed order: the database breaks the deadlock and this runs again.
  function writePins() {
    return db.$transaction(async (tx) => {
      const written = changing.length ? await rows(upsertDefinitions(server, sortByName(changing)), tx) : [];
      const withdrawn = withdrawing.length
        ? await rows(
            withdrawHeld(
              server,
              sortByName(withdrawing).map(({ name, hash }) => ({ name, hash })),
            ),
            tx,
          )
        : [];
      const accepted = written.filter((w) => w.accepted_hash !== null && w.inserted).map((w) => w.tool_name);
      const held = written
        .filter((w) => w.held_hash !== null)
        .map((w) => {
          const def = seen.get(w.tool_name)!.def;
          const from = (w.accepted as PinnedDefinition | null) ?? null;
          return {
            server,
            tool: w.tool_name,
            definitionHash: w.held_hash!,
            acceptedHash: w.accepted_hash,
            differs: definitionDiffers(from, def),
          };
        });
      if (accepted.length || held.length || withdrawn.length) {
        await appendAudit(tx, {
          actor: auditName(actor),
          action: 'tool.pin',
          targetType: 'server',
          targetId: server,
          data: {
            ...(accepted.length ? { accepted } : {}),
            ...(held.length
              ? { held: held.map((h) => ({ tool: h.tool, definitionHash: h.definitionHash, differs: h.differs })) }
              : {}),
            ...(withdrawn.length
              ? { withdrawn: withdrawn.map((w) => ({ tool: w.tool_name, definitionHash: w.held_hash })) }
              : {}),
          },
        });
      }
      if (held.length) await rows(enqueueToolChanged(held), tx);
      return new Map((await rows(selectDefinitionStates(server, names), tx)).map((s) => [s.tool_name, s]));
    });
  }
}

async function retryOnDeadlock<T>(run: () => Promise<T>, attempts = 3): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await run();
    } catch (err) {
      if (i >= attempts || !isDeadlock(err)) throw err;
    }
  }
}

const sortByName = <T extends { name: string }>(list: T[]) =>
  [...list].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

// A definition too large (or too odd) to review is held at every evaluation and never stored
// (policy/evaluate, lib/catalog/schemas.ts `unreviewable`): there is nothing of it to accept.
const NEVER_STORED =
  'A definition too large to review is never stored and cannot be accepted: its server must send one that can be reviewed.';

// ── Accepting ─────────────────────────────────────────────────────────────────────────────────

export type AcceptedTool = { server: string; tool: string; definitionHash: string; acceptedAt: Date };

/**
 * Accepts the held definition of `tool`, named by the hash the admin saw: 409 when that is not
 * (or no longer) the one held, so a change seen after the page was drawn is never accepted unseen.
 */
export async function acceptHeld(
  actor: Actor,
  input: { server: string; tool: string; definitionHash: string },
): Promise<Result<AcceptedTool>> {
  if (!authorize(actor, 'servers.manage')) return fail('forbidden');
  return db.$transaction(async (tx) => {
    const current = await tx.toolDefinition.findUnique({
      where: { server_toolName: { server: input.server, toolName: input.tool } },
      select: { acceptedHash: true, heldHash: true, held: true, accepted: true },
    });
    if (!current)
      return fail('not_found', `No tool ${input.tool} has been reported by ${input.server}. ${NEVER_STORED}`);
    const [done] = await rows(
      acceptHeldDefinition(input.server, input.tool, input.definitionHash, auditName(actor)),
      tx,
    );
    if (!done) {
      const what = current.heldHash
        ? `The change held for ${input.tool} is ${current.heldHash}, not ${input.definitionHash}: review it again.`
        : `Nothing is held for ${input.tool}: ${
            current.acceptedHash === input.definitionHash
              ? 'that definition is already accepted.'
              : `there is no change to accept. ${NEVER_STORED}`
          }`;
      return fail('conflict', what);
    }
    await appendAudit(tx, {
      actor: auditName(actor),
      action: 'tool.accept',
      targetType: 'tool',
      targetId: `${input.server}/${input.tool}`,
      data: {
        server: input.server,
        tool: input.tool,
        from: current.acceptedHash,
        to: input.definitionHash,
        differs: definitionDiffers(
          (current.accepted as PinnedDefinition | null) ?? null,
          current.held as PinnedDefinition,
        ),
      },
    });
    return ok({
      server: input.server,
      tool: input.tool,
      definitionHash: input.definitionHash,
      acceptedAt: done.accepted_at,
    });
  });
}

// ── Holding new tools ─────────────────────────────────────────────────────────────────────────

/** Whether tools first seen on `server` wait for an admin too; the same value again changes nothing. */
export async function setHoldNewTools(
  actor: Actor,
  server: string,
  hold: boolean,
): Promise<Result<{ server: string; holdNewTools: boolean }>> {
  if (!authorize(actor, 'servers.manage')) return fail('forbidden');
  const by = auditName(actor);
  return db.$transaction(async (tx) => {
    await tx.catalogServer.createMany({
      data: [{ name: server, holdNewTools: false, changedBy: by }],
      skipDuplicates: true,
    });
    // Locked, so two admins changing it at once serialize and each audit entry says what changed.
    const [row] = await tx.$queryRaw<{ hold_new_tools: boolean }[]>`
      SELECT hold_new_tools FROM catalog_servers WHERE name = ${server} FOR UPDATE`;
    if (row.hold_new_tools !== hold) {
      await tx.catalogServer.update({
        where: { name: server },
        data: { holdNewTools: hold, changedBy: by, changedAt: new Date() },
      });
      await appendAudit(tx, {
        actor: by,
        action: 'server.hold_new_tools',
        targetType: 'server',
        targetId: server,
        data: { from: row.hold_new_tools, to: hold },
      });
    }
    return ok({ server, holdNewTools: hold });
  });
}

// ── Reading ───────────────────────────────────────────────────────────────────────────────────

export type CatalogTool = {
  name: string;
  accepted: {
    definitionHash: string;
    definition: PinnedDefinition;
    acceptedAt: Date;
    acceptedBy: string | null;
  } | null;
  held: { definitionHash: string; definition: PinnedDefinition; since: Date; differs: DefinitionPart[] } | null;
  requiredApprovals: RequiredApprovals;
  blocked: boolean;
};

export type ToolCatalog = {
  server: string;
  trusted: boolean;
  holdNewTools: boolean;
  tools: CatalogTool[];
  lint: LintFinding[];
};

/** A server's catalog: each tool's accepted and held definitions, policy's requirement, and the lint of them all. */
export async function listTools(viewer: Actor, server: string): Promise<Result<ToolCatalog>> {
  // Those who read outcomes, and those who accept changes (the command line among them).
  if (!authorize(viewer, 'outcomes.read') && !authorize(viewer, 'servers.manage')) return fail('forbidden');
  const [defs, trusted, setting, rules] = await Promise.all([
    db.toolDefinition.findMany({ where: { server }, orderBy: { toolName: 'asc' }, take: CATALOG_MAX_TOOLS }),
    db.trustedServer.count({ where: { name: server } }).then((n) => n > 0),
    db.catalogServer.findUnique({ where: { name: server }, select: { holdNewTools: true } }),
    db.policyRule.findMany({ where: { server }, select: { toolName: true, requiredApprovals: true, blocked: true } }),
  ]);
  if (!defs.length) return fail('not_found', `No gateway has reported the tools of ${server}.`);
  const tools = defs.map((d): CatalogTool => {
    const accepted = (d.accepted as PinnedDefinition | null) ?? null;
    const held = (d.held as PinnedDefinition | null) ?? null;
    const verdict = requiredApprovalsFor({
      toolName: d.toolName,
      annotations: ((accepted ?? held)?.annotations ?? null) as ToolAnnotations | null,
      serverTrusted: trusted,
      rules,
    });
    return {
      name: d.toolName,
      accepted:
        accepted && d.acceptedHash && d.acceptedAt
          ? { definitionHash: d.acceptedHash, definition: accepted, acceptedAt: d.acceptedAt, acceptedBy: d.acceptedBy }
          : null,
      held:
        held && d.heldHash && d.heldSince
          ? {
              definitionHash: d.heldHash,
              definition: held,
              since: d.heldSince,
              differs: definitionDiffers(accepted, held),
            }
          : null,
      requiredApprovals: verdict.requiredApprovals,
      blocked: verdict.blocked,
    };
  });
  const definitions = defs.flatMap((d) => [d.accepted, d.held].filter(Boolean)) as ToolDefinition[];
  return ok({ server, trusted, holdNewTools: setting?.holdNewTools ?? false, tools, lint: lintCatalog(definitions) });
}

/** The servers the catalog knows, with how many tools each has and how many are held. */
export async function listCatalogServers(viewer: Actor): Promise<Result<CatalogServerRow[]>> {
  if (!authorize(viewer, 'outcomes.read')) return fail('forbidden');
  return ok(await rows(selectCatalogServers(1000)));
}

/** What the catalog says of one tool, for a page that shows a request for it. */
export type CatalogEntry = {
  accepted: { definitionHash: string; description: string | null; acceptedAt: Date; acceptedBy: string | null } | null;
  /** A different definition waits for an admin: the gateway hides the tool and refuses its calls. */
  held: { definitionHash: string; since: Date } | null;
};

/**
 * The accepted definition's description of `tool` on `server`, and whether a change is held, for
 * those who may read approval requests (the request page shows it beside the one the gateway
 * staged); null when no gateway has reported the tool's definition.
 */
export async function catalogEntry(viewer: Actor, server: string, tool: string): Promise<Result<CatalogEntry | null>> {
  if (!authorize(viewer, 'approvals.read')) return fail('forbidden');
  const d = await db.toolDefinition.findUnique({
    where: { server_toolName: { server, toolName: tool } },
    select: { acceptedHash: true, accepted: true, acceptedAt: true, acceptedBy: true, heldHash: true, heldSince: true },
  });
  if (!d) return ok(null);
  const accepted = (d.accepted as PinnedDefinition | null) ?? null;
  return ok({
    accepted:
      accepted && d.acceptedHash && d.acceptedAt
        ? {
            definitionHash: d.acceptedHash,
            // Masked as the description staged with a request is (lib/server/approvals/request.ts),
            // so the page compares like with like and shows no more than the request does.
            description: mask(accepted.description) ?? null,
            acceptedAt: d.acceptedAt,
            acceptedBy: d.acceptedBy,
          }
        : null,
    held: d.heldHash && d.heldSince ? { definitionHash: d.heldHash, since: d.heldSince } : null,
  });
}
