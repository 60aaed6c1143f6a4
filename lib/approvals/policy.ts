// How many distinct reviewers a staged mutation needs (docs/design.md, "Approval lifecycle"). Pure.
import type { ToolAnnotations } from '@/lib/outcomes/schemas';

export type RequiredApprovals = 0 | 1 | 2;

/** The tool name a whole-server rule is stored under. */
export const WHOLE_SERVER = '*';

/** What an admin rule asks: a number of approvals, or `blocked` (the tool is not exposed at all). */
export type Requirement = RequiredApprovals | 'blocked';
export const requirements = [0, 1, 2, 'blocked'] as const satisfies readonly Requirement[];

export type PolicyRuleInput = { toolName: string; requiredApprovals: number; blocked?: boolean };

export type PolicyBasis = 'tool_rule' | 'server_rule' | 'read_only' | 'destructive_open_world' | 'default';

/** `blocked`: no call goes through, with or without approvals; `requiredApprovals` is then 2. */
export type PolicyVerdict = { requiredApprovals: RequiredApprovals; basis: PolicyBasis; blocked: boolean };

/** A verdict or rule as one value, for display and forms. */
export const requirementOf = (v: { requiredApprovals: number; blocked?: boolean }): Requirement =>
  v.blocked ? 'blocked' : clamp(v.requiredApprovals);

export const policyBasisText: Record<PolicyBasis, string> = {
  tool_rule: 'an admin rule for this tool',
  server_rule: 'an admin rule for every tool of this server',
  read_only: 'the tool is read-only (trusted server)',
  destructive_open_world: 'the tool is destructive and open-world (or its server is untrusted)',
  default: 'the default for writes',
};

/**
 * The hints policy believes: a trusted server's, with MCP's defaults for any it leaves out; an
 * untrusted server's tools are what MCP assumes of any tool (readOnly false, destructive and
 * open-world true), so their hints can never lower the bar.
 */
export function believedHints(annotations: ToolAnnotations | null | undefined, serverTrusted: boolean) {
  const a = serverTrusted ? annotations : null;
  return {
    readOnly: a?.readOnlyHint ?? false,
    destructive: a?.destructiveHint ?? true,
    openWorld: a?.openWorldHint ?? true,
  };
}

/**
 * An admin rule for (server, tool) wins, then one for the whole server; otherwise a tool trusted
 * as read-only needs none, a destructive open-world one two, any other write one.
 * `rules` are the rules of this request's server.
 */
export function requiredApprovalsFor(input: {
  toolName: string;
  annotations: ToolAnnotations | null | undefined;
  serverTrusted: boolean;
  rules: readonly PolicyRuleInput[];
}): PolicyVerdict {
  const toolRule = input.rules.find((r) => r.toolName === input.toolName && r.toolName !== WHOLE_SERVER);
  if (toolRule) return fromRule(toolRule, 'tool_rule');
  const serverRule = input.rules.find((r) => r.toolName === WHOLE_SERVER);
  if (serverRule) return fromRule(serverRule, 'server_rule');
  const hints = believedHints(input.annotations, input.serverTrusted);
  if (hints.readOnly) return { requiredApprovals: 0, basis: 'read_only', blocked: false };
  if (hints.destructive && hints.openWorld)
    return { requiredApprovals: 2, basis: 'destructive_open_world', blocked: false };
  return { requiredApprovals: 1, basis: 'default', blocked: false };
}

const fromRule = (rule: PolicyRuleInput, basis: PolicyBasis): PolicyVerdict =>
  rule.blocked
    ? { requiredApprovals: 2, basis, blocked: true }
    : { requiredApprovals: clamp(rule.requiredApprovals), basis, blocked: false };

// Rules are 0..2 by schema and by a CHECK in the database; anything else is a bug, read as the strictest.
const clamp = (n: number): RequiredApprovals => (n === 0 || n === 1 ? n : 2);
