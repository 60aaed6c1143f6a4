import { beforeAll, describe, expect, it } from 'vitest';
import { listPolicyRules } from '../policy/policy-rules';
import { trustServer } from '../policy/trusted-servers';
import { uniq } from '@/testing/factories';
import { listPolicyRulesToManage, requirementSchema } from './tools';
import {
  value,
  HOUR,
  ago,
  READ,
  SAFE_WRITE,
  admin,
  reviewer,
  support,
  setUpToolActors,
  record,
  serverOf,
  toolOf,
  requirement,
} from '@/testing/tools-fixtures';
import { cli } from '@/lib/auth/actor';

beforeAll(setUpToolActors);

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
