import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { decideApproval } from '../approvals';
import { getIncident, openIncident, resolveIncidentRef } from '.';
import { uniq } from '@/testing/factories';
import { db } from '../db/db';
import {
  value,
  makeKey,
  reviewer,
  admin,
  support,
  setUpIncidentActors,
  record,
  stage,
  approvedAndRedeemed,
} from '@/testing/incidents-fixtures';
import type { Actor } from '@/lib/auth/actor';

beforeAll(setUpIncidentActors);

// ── search ──────────────────────────────────────────────────────────────────────────────────

describe('resolveIncidentRef: approvals too', () => {
  it('finds an incident by approval id, grant id, or the reference of an approvals-only incident', async () => {
    const ref = uniq('req');
    const created = await stage(ref);
    const decided = value(
      await decideApproval(reviewer, { id: created.id, decision: 'approve', reason: 'ok', version: 1 }),
    );
    expect(await resolveIncidentRef(support, created.id)).toBe(ref);
    expect(await resolveIncidentRef(support, created.id.toUpperCase())).toBe(ref);
    expect(await resolveIncidentRef(support, ` ${decided.grant!.id} `)).toBe(ref);
    expect(await resolveIncidentRef(support, ref)).toBe(ref);
    expect(await resolveIncidentRef(support, randomUUID())).toBeNull();
    expect(await resolveIncidentRef(support, 'no-such-thing')).toBeNull();
  });

  it('still prefers outcome records, and keeps organizations apart for keys', async () => {
    // The grant's approval is filed under one reference, the call that used it under another:
    // the record's reference wins, as before approvals were searched.
    const { approvalId, grantId } = await approvedAndRedeemed(uniq('req'));
    const usedUnder = uniq('req');
    await record(usedUnder, { grantId });
    expect(await resolveIncidentRef(support, grantId)).toBe(usedUnder);
    expect(await resolveIncidentRef(support, approvalId)).not.toBe(usedUnder);
    const created = await stage(uniq('req'));
    const globex = await makeKey(['outcomes:read'], 'globex');
    expect(await resolveIncidentRef(globex, created.id)).toBeNull();
  });
});

// ── the access log, written by every open ───────────────────────────────────────────────────

describe('openIncident writes one access-log row per view or export', () => {
  it('records the actor, how they came in, the reference and the format, found or not', async () => {
    const ref = uniq('req');
    await stage(ref);
    const apiKey = await makeKey(['outcomes:read']);
    const token: Actor = { ...support, kind: 'user', tokenId: randomUUID() };
    const session: Actor = { ...admin, kind: 'user', tokenId: null };

    value(await openIncident(support, ref, 'page'));
    value(await openIncident(apiKey, ref, 'json'));
    value(await openIncident(token, ref, 'markdown'));
    value(await openIncident(session, ref, 'json'));
    const missing = uniq('req');
    expect(await openIncident(support, missing, 'page')).toMatchObject({ ok: false, failure: 'not_found' });

    const rows = await db.incidentAccessLog.findMany({
      where: { requestRef: { in: [ref, missing] } },
      select: { actor: true, actorKind: true, requestRef: true, format: true },
    });
    expect(rows).toHaveLength(5);
    expect(rows).toEqual(
      expect.arrayContaining([
        { actor: support.email, actorKind: 'session', requestRef: ref, format: 'page' },
        {
          actor: `api_key:${(apiKey as { keyId: string }).keyId}`,
          actorKind: 'api_key',
          requestRef: ref,
          format: 'json',
        },
        { actor: support.email, actorKind: 'personal_token', requestRef: ref, format: 'markdown' },
        { actor: admin.email, actorKind: 'session', requestRef: ref, format: 'json' },
        { actor: support.email, actorKind: 'session', requestRef: missing, format: 'page' },
      ]),
    );
    // getIncident alone (analysis, tests) logs nothing.
    value(await getIncident(support, ref));
    expect(await db.incidentAccessLog.count({ where: { requestRef: ref } })).toBe(4);
  });
});
