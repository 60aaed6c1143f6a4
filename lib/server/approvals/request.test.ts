import { beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { deletePolicyRule, getApproval, listPolicyRules, requestApproval, setPolicyRule } from '.';
import { trustServer } from '../policy/trusted-servers';
import { uniq } from '@/testing/factories';
import { db } from '../db/db';
import {
  TRUSTED,
  UNTRUSTED,
  makeKey,
  requester,
  admin,
  reviewer,
  setUpApprovalActors,
  ONE,
  TWO,
  NONE,
  bodyOf,
  value,
  makeApproval,
  approve,
  failures,
  sql,
} from '@/testing/approvals-fixtures';
import { OTHER_ARGUMENTS, OTHER_ARGUMENTS_DIGEST } from '@/testing/approvals-arguments';
import { cli } from '@/lib/auth/actor';
import { config } from '@/lib/config';

beforeAll(setUpApprovalActors);

describe('requestApproval', () => {
  it('answers 201-shaped { id, status, requiredApprovals, expiresAt, version } and stores free text masked', async () => {
    const body = bodyOf({
      summary: 'Refund for jane.doe@example.com, card 4111 1111 1111 1111',
      resource: { type: 'customer', id: 'jane.doe@example.com' },
    });
    const { approval, replayed } = value(await requestApproval(requester, uniq('idem'), body));
    expect(replayed).toBe(false);
    expect(approval).toMatchObject({ status: 'pending', requiredApprovals: 1, version: 1, grant: null });
    const view = value(await getApproval(admin, approval.id));
    expect(view.summary).toBe('Refund for [masked:email], card [masked:card_number]');
    expect(view.resource).toEqual({ type: 'customer', id: '[masked:email]' });
    const dump = (await sql('SELECT row_to_json(a)::text AS row FROM approval_requests a WHERE id = $1', [approval.id]))
      .rows[0].row as string;
    expect(dump).not.toMatch(/jane\.doe|4111/);
    // Expiry: the default pending TTL from the database's clock.
    const ttl = approval.expiresAt.getTime() - view.createdAt.getTime();
    expect(ttl).toBe(3600_000);
  });

  it('needs the scope, an Idempotency-Key and, for an organization key, its own organization', async () => {
    const outcomesKey = await makeKey(['outcomes:write']);
    expect(await requestApproval(outcomesKey, uniq('idem'), bodyOf())).toMatchObject({
      ok: false,
      failure: 'forbidden',
    });
    expect(await requestApproval(requester, null, bodyOf())).toMatchObject({
      ok: false,
      failure: 'idempotency_key_required',
    });
    expect(await requestApproval(requester, '  ', bodyOf())).toMatchObject({
      ok: false,
      failure: 'idempotency_key_required',
    });
    const orgKey = await makeKey(['approvals:request'], 'globex');
    expect(await requestApproval(orgKey, uniq('idem'), bodyOf({ organization: 'acme' }))).toMatchObject({
      ok: false,
      failure: 'forbidden',
      errors: [{ path: 'organization' }],
    });
    const own = value(await requestApproval(orgKey, uniq('idem'), bodyOf({ organization: 'globex' }))).approval;
    // An organization key reads only its own organization's requests.
    const orgReader = await makeKey(['grants:redeem'], 'acme');
    expect(await getApproval(orgReader, own.id)).toMatchObject({ ok: false, failure: 'not_found' });
    expect(value(await getApproval(orgKey, own.id)).organization).toBe('globex');
  });

  it('is idempotent per key: same body → the original answer, other body → idempotency_key_reused', async () => {
    const key = uniq('idem');
    const body = bodyOf();
    const first = value(await requestApproval(requester, key, body));
    // The state moves on; the replay still answers what the first request was answered.
    value(await approve(reviewer, first.approval.id, 1));
    const again = value(await requestApproval(requester, key, bodyOf({ ...body, agent: body.agent })));
    expect(again).toEqual({ replayed: true, approval: first.approval });
    const otherArguments = { ...body, arguments: OTHER_ARGUMENTS, argsDigest: OTHER_ARGUMENTS_DIGEST };
    expect(await requestApproval(requester, key, otherArguments)).toMatchObject({
      ok: false,
      failure: 'idempotency_key_reused',
    });
    // Another key may use the same Idempotency-Key for its own request.
    const other = await makeKey(['approvals:request']);
    expect(value(await requestApproval(other, key, body)).approval.id).not.toBe(first.approval.id);
    expect(await db.approvalRequest.count({ where: { idempotencyKey: key } })).toBe(2);
  });

  it('answers conflict while the first request with the key is still being stored after a wait, and the original once it is', async () => {
    const key = uniq('idem');
    const body = bodyOf();
    // Another session stands in for the first request, mid-transaction, holding the key's lock.
    const inFlight = new pg.Client({ connectionString: config().DATABASE_URL });
    await inFlight.connect();
    try {
      await inFlight.query('SELECT pg_advisory_lock($1::int, hashtext($2))', [
        0x61707072,
        `${(requester as { keyId: string }).keyId}\n${key}`,
      ]);
      const started = Date.now();
      const busy = await requestApproval(requester, key, body);
      expect(busy).toMatchObject({ ok: false, failure: 'conflict' });
      // It waited for the first (IN_FLIGHT_WAIT_MS) before giving up.
      expect(Date.now() - started).toBeGreaterThanOrEqual(4_900);
      expect(!busy.ok && busy.detail).toMatch(/still being processed/);
    } finally {
      await inFlight.end();
    }
    const first = value(await requestApproval(requester, key, body));
    expect(value(await requestApproval(requester, key, body))).toEqual({ ...first, replayed: true });
  });

  it('creates one request when the same key and body arrive concurrently; the others replay it', async () => {
    const key = uniq('idem');
    const body = bodyOf();
    const results = await Promise.all(Array.from({ length: 12 }, () => requestApproval(requester, key, body)));
    expect(
      await db.approvalRequest.count({
        where: { requestedByKeyId: (requester as { keyId: string }).keyId, idempotencyKey: key },
      }),
    ).toBe(1);
    const oks = results.flatMap((r) => (r.ok ? [r.value] : []));
    expect(oks.length).toBeGreaterThanOrEqual(1);
    expect(new Set(oks.map((o) => o.approval.id)).size).toBe(1);
    expect(oks.filter((o) => !o.replayed)).toHaveLength(1);
    // They wait for the first rather than hear it is in flight.
    expect(failures(results)).toEqual([]);
  });
});

describe('policy', () => {
  it('auto-approves a trusted read-only tool and issues its grant at once (audited)', async () => {
    const created = await makeApproval({ ...NONE, grantTtlSeconds: 120 });
    expect(created).toMatchObject({ status: 'approved', requiredApprovals: 0, grant: { id: expect.any(String) } });
    const view = value(await getApproval(admin, created.id));
    expect(view.grant).toMatchObject({ id: created.grant!.id, state: 'active', redeemedAt: null, revokedAt: null });
    expect(view.grant!.expiresAt.getTime() - view.grant!.issuedAt.getTime()).toBe(120_000);
    const actions = (await db.auditEntry.findMany({ where: { targetId: created.id }, orderBy: { seq: 'asc' } })).map(
      (e) => e.action,
    );
    expect(actions).toEqual(['approval.request', 'grant.issue']);
  });

  it('needs two for destructive + open-world, and two whatever an untrusted server claims', async () => {
    expect((await makeApproval(TWO)).requiredApprovals).toBe(2);
    expect((await makeApproval({ ...NONE, server: UNTRUSTED })).requiredApprovals).toBe(2);
    expect((await makeApproval({ ...ONE, server: UNTRUSTED })).requiredApprovals).toBe(2);
    expect((await makeApproval({ server: TRUSTED, tool: { name: 'no_hints' } })).requiredApprovals).toBe(2);
  });

  it("follows an admin's rule: for the tool first, then for the whole server", async () => {
    const server = uniq('srv');
    await trustServer(cli, server);
    expect(await setPolicyRule(reviewer, { server, tool: null, requiredApprovals: 2 })).toMatchObject({
      ok: false,
      failure: 'forbidden',
    });
    const wholeServer = value(await setPolicyRule(admin, { server, tool: null, requiredApprovals: 2 }));
    expect(wholeServer).toMatchObject({ server, tool: null, requiredApprovals: 2, createdBy: admin.email });
    expect((await makeApproval({ ...NONE, server })).requiredApprovals).toBe(2);
    const toolRule = value(await setPolicyRule(admin, { server, tool: 'get_order', requiredApprovals: 1 }));
    expect((await makeApproval({ ...NONE, server })).requiredApprovals).toBe(1);
    // Setting the same rule again changes nothing; changing it is one audited change.
    expect(value(await setPolicyRule(admin, { server, tool: 'get_order', requiredApprovals: 1 })).id).toBe(toolRule.id);
    value(await setPolicyRule(admin, { server, tool: 'get_order', requiredApprovals: 0 }));
    expect((await makeApproval({ ...TWO, tool: { ...TWO.tool, name: 'get_order' }, server })).requiredApprovals).toBe(
      0,
    );
    const rules = value(await listPolicyRules(reviewer)).filter((r) => r.server === server);
    expect(rules.map((r) => [r.tool, r.requiredApprovals])).toEqual([
      [null, 2],
      ['get_order', 0],
    ]);
    value(await deletePolicyRule(admin, toolRule.id));
    expect(await deletePolicyRule(admin, toolRule.id)).toMatchObject({ ok: false, failure: 'not_found' });
    expect((await makeApproval({ ...NONE, server })).requiredApprovals).toBe(2);
    const actions = (
      await db.auditEntry.findMany({
        where: { targetType: 'policy_rule', targetId: { in: [toolRule.id, wholeServer.id] } },
        orderBy: { seq: 'asc' },
      })
    ).map((e) => e.action);
    expect(actions).toEqual(['policy.create', 'policy.create', 'policy.change', 'policy.delete']);
  });

  it('keeps one whole-server rule per server even when set concurrently', async () => {
    const server = uniq('srv');
    const results = await Promise.all(
      [0, 1, 2, 1, 2, 0].map((n) => setPolicyRule(cli, { server, tool: null, requiredApprovals: n })),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    expect(await db.policyRule.count({ where: { server } })).toBe(1);
  });
});
