// POST /api/v1/policy/evaluate (docs/api.md) through the real route handler on the real database, and
// `blocked` in policy: which tools a gateway shows and which calls need a grant.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { api, call, expectOk, expectProblem } from '@/testing/api-harness';
import { approvalBody } from '@/testing/api-bodies';
import { uniq } from '@/testing/factories';
import { cli } from '@/lib/auth/actor';
import { createApiKey, createPersonalToken } from '@/lib/server/credentials/credentials';
import { setPolicyRule } from '@/lib/server/policy/policy-rules';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { makeUser } from '@/testing/factories';
import type { ApiScope } from '@/lib/credentials/scopes';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

const keyWith = async (scopes: ApiScope[]) => {
  const k = await createApiKey(cli, { name: uniq('pol-key'), scopes });
  if (!k.ok) throw new Error('key');
  return k.value.secret;
};
let requester = '';
beforeAll(async () => {
  requester = await keyWith(['approvals:request']);
});

const READ = { readOnlyHint: true };
const WRITE = { readOnlyHint: false, destructiveHint: false, openWorldHint: false };
const evaluate = (body: unknown, token = requester) => call(api.evaluatePolicy, { token, body });

describe('POST /api/v1/policy/evaluate', () => {
  it('answers per tool what policy requires, by hand-written expectations', async () => {
    const server = uniq('eval-mcp');
    await trustServer(cli, server);
    await setPolicyRule(cli, { server, tool: 'drop_table', requiredApprovals: 'blocked' });
    await setPolicyRule(cli, { server, tool: 'add_note', requiredApprovals: 2 });
    const r = await evaluate({
      server,
      tools: [
        { name: 'get_order', annotations: READ },
        { name: 'update_note', annotations: WRITE },
        { name: 'refund', annotations: { readOnlyHint: false } },
        { name: 'add_note', annotations: WRITE },
        { name: 'drop_table', annotations: READ },
        { name: 'bare' },
      ],
    });
    expectOk(r, [200]);
    expect(r.json.server).toBe(server);
    expect(r.json.trusted).toBe(true);
    const row = (name: string) => {
      const t = r.json.tools.find((x: { name: string }) => x.name === name);
      return [t.readOnly, t.blocked, t.requiredApprovals];
    };
    expect(r.json.tools.map((t: { name: string }) => t.name)).toEqual([
      'get_order',
      'update_note',
      'refund',
      'add_note',
      'drop_table',
      'bare',
    ]);
    expect(row('get_order')).toEqual([true, false, 0]);
    expect(row('update_note')).toEqual([false, false, 1]);
    expect(row('refund')).toEqual([false, false, 2]);
    expect(row('add_note')).toEqual([false, false, 2]);
    expect(row('drop_table')).toEqual([true, true, 2]);
    expect(row('bare')).toEqual([false, false, 2]);
    for (const t of r.json.tools) expect(typeof t.reason).toBe('string');
    expect(r.json.tools.find((t: { name: string }) => t.name === 'drop_table').reason).toMatch(/^blocked/);
  });

  it("never believes an untrusted server's hints; a blocked server blocks every tool without its own rule", async () => {
    const server = uniq('eval-untrusted');
    await setPolicyRule(cli, { server, tool: null, requiredApprovals: 'blocked' });
    await setPolicyRule(cli, { server, tool: 'allowed', requiredApprovals: 1 });
    const r = await evaluate({ server, tools: [{ name: 'lookup', annotations: READ }, { name: 'allowed' }] });
    expectOk(r, [200]);
    expect(r.json.trusted).toBe(false);
    const defaults = { failedAttempts: 5, calls: 200, backoffBaseMs: 1000 };
    expect(r.json.tools).toEqual([
      {
        name: 'lookup',
        readOnly: false,
        blocked: true,
        held: false,
        requiredApprovals: 2,
        reason: expect.any(String),
        budgets: defaults,
      },
      {
        name: 'allowed',
        readOnly: false,
        blocked: false,
        held: false,
        requiredApprovals: 1,
        reason: expect.any(String),
        budgets: defaults,
      },
    ]);
  });

  it('takes 1000 tools, refuses 0, 1001, a duplicate name and unknown fields, naming the field', async () => {
    const server = uniq('eval-many');
    const many = Array.from({ length: 1000 }, (_, i) => ({ name: `t${i}`, annotations: READ }));
    const ok = await evaluate({ server, tools: many });
    expectOk(ok, [200]);
    expect(ok.json.tools).toHaveLength(1000);
    expectProblem(await evaluate({ server, tools: [] }), [422], 'tools');
    expectProblem(await evaluate({ server, tools: [...many, { name: 'one-more' }] }), [422], 'tools');
    expectProblem(
      await evaluate({ server, tools: [{ name: 'a' }, { name: 'b' }, { name: 'a' }] }),
      [422],
      'tools.2.name',
    );
    expectProblem(await evaluate({ server, tools: [{ name: 'a' }], extra: 1 }), [422], 'extra');
    expectProblem(await evaluate({ tools: [{ name: 'a' }] }), [422], 'server');
    expectProblem(await evaluate({ server, tools: [{ name: '' }] }), [422], 'tools.0.name');
    expectProblem(await evaluate({ server, tools: [{ name: 'x'.repeat(201) }] }), [422], 'tools.0.name');
    expectProblem(await evaluate({ server, tools: 'all' }), [422], 'tools');
  });

  it('needs approvals:request (or a signed-in person); other scopes and no credential are refused', async () => {
    const body = { server: uniq('eval-auth'), tools: [{ name: 'x' }] };
    expectProblem(await evaluate(body, await keyWith(['outcomes:write'])), [403]);
    expectProblem(await evaluate(body, await keyWith(['grants:redeem'])), [403]);
    expectProblem(await evaluate(body, 'cs_live_nope'), [401]);
    const support = await makeUser('support');
    const token = await createPersonalToken(cli, support.userId, 'eval');
    if (!token.ok) throw new Error('token');
    expectOk(await evaluate(body, token.value.secret), [200]);
  });

  it('sees an admin change at once', async () => {
    const server = uniq('eval-change');
    const tools = [{ name: 'write_file' }];
    expect((await evaluate({ server, tools })).json.tools[0].blocked).toBe(false);
    await setPolicyRule(cli, { server, tool: 'write_file', requiredApprovals: 'blocked' });
    expect((await evaluate({ server, tools })).json.tools[0].blocked).toBe(true);
    await setPolicyRule(cli, { server, tool: 'write_file', requiredApprovals: 0 });
    expect((await evaluate({ server, tools })).json.tools[0]).toMatchObject({ blocked: false, requiredApprovals: 0 });
  });

  it("answers each tool's budgets, resolved: its rule's, else its server's, else the defaults", async () => {
    const server = uniq('eval-budgets');
    await setPolicyRule(cli, { server, tool: null, requiredApprovals: 1, calls: 40, backoffBaseMs: 2000 });
    await setPolicyRule(cli, { server, tool: 'refund', requiredApprovals: 2, failedAttempts: 2 });
    await setPolicyRule(cli, { server, tool: 'get_order', requiredApprovals: 0, calls: 1000, backoffBaseMs: 100 });
    const tools = [{ name: 'refund' }, { name: 'get_order', annotations: READ }, { name: 'other' }];
    const r = await evaluate({ server, tools });
    expectOk(r, [200]);
    expect(r.json.tools.map((t: { name: string; budgets: unknown }) => [t.name, t.budgets])).toEqual([
      ['refund', { failedAttempts: 2, calls: 40, backoffBaseMs: 2000 }],
      ['get_order', { failedAttempts: 5, calls: 1000, backoffBaseMs: 100 }],
      ['other', { failedAttempts: 5, calls: 40, backoffBaseMs: 2000 }],
    ]);
    // Cleared on the server's rule: the defaults show through where no tool rule sets them.
    await setPolicyRule(cli, { server, tool: null, calls: null, backoffBaseMs: null });
    const after = await evaluate({ server, tools });
    expect(after.json.tools.map((t: { budgets: unknown }) => t.budgets)).toEqual([
      { failedAttempts: 2, calls: 200, backoffBaseMs: 1000 },
      { failedAttempts: 5, calls: 1000, backoffBaseMs: 100 },
      { failedAttempts: 5, calls: 200, backoffBaseMs: 1000 },
    ]);
  });

  it('answers concurrent evaluations alike', async () => {
    const server = uniq('eval-conc');
    await setPolicyRule(cli, { server, tool: 'w', requiredApprovals: 'blocked' });
    const all = await Promise.all(Array.from({ length: 20 }, () => evaluate({ server, tools: [{ name: 'w' }] })));
    for (const r of all) expect(r.json.tools[0].blocked).toBe(true);
  });
});

describe('a blocked tool cannot be approved', () => {
  it('refuses to stage an approval request for it, and stores nothing', async () => {
    const server = uniq('blocked-mcp');
    await setPolicyRule(cli, { server, tool: 'refund_payment', requiredApprovals: 'blocked' });
    const key = await keyWith(['approvals:request']);
    const r = await call(api.postApproval, {
      token: key,
      body: approvalBody({ server, tool: { name: 'refund_payment' } }),
      headers: { 'idempotency-key': uniq('idem') },
    });
    expectProblem(r, [403]);
    expect(r.json.detail).toMatch(/blocked by policy/);
    const { db } = await import('@/lib/server/db/db');
    expect(await db.approvalRequest.count({ where: { server } })).toBe(0);
    // Another tool of the same server is not blocked.
    const other = await call(api.postApproval, {
      token: key,
      body: approvalBody({ server, tool: { name: 'add_note' } }),
      headers: { 'idempotency-key': uniq('idem') },
    });
    expectOk(other, [201]);
  });

  it('a rule changed from blocked back to a count lets requests in again (audited both ways)', async () => {
    const server = uniq('unblock-mcp');
    const a = await setPolicyRule(cli, { server, tool: null, requiredApprovals: 'blocked' });
    const b = await setPolicyRule(cli, { server, tool: null, requiredApprovals: 'blocked' });
    const c = await setPolicyRule(cli, { server, tool: null, requiredApprovals: 1 });
    if (!a.ok || !b.ok || !c.ok) throw new Error('rules');
    expect([a.value.blocked, b.value.blocked, c.value.blocked]).toEqual([true, true, false]);
    const { db } = await import('@/lib/server/db/db');
    const audit = await db.auditEntry.findMany({
      where: { targetType: 'policy_rule', targetId: a.value.id },
      orderBy: { seq: 'asc' },
      select: { action: true, data: true },
    });
    expect(audit.map((e) => e.action)).toEqual(['policy.create', 'policy.change']);
    expect(audit[1].data).toMatchObject({ from: 'blocked', to: 1 });
  });
});
