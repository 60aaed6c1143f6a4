import 'server-only';
import { replicaSafe } from '../db/replica';
import { z } from 'zod';
import { db } from '../db/db';
import { rows as run } from '../db/kysely';
import { selectToolInventory } from './sql';
import { deletePolicyRule, listPolicyRules, setPolicyRule, type PolicyRuleView } from '../policy/policy-rules';
import { authorize } from '@/lib/auth/permissions';
import type { Actor } from '@/lib/auth/actor';
import {
  believedHints,
  policyBasisText,
  requiredApprovalsFor,
  WHOLE_SERVER,
  type PolicyBasis,
  type RequiredApprovals,
} from '@/lib/approvals/policy';
import { policyRuleSchema } from '@/lib/approvals/schemas';
import type { ToolAnnotations } from '@/lib/outcomes/schemas';
import { fail, ok, type Result } from '@/lib/result';

// The tools inventory (admin/tools): every server and tool seen in outcome records and approval
// requests, what each advertises, what policy believes of it, and what it requires now.

/** The four MCP hints as policy reads them. */
export type Hints = { readOnly: boolean; destructive: boolean; idempotent: boolean; openWorld: boolean };

export type InventoryRule = {
  id: string;
  requiredApprovals: number;
  blocked: boolean;
  createdBy: string;
  createdAt: Date;
};

export type InventoryTool = {
  name: string;
  /** As last advertised (outcome record or approval request, whichever came last); null if never. */
  advertised: ToolAnnotations | null;
  /** What policy believes: the advertised hints of a trusted server, else MCP's defaults. */
  believed: Hints;
  /** The requirement in force for a request carrying the last advertised annotations. */
  requirement: { requiredApprovals: RequiredApprovals; blocked: boolean; basis: PolicyBasis; basisText: string };
  /** The admin rule for this very tool, if any. */
  toolRule: InventoryRule | null;
  /** Over the last seven days: calls, calls that did not complete ok, approval requests. */
  calls7d: number;
  failures7d: number;
  requests7d: number;
  lastSeen: Date;
};

export type InventoryServer = {
  name: string;
  trust: { by: string; at: Date } | null;
  /** The admin rule for every tool of this server, if any. */
  serverRule: InventoryRule | null;
  tools: InventoryTool[];
  calls7d: number;
  failures7d: number;
  lastSeen: Date;
};

/** `since`: where the seven-day window starts, for links to the matching outcome records. */
export type ToolInventory = { servers: InventoryServer[]; truncated: boolean; since: Date };

/** At most this many (server, tool) pairs are listed: a misbehaving caller can invent names. */
export const INVENTORY_MAX_TOOLS = 2000;

/** MCP's idempotentHint joins the three hints policy reads, with the same rule of belief. */
export function believedToolHints(annotations: ToolAnnotations | null | undefined, serverTrusted: boolean): Hints {
  return {
    ...believedHints(annotations, serverTrusted),
    idempotent: (serverTrusted ? annotations?.idempotentHint : null) ?? false,
  };
}

// Only the four hints and the title: whatever else a row's JSON holds is not shown.
function advertisedOf(json: unknown): ToolAnnotations | null {
  if (!json || typeof json !== 'object') return null;
  const a = json as Record<string, unknown>;
  const hint = (v: unknown) => (typeof v === 'boolean' ? v : undefined);
  return {
    title: typeof a.title === 'string' ? a.title : undefined,
    readOnlyHint: hint(a.readOnlyHint),
    destructiveHint: hint(a.destructiveHint),
    idempotentHint: hint(a.idempotentHint),
    openWorldHint: hint(a.openWorldHint),
  };
}

/** Any signed-in role may see the inventory; changing trust or policy is for admins (data access checks again). */
export const listToolInventory = replicaSafe(async function listToolInventory(
  viewer: Actor,
): Promise<Result<ToolInventory>> {
  if (!authorize(viewer, 'outcomes.read') || !authorize(viewer, 'approvals.read')) return fail('forbidden');
  const rows = await run(selectToolInventory(INVENTORY_MAX_TOOLS + 1));
  const truncated = rows.length > INVENTORY_MAX_TOOLS;
  const listed = rows.slice(0, INVENTORY_MAX_TOOLS);
  const serverNames = [...new Set(listed.map((r) => r.server))];
  const rules = serverNames.length
    ? await db.policyRule.findMany({
        where: { server: { in: serverNames } },
        select: {
          id: true,
          server: true,
          toolName: true,
          requiredApprovals: true,
          blocked: true,
          createdBy: true,
          createdAt: true,
        },
      })
    : [];
  const rulesOf = new Map<string, typeof rules>();
  for (const r of rules) rulesOf.set(r.server, [...(rulesOf.get(r.server) ?? []), r]);
  const toRule = (r: (typeof rules)[number] | undefined): InventoryRule | null =>
    r
      ? {
          id: r.id,
          requiredApprovals: r.requiredApprovals,
          blocked: r.blocked,
          createdBy: r.createdBy,
          createdAt: r.createdAt,
        }
      : null;

  const servers = new Map<string, InventoryServer>();
  for (const row of listed) {
    const serverRules = rulesOf.get(row.server) ?? [];
    const trusted = row.trusted_at !== null;
    let server = servers.get(row.server);
    if (!server) {
      server = {
        name: row.server,
        trust: trusted ? { by: row.trusted_by ?? 'unknown', at: row.trusted_at! } : null,
        serverRule: toRule(serverRules.find((r) => r.toolName === WHOLE_SERVER)),
        tools: [],
        calls7d: 0,
        failures7d: 0,
        lastSeen: row.last_seen,
      };
      servers.set(row.server, server);
    }
    const advertised = advertisedOf(row.annotations);
    const verdict = requiredApprovalsFor({
      toolName: row.tool_name,
      annotations: advertised,
      serverTrusted: trusted,
      rules: serverRules,
    });
    const tool: InventoryTool = {
      name: row.tool_name,
      advertised,
      believed: believedToolHints(advertised, trusted),
      requirement: { ...verdict, basisText: policyBasisText[verdict.basis] },
      toolRule: toRule(serverRules.find((r) => r.toolName === row.tool_name && r.toolName !== WHOLE_SERVER)),
      calls7d: Number(row.calls_7d),
      failures7d: Number(row.failures_7d),
      requests7d: Number(row.requests_7d),
      lastSeen: row.last_seen,
    };
    server.tools.push(tool);
    server.calls7d += tool.calls7d;
    server.failures7d += tool.failures7d;
    if (tool.lastSeen > server.lastSeen) server.lastSeen = tool.lastSeen;
  }
  return ok({ servers: [...servers.values()], truncated, since: new Date(Date.now() - 7 * 24 * 3_600_000) });
});

// ── Setting a requirement from the inventory ────────────────────────────────────────────────

export const requirementChoices = ['default', '0', '1', '2', 'blocked'] as const;
export type RequirementChoice = (typeof requirementChoices)[number];

/**
 * A tool's (or, with `tool` empty, a whole server's) requirement as chosen in the inventory:
 * 0, 1 or 2 approvals is an admin rule, the same as the policy page and the CLI write;
 * `default` removes the rule, so the server rule or the annotations decide again.
 */
export const requirementSchema = z.object({
  server: policyRuleSchema.shape.server,
  tool: policyRuleSchema.shape.tool,
  requirement: z.enum(requirementChoices, 'must be default, 0, 1, 2 or blocked'),
});
export type RequirementInput = z.output<typeof requirementSchema>;

/** The rule now in force for (server, tool), or null when `default` left none. */
export async function setApprovalRequirement(
  viewer: Actor,
  input: RequirementInput,
): Promise<Result<PolicyRuleView | null>> {
  if (!authorize(viewer, 'policy.manage')) return fail('forbidden');
  if (input.requirement !== 'default') {
    return setPolicyRule(viewer, {
      server: input.server,
      tool: input.tool,
      requiredApprovals: input.requirement === 'blocked' ? 'blocked' : Number(input.requirement),
    });
  }
  const rule = await db.policyRule.findUnique({
    where: { server_toolName: { server: input.server, toolName: input.tool ?? WHOLE_SERVER } },
    select: { id: true },
  });
  if (!rule) return ok(null);
  const deleted = await deletePolicyRule(viewer, rule.id);
  // Someone else removed it a moment ago: the outcome asked for is reached all the same.
  if (!deleted.ok && deleted.failure === 'not_found') return ok(null);
  return deleted.ok ? ok(null) : deleted;
}

/**
 * The rules as the policy page lists them: admins only. (Reviewers may read the rules through
 * listPolicyRules, to see why a request needs two of them; managing them is policy.manage.)
 */
export async function listPolicyRulesToManage(viewer: Actor): Promise<Result<PolicyRuleView[]>> {
  if (!authorize(viewer, 'policy.manage')) return fail('forbidden');
  return listPolicyRules(viewer);
}
