import { beforeAll, describe, expect, it } from 'vitest';
import { findApprovalIdForGrant, getApproval, listApprovals, requestApproval, setPolicyRule } from './approvals';
import { redeemGrant } from './approvals/grants';
import {
  countRecentFindings,
  findingsByRecord,
  findOutcomeRequestRef,
  getIncident,
  listIncidentOutcomes,
  openIncident,
  resolveIncidentRef,
} from './incidents';
import { getOutcome, ingestOutcomes, listOutcomes } from './outcomes';
import { trustServer } from './policy/trusted-servers';
import { makeApiKey, uniq, value } from '../../testing/factories';
import { approvalRequestSchema } from '@/lib/approvals/schemas';
import { outcomeBatchSchema } from '@/lib/outcomes/schemas';
import type { Result } from '@/lib/result';
import { cli, type Actor } from '@/lib/auth/actor';

// The data layer itself, for every reader function an API key reaches (directly through a route,
// or as the reader the console's search and badges accept): an organization-limited key sees its
// own organization and nothing of another, answered exactly as for something that does not exist.
// The HTTP side of the same matrix is e2e/organization-isolation.spec.ts.

const SERVER = uniq('iso-mcp');
const WRITE = {
  name: 'refund_payment',
  annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
};
// What the approvals stage (a look-up's arguments) and their digest, which the records carry too:
// `sha256:` + sha256sum of {"order_id":"4411"}, written out by hand.
const ARGS = { order_id: '4411' };
const DIGEST = 'sha256:93f6a87ee5fd7511c59fd49b24a17e354e4ef073323317084287daebdf3801f6';
const OBSERVED = { sent: true, httpStatus: 200, result: { isError: false, outputValidation: 'valid' } };
const ORG = { a: uniq('org-a'), b: uniq('org-b') };
type Org = keyof typeof ORG;

const makeKey = (organization: string | undefined) =>
  makeApiKey(['outcomes:write', 'outcomes:read', 'approvals:request', 'grants:redeem'], organization);

type Seeded = {
  org: string;
  key: Actor;
  ref: string;
  recordId: string;
  eventId: string;
  idempotencyKey: string;
  approvalId: string;
  grantId: string;
  spareGrantId: string;
};
const seeded = {} as Record<Org, Seeded>;
let unlimited: Actor;

beforeAll(async () => {
  await trustServer(cli, SERVER);
  value(await setPolicyRule(cli, { server: SERVER, tool: 'get_order', requiredApprovals: 0 }));
  unlimited = await makeKey(undefined);
  for (const org of ['a', 'b'] as const) {
    const key = await makeKey(ORG[org]);
    const ref = uniq(`iso-ref-${org}`);
    const approval = async () =>
      value(
        await requestApproval(
          key,
          uniq('idem'),
          approvalRequestSchema.parse({
            requestRef: ref,
            organization: ORG[org],
            principal: `p-${org}`,
            server: SERVER,
            tool: { name: 'get_order', annotations: { readOnlyHint: true } },
            arguments: ARGS,
            argsDigest: DIGEST,
            summary: `approval of ${org}`,
          }),
        ),
      ).approval;
    const approved = await approval();
    const spare = await approval();
    const idempotencyKey = uniq(`idem-${org}`);
    const eventId = uniq(`evt-${org}`);
    // A completed destructive write carrying a grant that never covered it: a write_without_grant finding.
    const records = value(
      await ingestOutcomes(
        key,
        outcomeBatchSchema.parse({
          records: [
            {
              eventId,
              occurredAt: new Date().toISOString(),
              requestRef: ref,
              idempotencyKey,
              organization: ORG[org],
              principal: `p-${org}`,
              server: SERVER,
              tool: WRITE,
              argsDigest: DIGEST,
              grantId: approved.grant!.id,
              summary: `record of ${org}`,
              observed: OBSERVED,
            },
          ],
        }),
      ),
    ).records;
    seeded[org] = {
      org: ORG[org],
      key,
      ref,
      recordId: records[0].id,
      eventId,
      idempotencyKey,
      approvalId: approved.id,
      grantId: approved.grant!.id,
      spareGrantId: spare.grant!.id,
    };
  }
});

const A = () => seeded.a.key;

describe('organization isolation in the data layer', () => {
  it('the data is there: organization b (and an unlimited key) find all of it', async () => {
    const b = seeded.b;
    expect(value(await getOutcome(b.key, b.recordId)).organization).toBe(ORG.b);
    expect(value(await getApproval(unlimited, b.approvalId)).organization).toBe(ORG.b);
    for (const term of [b.ref, b.idempotencyKey, b.eventId, b.grantId, b.approvalId, b.spareGrantId]) {
      expect(await resolveIncidentRef(b.key, term)).toBe(b.ref);
    }
    expect(await findApprovalIdForGrant(b.key, b.grantId)).toBe(b.approvalId);
    expect((await findingsByRecord(b.key, [b.ref])).get(b.recordId)).toContain('write_without_grant');
    expect(await countRecentFindings(b.key, [b.ref])).toEqual({ findings: 1, incidents: 1 });
  });

  // [what, a's own data, b's data, nothing at all]: b's answer must equal "nothing"'s, a's must not.
  const matrix: [string, (s: Seeded) => Promise<unknown>, (none: string) => Promise<unknown>][] = [
    ['getOutcome', (s) => getOutcome(A(), s.recordId), () => getOutcome(A(), crypto.randomUUID())],
    [
      'listOutcomes by requestRef',
      async (s) => value(await listOutcomes(A(), { requestRef: s.ref })).items.length,
      async (n) => value(await listOutcomes(A(), { requestRef: n })).items.length,
    ],
    [
      'listOutcomes by idempotencyKey',
      async (s) => value(await listOutcomes(A(), { idempotencyKey: s.idempotencyKey })).items.length,
      async (n) => value(await listOutcomes(A(), { idempotencyKey: n })).items.length,
    ],
    [
      'listOutcomes by grantId',
      async (s) => value(await listOutcomes(A(), { grantId: s.grantId })).items.length,
      async (n) => value(await listOutcomes(A(), { grantId: n })).items.length,
    ],
    [
      'listOutcomes by organization',
      async (s) => value(await listOutcomes(A(), { organization: s.org })).items.length,
      async (n) => value(await listOutcomes(A(), { organization: n })).items.length,
    ],
    [
      'listIncidentOutcomes',
      async (s) => value(await listIncidentOutcomes(A(), s.ref)).length,
      async (n) => value(await listIncidentOutcomes(A(), n)).length,
    ],
    [
      'findOutcomeRequestRef by eventId',
      (s) => findOutcomeRequestRef(A(), s.eventId),
      (n) => findOutcomeRequestRef(A(), n),
    ],
    [
      'getIncident',
      async (s) => stripRef(await getIncident(A(), s.ref), s.ref),
      async (n) => stripRef(await getIncident(A(), n), n),
    ],
    [
      'openIncident (markdown)',
      async (s) => stripRef(await openIncident(A(), s.ref, 'markdown'), s.ref),
      async (n) => stripRef(await openIncident(A(), n, 'markdown'), n),
    ],
    ...(['ref', 'idempotencyKey', 'eventId', 'grantId', 'approvalId', 'spareGrantId'] as const).map(
      (field): [string, (s: Seeded) => Promise<unknown>, (n: string) => Promise<unknown>] => [
        `resolveIncidentRef by ${field}`,
        (s) => resolveIncidentRef(A(), s[field]),
        (n) => resolveIncidentRef(A(), n),
      ],
    ),
    [
      'findingsByRecord',
      async (s) => [...(await findingsByRecord(A(), [s.ref])).keys()].length,
      async (n) => [...(await findingsByRecord(A(), [n])).keys()].length,
    ],
    ['countRecentFindings', (s) => countRecentFindings(A(), [s.ref]), (n) => countRecentFindings(A(), [n])],
    ['getApproval', (s) => getApproval(A(), s.approvalId), () => getApproval(A(), crypto.randomUUID())],
    [
      'listApprovals by requestRef',
      async (s) => value(await listApprovals(A(), { requestRef: s.ref })).items.length,
      async (n) => value(await listApprovals(A(), { requestRef: n })).items.length,
    ],
    [
      'findApprovalIdForGrant',
      (s) => findApprovalIdForGrant(A(), s.grantId),
      () => findApprovalIdForGrant(A(), crypto.randomUUID()),
    ],
    // The wrong tool: never redeems, and tells b's grant from none only for a's own.
    [
      'redeemGrant (another tool)',
      (s) => redeemGrant(A(), s.spareGrantId, { server: SERVER, tool: 'other', argsDigest: DIGEST }),
      () => redeemGrant(A(), crypto.randomUUID(), { server: SERVER, tool: 'other', argsDigest: DIGEST }),
    ],
  ];

  for (const [what, probe, nothing] of matrix) {
    it(what, async () => {
      const none = uniq('iso-none');
      const own = await probe(seeded.a);
      const other = await probe(seeded.b);
      const absent = await nothing(none);
      expect(JSON.stringify(other)).toBe(JSON.stringify(absent));
      expect(JSON.stringify(own)).not.toBe(JSON.stringify(absent)); // the probe does find a's own
      for (const secret of [ORG.b, 'of b', seeded.b.recordId, seeded.b.approvalId, seeded.b.grantId])
        expect(JSON.stringify(other)).not.toContain(secret);
    });
  }

  it('writes for organization b are refused and store nothing', async () => {
    const b = seeded.b;
    const record = {
      eventId: uniq('evt'),
      occurredAt: new Date().toISOString(),
      requestRef: b.ref,
      organization: ORG.b,
      principal: 'p',
      server: SERVER,
      tool: WRITE,
      observed: OBSERVED,
    };
    expect(await ingestOutcomes(A(), outcomeBatchSchema.parse({ records: [record] }))).toMatchObject({
      ok: false,
      failure: 'forbidden',
    });
    const body = approvalRequestSchema.parse({
      requestRef: b.ref,
      organization: ORG.b,
      principal: 'p',
      server: SERVER,
      tool: WRITE,
      arguments: ARGS,
      argsDigest: DIGEST,
      summary: 's',
    });
    expect(await requestApproval(A(), uniq('idem'), body)).toMatchObject({ ok: false, failure: 'forbidden' });
    expect(value(await listOutcomes(b.key, { requestRef: b.ref })).items).toHaveLength(1);
    expect(value(await listApprovals(b.key, { requestRef: b.ref })).items).toHaveLength(2);
    // b's grant, with everything right, is not a's to redeem; b still can.
    const redeem = { server: SERVER, tool: 'get_order', argsDigest: DIGEST };
    expect(await redeemGrant(A(), b.spareGrantId, redeem)).toMatchObject({ ok: false, failure: 'not_found' });
    expect(value(await redeemGrant(b.key, b.spareGrantId, redeem))).toMatchObject({ grantId: b.spareGrantId });
  });
});

// An incident's 404 names the reference asked for: compare the answers with that name taken out.
const stripRef = (r: Result<unknown>, ref: string) => JSON.parse(JSON.stringify(r).replaceAll(ref, '<ref>')) as unknown;
