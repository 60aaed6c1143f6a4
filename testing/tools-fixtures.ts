// Shared setup of the tool inventory tests (lib/server/tools/*.test.ts): keys, people, hints,
// and calls recorded or staged as approval requests.
import { requestApproval } from '@/lib/server/approvals';
import { ingestOutcomes } from '@/lib/server/outcomes';
import { makeUser, uniq } from './factories';
import {
  listToolInventory,
  requirementSchema,
  setApprovalRequirement,
  type InventoryServer,
  type InventoryTool,
  type RequirementInput,
} from '@/lib/server/tools/tools';
import type { Viewer } from '@/lib/auth/permissions';
import { approvalRequestSchema } from '@/lib/approvals/schemas';
import { ARGUMENTS, ARGUMENTS_DIGEST } from './approvals-arguments';
import { outcomeBatchSchema, type Observed, type Outcome, type ToolAnnotations } from '@/lib/outcomes/schemas';
import { type Actor } from '@/lib/auth/actor';
import { makeApiKey as makeKey, value } from './factories';
export { makeKey, value };

// ── factories ───────────────────────────────────────────────────────────────────────────────

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;
export const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

export const OK: Observed = { sent: true, httpStatus: 200, result: { isError: false, outputValidation: 'valid' } };
export const HTTP_500: Observed = { sent: true, httpStatus: 500 };
export const SCHEMA_VIOLATION: Observed = {
  sent: true,
  httpStatus: 200,
  result: { isError: false, outputValidation: 'invalid' },
};
export const BLOCKED: Observed = { sent: false, clientBlock: 'approval_required' };

export const READ: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};
export const SAFE_WRITE: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
};
export const MCP_DEFAULTS = { readOnly: false, destructive: true, idempotent: false, openWorld: true };

export type Call = { server: string; tool: string; annotations?: ToolAnnotations; at: string; observed?: Observed };

export let writer: Actor;
export let requester: Actor;
export let admin: Viewer;
export let reviewer: Viewer;
export let support: Viewer;

export async function setUpToolActors() {
  writer = await makeKey(['outcomes:write']);
  requester = await makeKey(['approvals:request']);
  admin = await makeUser('admin');
  reviewer = await makeUser('reviewer');
  support = await makeUser('support');
}

/** Through the wire schema and the real ingestion path, as the API route does. */
export async function record(...calls: Call[]): Promise<void> {
  const records: Outcome[] = calls.map((c) => ({
    eventId: uniq('evt'),
    occurredAt: c.at,
    requestRef: uniq('req'),
    organization: 'acme',
    principal: 'user_193',
    server: c.server,
    tool: { name: c.tool, annotations: c.annotations },
    observed: c.observed ?? OK,
  }));
  for (let i = 0; i < records.length; i += 1000)
    value(await ingestOutcomes(writer, outcomeBatchSchema.parse({ records: records.slice(i, i + 1000) })));
}

export async function stage(server: string, tool: string, annotations?: ToolAnnotations) {
  const body = approvalRequestSchema.parse({
    requestRef: uniq('req'),
    organization: 'acme',
    principal: 'user_193',
    agent: 'support-bot',
    server,
    tool: { name: tool, annotations },
    arguments: ARGUMENTS,
    argsDigest: ARGUMENTS_DIGEST,
    summary: 'Refund 40.00 EUR on order 4411',
  });
  return value(await requestApproval(requester, uniq('idem'), body)).approval;
}

export async function serverOf(name: string, viewer: Viewer = admin): Promise<InventoryServer> {
  const inventory = value(await listToolInventory(viewer));
  const server = inventory.servers.find((s) => s.name === name);
  if (!server) throw new Error(`${name} is not in the inventory`);
  return server;
}

export async function toolOf(server: string, tool: string, viewer: Viewer = admin): Promise<InventoryTool> {
  const found = (await serverOf(server, viewer)).tools.find((t) => t.name === tool);
  if (!found) throw new Error(`${server}/${tool} is not in the inventory`);
  return found;
}

export const requirement = (input: Partial<RequirementInput> & { server: string }, viewer: Viewer = admin) =>
  setApprovalRequirement(viewer, requirementSchema.parse({ tool: null, requirement: 'default', ...input }));
