import { beforeAll, describe, expect, it } from 'vitest';
import { getApproval, listApprovals, setPolicyRule } from '.';
import { redeemGrant } from './grants';
import { db } from '../db/db';
import { policyRuleSchema } from '@/lib/approvals/schemas';
import { makeUser, uniq } from '@/testing/factories';
import { ARGUMENTS, OTHER_ARGUMENTS, OTHER_ARGUMENTS_DIGEST, digestOfCanonical } from '@/testing/approvals-arguments';
import {
  NONE,
  ONE,
  TRUSTED,
  admin,
  approve,
  makeApproval,
  makeKey,
  redeemer,
  requester,
  reviewer,
  setUpApprovalActors,
  sql,
  value,
} from '@/testing/approvals-fixtures';
import type { Viewer } from '@/lib/auth/permissions';

// Who reads a request's arguments, and how a list shows them (docs/api.md "Approvals and grants").
let support: Viewer;
beforeAll(async () => {
  await setUpApprovalActors();
  support = await makeUser('support');
});

describe('who reads the arguments', () => {
  it('reviewers and admins of an open request; support staff and API keys get null and "reviewers only"', async () => {
    const { id } = await makeApproval(ONE);
    for (const who of [reviewer, admin])
      expect(value(await getApproval(who, id))).toMatchObject({ arguments: ARGUMENTS, argumentsNote: null });
    for (const who of [support, requester, redeemer])
      expect(value(await getApproval(who, id))).toMatchObject({
        arguments: null,
        argumentsNote: 'reviewers only',
        argumentsPreview: null,
        argumentsSent: true,
      });
  });

  it("another organization's API key cannot read the request at all", async () => {
    const globex = await makeKey(['approvals:request'], 'globex');
    const { id } = await makeApproval(ONE);
    expect(await getApproval(globex, id)).toMatchObject({ ok: false, failure: 'not_found' });
  });

  it('a decision answers its reviewer the new state with the arguments while the request stays open', async () => {
    const { id } = await makeApproval(ONE);
    const approved = value(await approve(reviewer, id, 1));
    expect(approved).toMatchObject({ status: 'approved', arguments: ARGUMENTS });
  });
});

describe('a box is bound to its row', () => {
  it('copied onto another request (past the triggers), it does not open: that request shows none', async () => {
    const a = await makeApproval(ONE);
    const b = await makeApproval(ONE);
    await sql(
      `SET session_replication_role = replica;
       UPDATE approval_requests SET arguments_sealed = (SELECT arguments_sealed FROM approval_requests WHERE id = '${a.id}')
       WHERE id = '${b.id}'`,
    );
    expect(value(await getApproval(reviewer, b.id))).toMatchObject({
      arguments: null,
      argumentsNote: 'cannot be opened on this server (sealed under another AUTH_SECRET, or altered)',
    });
    expect(value(await getApproval(reviewer, a.id)).arguments).toEqual(ARGUMENTS);
  });

  it('a preview the list kept is not answered once its box changed: the list opens the new one', async () => {
    const server = uniq('srv');
    await sql('INSERT INTO trusted_servers (name, trusted_by) VALUES ($1, $2)', [server, 'test']);
    const a = await makeApproval({ server });
    const b = await makeApproval({ server, arguments: OTHER_ARGUMENTS, argsDigest: OTHER_ARGUMENTS_DIGEST });
    const preview = async (id: string) =>
      value(await listApprovals(reviewer, { server, status: 'pending' })).items.find((i) => i.id === id)!;
    expect((await preview(b.id)).argumentsPreview).toContainEqual({ key: 'amount', value: '4000.00', type: 'string' });
    await sql(
      `SET session_replication_role = replica;
       UPDATE approval_requests SET arguments_sealed = (SELECT arguments_sealed FROM approval_requests WHERE id = '${a.id}')
       WHERE id = '${b.id}'`,
    );
    expect(await preview(b.id)).toMatchObject({
      argumentsPreview: null,
      argumentsNote: 'cannot be opened on this server (sealed under another AUTH_SECRET, or altered)',
    });
  });
});

describe('the list', () => {
  it('carries the preview, never the arguments: the fields named for the tool, else the first three scalars', async () => {
    const server = uniq('srv');
    await sql('INSERT INTO trusted_servers (name, trusted_by) VALUES ($1, $2)', [server, 'test']);
    const tool = { name: 'update_note', annotations: ONE.tool.annotations };
    value(
      await setPolicyRule(
        admin,
        policyRuleSchema.parse({ server, tool: 'update_note', requiredApprovals: 1, show: 'currency,amount' }),
      ),
    );
    const named = await makeApproval({ server, tool });
    const other = await makeApproval({ server, tool: { ...tool, name: 'add_note' } });
    const page = value(await listApprovals(reviewer, { server, status: 'pending' }));
    const byId = new Map(page.items.map((i) => [i.id, i]));
    expect(byId.get(named.id)).toMatchObject({
      arguments: null,
      argumentsNote: null,
      argumentsPreview: [
        { key: 'currency', value: 'EUR', type: 'string' },
        { key: 'amount', value: '40.00', type: 'string' },
      ],
    });
    expect(byId.get(other.id)!.argumentsPreview).toEqual([
      { key: 'order_id', value: '4411', type: 'string' },
      { key: 'amount', value: '40.00', type: 'string' },
      { key: 'currency', value: 'EUR', type: 'string' },
    ]);
    // A whole-server rule's fields, for a tool without its own.
    await sql(
      `INSERT INTO policy_rules (server, tool_name, required_approvals, created_by, show_fields)
       VALUES ($1, '*', 1, 'test', ARRAY['order_id'])`,
      [server],
    );
    const again = value(await listApprovals(reviewer, { server, status: 'pending' }));
    expect(again.items.find((i) => i.id === other.id)!.argumentsPreview).toEqual([
      { key: 'order_id', value: '4411', type: 'string' },
    ]);
    expect(again.items.find((i) => i.id === named.id)!.argumentsPreview).toHaveLength(2);
    // Support staff: no preview either.
    const theirs = value(await listApprovals(support, { server, status: 'pending' }));
    expect(theirs.items.map((i) => [i.argumentsPreview, i.argumentsNote])).toEqual([
      [null, 'reviewers only'],
      [null, 'reviewers only'],
    ]);
  });
});

describe('arguments appear nowhere else', () => {
  it('not in the audit log (the digest is) nor in webhook events, through request, approval and redemption', async () => {
    const args = { memo: 'QUOKKA-7731-ZEBRA', amount: '918273.64' };
    const argsDigest = digestOfCanonical('{"amount":"918273.64","memo":"QUOKKA-7731-ZEBRA"}');
    const created = await makeApproval({ ...NONE, arguments: args, argsDigest });
    value(await redeemGrant(redeemer, created.grant!.id, { server: TRUSTED, tool: 'get_order', argsDigest }));
    const audit = await db.auditEntry.findMany({ where: { targetId: created.id } });
    expect(audit.map((e) => e.action).sort()).toEqual(['approval.request', 'grant.issue', 'grant.redeem']);
    expect(audit.find((e) => e.action === 'approval.request')!.data).toMatchObject({ argsDigest, argumentsSent: true });
    const events = await sql('SELECT data::text AS data FROM webhook_events WHERE approval_id = $1', [created.id]);
    expect(events.rows.length).toBeGreaterThan(0);
    for (const text of [...audit.map((e) => JSON.stringify(e.data)), ...events.rows.map((r) => r.data as string)]) {
      expect(text).not.toContain('QUOKKA');
      expect(text).not.toContain('918273');
      expect(text).not.toContain('memo');
    }
  });
});
