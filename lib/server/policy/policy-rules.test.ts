// The fields a tool's queue row shows (docs/design.md "What a reviewer sees: what will run"), as
// `policy:set --show` and the Policy page write them through setPolicyRule.
import { beforeAll, describe, expect, it } from 'vitest';
import { db } from '../db/db';
import { deletePolicyRule, setPolicyRule } from './policy-rules';
import { makeUser, uniq, value } from '@/testing/factories';
import type { Viewer } from '@/lib/auth/permissions';

let admin: Viewer;
let reviewer: Viewer;
beforeAll(async () => {
  [admin, reviewer] = await Promise.all([makeUser('admin'), makeUser('reviewer')]);
});

const stored = (id: string) =>
  db.$queryRaw<{ show_fields: string[] | null }[]>`SELECT show_fields FROM policy_rules WHERE id = ${id}::uuid`;
const auditOf = (id: string) =>
  db.auditEntry.findMany({
    where: { targetType: 'policy_rule', targetId: id },
    orderBy: { seq: 'asc' },
    select: { action: true, data: true },
  });

describe('setPolicyRule: the fields shown in the queue', () => {
  it('names them with a new rule, changes them alone, keeps them when not given, clears them to NULL', async () => {
    const server = uniq('show');
    const tool = 'refund_payment';
    const created = value(
      await setPolicyRule(admin, { server, tool, requiredApprovals: 1, show: ['amount', 'order.currency'] }),
    );
    expect(created).toMatchObject({ requiredApprovals: 1, showFields: ['amount', 'order.currency'] });
    expect(await stored(created.id)).toEqual([{ show_fields: ['amount', 'order.currency'] }]);

    // Only the fields, on the rule that exists: the requirement stays.
    const changed = value(await setPolicyRule(admin, { server, tool, show: ['order_id', 'amount'] }));
    expect(changed).toMatchObject({ id: created.id, requiredApprovals: 1, blocked: false });
    expect(changed.showFields).toEqual(['order_id', 'amount']);
    // The requirement alone (as the Tools page sets it): the fields stay.
    const stricter = value(await setPolicyRule(admin, { server, tool, requiredApprovals: 2 }));
    expect(stricter).toMatchObject({ requiredApprovals: 2, showFields: ['order_id', 'amount'] });
    // The same again changes nothing, and is not audited.
    value(await setPolicyRule(admin, { server, tool, requiredApprovals: 2, show: ['order_id', 'amount'] }));
    const cleared = value(await setPolicyRule(admin, { server, tool, show: [] }));
    expect(cleared.showFields).toBeNull();
    expect(await stored(created.id)).toEqual([{ show_fields: null }]);

    expect(await auditOf(created.id)).toEqual([
      {
        action: 'policy.create',
        data: { server, tool, requiredApprovals: 1, showFields: ['amount', 'order.currency'] },
      },
      {
        action: 'policy.change',
        data: { server, tool, showFields: { from: ['amount', 'order.currency'], to: ['order_id', 'amount'] } },
      },
      { action: 'policy.change', data: { server, tool, from: 1, to: 2 } },
      { action: 'policy.change', data: { server, tool, showFields: { from: ['order_id', 'amount'], to: null } } },
    ]);
  });

  it('refuses fields for a whole server, fields alone where no rule exists, and people who are not admins', async () => {
    const server = uniq('show-bad');
    expect(await setPolicyRule(admin, { server, tool: null, requiredApprovals: 1, show: ['amount'] })).toMatchObject({
      ok: false,
      failure: 'invalid_input',
      errors: [{ path: 'show', message: 'needs a tool: the fields shown are named for one tool' }],
    });
    expect(await setPolicyRule(admin, { server, tool: 'refund_payment', show: ['amount'] })).toMatchObject({
      ok: false,
      failure: 'not_found',
      detail: `No rule for refund_payment on ${server} yet: say the approvals it needs too.`,
    });
    expect(
      await setPolicyRule(reviewer, { server, tool: 'refund_payment', requiredApprovals: 1, show: ['amount'] }),
    ).toMatchObject({ ok: false, failure: 'forbidden' });
    expect(await db.policyRule.count({ where: { server } })).toBe(0);
    // Clearing the fields of a whole-server rule is no error: it names none.
    expect(value(await setPolicyRule(admin, { server, tool: null, requiredApprovals: 0, show: [] })).showFields).toBe(
      null,
    );
  });

  it('says which fields a deleted rule showed, in its audit entry', async () => {
    const server = uniq('show-del');
    const rule = value(await setPolicyRule(admin, { server, tool: 'add_note', requiredApprovals: 1, show: ['note'] }));
    value(await deletePolicyRule(admin, rule.id));
    expect((await auditOf(rule.id)).at(-1)).toEqual({
      action: 'policy.delete',
      data: { server, tool: 'add_note', requiredApprovals: 1, showFields: ['note'] },
    });
  });
});
