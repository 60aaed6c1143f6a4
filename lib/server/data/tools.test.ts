import { beforeAll, describe, expect, it } from 'vitest';
import { requestApproval } from './approvals';
import { createApiKey, type ApiClient } from './credentials';
import { ingestOutcomes } from './outcomes';
import { listPolicyRules } from './policy-rules';
import { trustServer, untrustServer } from './trusted-servers';
import { makeUser, uniq } from '../../../testing/factories';
import {
  INVENTORY_MAX_TOOLS,
  listPolicyRulesToManage,
  listToolInventory,
  requirementSchema,
  setApprovalRequirement,
  type InventoryServer,
  type InventoryTool,
  type RequirementInput,
} from './tools';
import type { Viewer } from '@/lib/auth/permissions';
import type { ApiScope } from '@/lib/credentials/scopes';
import { approvalRequestSchema } from '@/lib/approvals/schemas';
import { outcomeBatchSchema, type Observed, type Outcome, type ToolAnnotations } from '@/lib/outcomes/schemas';
import type { Result } from '@/lib/result';
import { cli } from '@/lib/auth/actor';

// ── factories ───────────────────────────────────────────────────────────────────────────────

async function makeKey(scopes: ApiScope[]): Promise<ApiClient> {
  const created = await createApiKey(cli, { name: uniq('key'), scopes });
  if (!created.ok) throw new Error(created.failure);
  return { kind: 'apiKey', keyId: created.value.key.id, name: created.value.key.name, scopes, organization: null };
}

function value<T>(result: Result<T>): T {
  if (!result.ok) throw new Error(`${result.failure}: ${result.detail ?? ''} ${JSON.stringify(result.errors ?? [])}`);
  return result.value;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

const OK: Observed = { sent: true, httpStatus: 200, result: { isError: false, outputValidation: 'valid' } };
const HTTP_500: Observed = { sent: true, httpStatus: 500 };
const SCHEMA_VIOLATION: Observed = {
  sent: true,
  httpStatus: 200,
  result: { isError: false, outputValidation: 'invalid' },
};
const BLOCKED: Observed = { sent: false, clientBlock: 'approval_required' };

const READ: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};
const SAFE_WRITE: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
};
const MCP_DEFAULTS = { readOnly: false, destructive: true, idempotent: false, openWorld: true };

type Call = { server: string; tool: string; annotations?: ToolAnnotations; at: string; observed?: Observed };

let writer: ApiClient;
let requester: ApiClient;
let admin: Viewer;
let reviewer: Viewer;
let support: Viewer;

beforeAll(async () => {
  writer = await makeKey(['outcomes:write']);
  requester = await makeKey(['approvals:request']);
  admin = await makeUser('admin');
  reviewer = await makeUser('reviewer');
  support = await makeUser('support');
});

/** Through the wire schema and the real ingestion path, as the API route does. */
async function record(...calls: Call[]): Promise<void> {
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

async function stage(server: string, tool: string, annotations?: ToolAnnotations) {
  const body = approvalRequestSchema.parse({
    requestRef: uniq('req'),
    organization: 'acme',
    principal: 'user_193',
    agent: 'support-bot',
    server,
    tool: { name: tool, annotations },
    argsDigest: `sha256:${'0'.repeat(64)}`,
    summary: 'Refund 40.00 EUR on order 4411',
  });
  return value(await requestApproval(requester, uniq('idem'), body)).approval;
}

async function serverOf(name: string, viewer: Viewer = admin): Promise<InventoryServer> {
  const inventory = value(await listToolInventory(viewer));
  const server = inventory.servers.find((s) => s.name === name);
  if (!server) throw new Error(`${name} is not in the inventory`);
  return server;
}

async function toolOf(server: string, tool: string, viewer: Viewer = admin): Promise<InventoryTool> {
  const found = (await serverOf(server, viewer)).tools.find((t) => t.name === tool);
  if (!found) throw new Error(`${server}/${tool} is not in the inventory`);
  return found;
}

const requirement = (input: Partial<RequirementInput> & { server: string }, viewer: Viewer = admin) =>
  setApprovalRequirement(viewer, requirementSchema.parse({ tool: null, requirement: 'default', ...input }));

// ── listing ─────────────────────────────────────────────────────────────────────────────────

describe('listToolInventory', () => {
  // First: the file's own database holds no records yet.
  it('is empty when nothing was seen', async () => {
    expect(value(await listToolInventory(admin))).toMatchObject({ servers: [], truncated: false });
  });

  it('groups tools by server with trust, last advertised and believed hints, 7-day counts and last seen', async () => {
    const trusted = uniq('trusted');
    const wild = uniq('wild');
    await trustServer(cli, trusted);
    await record(
      // Older than a week: counts for last seen, never for the 7-day numbers.
      { server: trusted, tool: 'get_order', annotations: SAFE_WRITE, at: ago(10 * DAY), observed: HTTP_500 },
      { server: trusted, tool: 'get_order', annotations: READ, at: ago(2 * HOUR) },
      {
        server: trusted,
        tool: 'get_order',
        annotations: { ...READ, idempotentHint: false },
        at: ago(3 * HOUR),
        observed: HTTP_500,
      },
      // The latest call advertised nothing: the last advertisement stays the one two hours ago.
      { server: trusted, tool: 'get_order', at: ago(30 * 60_000), observed: SCHEMA_VIOLATION },
      { server: trusted, tool: 'update_note', annotations: SAFE_WRITE, at: ago(DAY), observed: BLOCKED },
      { server: trusted, tool: 'refund', annotations: { readOnlyHint: false }, at: ago(5 * DAY) },
      { server: wild, tool: 'lookup_customer', annotations: READ, at: ago(HOUR) },
      { server: wild, tool: 'lookup_customer', annotations: READ, at: ago(8 * DAY) },
    );

    const inventory = value(await listToolInventory(admin));
    const names = inventory.servers.map((s) => s.name);
    expect(names).toEqual([...names].sort());

    const t = await serverOf(trusted);
    expect(t.trust).toMatchObject({ by: 'cli' });
    expect(t.trust!.at).toBeInstanceOf(Date);
    expect(t.serverRule).toBeNull();
    expect(t.tools.map((x) => x.name)).toEqual(['get_order', 'refund', 'update_note']);
    expect(t.calls7d).toBe(3 + 1 + 1);
    expect(t.failures7d).toBe(2 + 1);

    const getOrder = t.tools[0];
    expect(getOrder.advertised).toMatchObject(READ);
    expect(getOrder.believed).toEqual({ readOnly: true, destructive: false, idempotent: true, openWorld: false });
    expect(getOrder.requirement).toEqual({
      requiredApprovals: 0,
      basis: 'read_only',
      basisText: 'the tool is read-only (trusted server)',
    });
    expect(getOrder.toolRule).toBeNull();
    // 2 h ok, 3 h HTTP 500, 30 min completed but not ok (schema violation): 3 calls, 2 failures.
    expect(getOrder).toMatchObject({ calls7d: 3, failures7d: 2, requests7d: 0 });
    expect(Math.abs(getOrder.lastSeen.getTime() - (Date.now() - 30 * 60_000))).toBeLessThan(60_000);

    // Hints a trusted server leaves out are MCP's defaults.
    const refund = t.tools[1];
    expect(refund.believed).toEqual(MCP_DEFAULTS);
    expect(refund.requirement).toMatchObject({ requiredApprovals: 2, basis: 'destructive_open_world' });

    const updateNote = t.tools[2];
    expect(updateNote.believed).toEqual({ readOnly: false, destructive: false, idempotent: false, openWorld: false });
    expect(updateNote.requirement).toMatchObject({ requiredApprovals: 1, basis: 'default' });
    // Blocked before sending (approval required): a call, and not one that completed ok.
    expect(updateNote).toMatchObject({ calls7d: 1, failures7d: 1 });

    // An untrusted server's hints are shown as advertised and never believed.
    const w = await serverOf(wild);
    expect(w.trust).toBeNull();
    const lookup = w.tools[0];
    expect(lookup.advertised).toMatchObject(READ);
    expect(lookup.believed).toEqual(MCP_DEFAULTS);
    expect(lookup.requirement).toMatchObject({ requiredApprovals: 2, basis: 'destructive_open_world' });
    expect(lookup).toMatchObject({ calls7d: 1, failures7d: 0 });
  });

  it('lists tools seen only in approval requests, and takes the newest advertisement from either source', async () => {
    const server = uniq('staged');
    await trustServer(cli, server);
    await record({ server, tool: 'cancel_order', annotations: READ, at: ago(DAY) });
    const before = Date.now();
    await stage(server, 'cancel_order', SAFE_WRITE);
    await stage(server, 'close_account');

    const cancel = await toolOf(server, 'cancel_order');
    expect(cancel.advertised).toMatchObject(SAFE_WRITE);
    expect(cancel.requirement).toMatchObject({ requiredApprovals: 1, basis: 'default' });
    expect(cancel).toMatchObject({ calls7d: 1, failures7d: 0, requests7d: 1 });
    expect(cancel.lastSeen.getTime()).toBeGreaterThanOrEqual(before - 5_000);

    const close = await toolOf(server, 'close_account');
    expect(close).toMatchObject({ advertised: null, calls7d: 0, failures7d: 0, requests7d: 1 });
    expect(close.believed).toEqual(MCP_DEFAULTS);

    // A later record that advertises again wins over the request.
    await record({ server, tool: 'cancel_order', annotations: READ, at: new Date(Date.now() + 1_000).toISOString() });
    expect((await toolOf(server, 'cancel_order')).advertised).toMatchObject(READ);
  });

  it('follows trust as it changes: untrusted, the same hints are no longer believed', async () => {
    const server = uniq('flip');
    await trustServer(cli, server);
    await record({ server, tool: 'get_order', annotations: READ, at: ago(HOUR) });
    expect((await toolOf(server, 'get_order')).requirement.requiredApprovals).toBe(0);
    value(await untrustServer(admin, server));
    const after = await serverOf(server);
    expect(after.trust).toBeNull();
    expect(after.tools[0].believed).toEqual(MCP_DEFAULTS);
    expect(after.tools[0].requirement).toMatchObject({ requiredApprovals: 2, basis: 'destructive_open_world' });
  });

  it('is open to every signed-in role', async () => {
    for (const viewer of [support, reviewer, admin]) expect((await listToolInventory(viewer)).ok).toBe(true);
  });
});

// ── requirements ────────────────────────────────────────────────────────────────────────────

describe('setApprovalRequirement', () => {
  it('a tool rule wins over a server rule, which wins over the hints; default removes each', async () => {
    const server = uniq('policy');
    await trustServer(cli, server);
    await record(
      { server, tool: 'get_order', annotations: READ, at: ago(HOUR) },
      { server, tool: 'update_note', annotations: SAFE_WRITE, at: ago(HOUR) },
    );

    const serverRule = value(await requirement({ server, requirement: '2' }));
    expect(serverRule).toMatchObject({ server, tool: null, requiredApprovals: 2, createdBy: admin.email });
    let s = await serverOf(server);
    expect(s.serverRule).toMatchObject({ id: serverRule!.id, requiredApprovals: 2, createdBy: admin.email });
    for (const t of s.tools)
      expect(t.requirement).toMatchObject({
        requiredApprovals: 2,
        basis: 'server_rule',
        basisText: 'an admin rule for every tool of this server',
      });

    const toolRule = value(await requirement({ server, tool: 'get_order', requirement: '0' }));
    expect(toolRule).toMatchObject({ server, tool: 'get_order', requiredApprovals: 0 });
    s = await serverOf(server);
    expect(s.tools[0]).toMatchObject({
      name: 'get_order',
      toolRule: { id: toolRule!.id, requiredApprovals: 0 },
      requirement: { requiredApprovals: 0, basis: 'tool_rule' },
    });
    expect(s.tools[1]).toMatchObject({
      name: 'update_note',
      toolRule: null,
      requirement: { requiredApprovals: 2, basis: 'server_rule' },
    });

    // Changing a rule changes it in place: still one rule for the pair.
    value(await requirement({ server, tool: 'get_order', requirement: '1' }));
    expect((await toolOf(server, 'get_order')).requirement).toMatchObject({ requiredApprovals: 1, basis: 'tool_rule' });
    const rules = value(await listPolicyRules(admin)).filter((r) => r.server === server);
    expect(rules.map((r) => [r.tool, r.requiredApprovals])).toEqual(
      expect.arrayContaining([
        ['get_order', 1],
        [null, 2],
      ]),
    );
    expect(rules).toHaveLength(2);

    expect(value(await requirement({ server, tool: 'get_order', requirement: 'default' }))).toBeNull();
    expect((await toolOf(server, 'get_order')).requirement).toMatchObject({
      requiredApprovals: 2,
      basis: 'server_rule',
    });
    expect(value(await requirement({ server, requirement: 'default' }))).toBeNull();
    s = await serverOf(server);
    expect(s.serverRule).toBeNull();
    expect(s.tools.map((t) => [t.name, t.requirement.requiredApprovals, t.requirement.basis])).toEqual([
      ['get_order', 0, 'read_only'],
      ['update_note', 1, 'default'],
    ]);
    expect(value(await listPolicyRules(admin)).filter((r) => r.server === server)).toEqual([]);

    // Default with no rule is already reached.
    expect(value(await requirement({ server, tool: 'get_order', requirement: 'default' }))).toBeNull();
  });

  it('refuses reviewers and support staff, and changes nothing', async () => {
    const server = uniq('denied');
    for (const viewer of [reviewer, support]) {
      expect(await requirement({ server, tool: 'x', requirement: '2' }, viewer)).toMatchObject({
        ok: false,
        failure: 'forbidden',
      });
      expect(await requirement({ server, requirement: 'default' }, viewer)).toMatchObject({
        ok: false,
        failure: 'forbidden',
      });
    }
    value(await requirement({ server, requirement: '1' }));
    expect(await requirement({ server, requirement: 'default' }, reviewer)).toMatchObject({
      ok: false,
      failure: 'forbidden',
    });
    expect(value(await listPolicyRules(admin)).filter((r) => r.server === server)).toHaveLength(1);
  });

  it('validates its input with the policy rule fields', () => {
    expect(requirementSchema.parse({ server: ' billing-mcp ', tool: '', requirement: '2' })).toEqual({
      server: 'billing-mcp',
      tool: null,
      requirement: '2',
    });
    expect(requirementSchema.safeParse({ server: 'billing-mcp', tool: null, requirement: '3' }).success).toBe(false);
    expect(requirementSchema.safeParse({ server: 'billing-mcp', tool: 'a*', requirement: '1' }).success).toBe(false);
    expect(requirementSchema.safeParse({ server: '', tool: null, requirement: '1' }).success).toBe(false);
  });
});

describe('listPolicyRulesToManage', () => {
  it('is for admins only', async () => {
    const server = uniq('listed');
    value(await requirement({ server, tool: 'refund', requirement: '2' }));
    expect(
      value(await listPolicyRulesToManage(admin)).some(
        (r) => r.server === server && r.tool === 'refund' && r.requiredApprovals === 2,
      ),
    ).toBe(true);
    for (const viewer of [reviewer, support])
      expect(await listPolicyRulesToManage(viewer)).toMatchObject({ ok: false, failure: 'forbidden' });
  });
});

// Last: it fills the inventory past its bound.
describe('bounds', () => {
  it(`lists at most ${INVENTORY_MAX_TOOLS} tools and says so`, async () => {
    const server = uniq('zz-many');
    const at = ago(HOUR);
    await record(
      ...Array.from({ length: INVENTORY_MAX_TOOLS + 1 }, (_, i) => ({
        server,
        tool: `tool_${String(i).padStart(5, '0')}`,
        at,
      })),
    );
    const inventory = value(await listToolInventory(admin));
    expect(inventory.truncated).toBe(true);
    expect(inventory.servers.reduce((n, s) => n + s.tools.length, 0)).toBe(INVENTORY_MAX_TOOLS);
  });
});
