// The incidents search and start page lists, against real PostgreSQL (its own database per file).
import { beforeAll, describe, expect, it } from 'vitest';
import { listFlaggedIncidents, listRecentIncidents, matchIncidents, searchIncidents } from '.';
import { makeKey, record, setUpIncidentActors, stage, support } from '@/testing/incidents-fixtures';
import { uniq } from '@/testing/factories';

beforeAll(setUpIncidentActors);

const refsOf = async (term: string) => (await searchIncidents(support, term)).map((m) => m.requestRef).sort();

describe('searchIncidents', () => {
  it('lists every incident that shares an idempotency key, and says what matched', async () => {
    const key = uniq('refund-key');
    const refs = ['req_share_a', 'req_share_b', 'req_share_c'].map((r) => `${r}_${key}`);
    for (const r of refs) await record(r, { idempotencyKey: key });
    await record(`req_other_${key}`, { idempotencyKey: `${key}-other` });
    expect(await refsOf(key)).toEqual(refs);
    const first = (await searchIncidents(support, key))[0];
    expect(first.matchedBy).toEqual(['idempotency key']);
    expect(first.summary).toMatchObject({ records: 1, principal: 'user_193' });
  });

  it('an exact reference is one match; part of one lists every reference containing it', async () => {
    const tag = uniq('zq').replace(/[^a-z0-9]/gi, '');
    await record(`req_part_${tag}_1`);
    await record(`req_part_${tag}_2`);
    await stage(`req_part_${tag}_3`); // approval requests only
    expect(await refsOf(`req_part_${tag}_1`)).toEqual([`req_part_${tag}_1`]);
    expect(await refsOf(tag.toUpperCase())).toEqual([`req_part_${tag}_1`, `req_part_${tag}_2`, `req_part_${tag}_3`]);
    const approvalsOnly = (await searchIncidents(support, `req_part_${tag}_3`))[0];
    expect(approvalsOnly).toEqual({ requestRef: `req_part_${tag}_3`, matchedBy: ['request reference'], summary: null });
  });

  it('finds an approval by its id, never matches too-short parts, and finds nothing for the unknown', async () => {
    const ref = uniq('req_appr');
    const created = await stage(ref);
    expect(await refsOf(created.id)).toEqual([ref]);
    expect(await refsOf('re')).toEqual([]);
    expect(await refsOf(uniq('nothing-like-this'))).toEqual([]);
  });

  it('finds an event id under every key that sent it (ids are unique per key), within the organization', async () => {
    const evt = uniq('evt_shared');
    const other = await makeKey(['outcomes:write']);
    const acme = [`req_evt_a_${evt}`, `req_evt_b_${evt}`];
    await record(acme[0], { eventId: evt });
    await record(acme[1], { eventId: evt }, other);
    await record(`req_evt_globex_${evt}`, { eventId: evt, organization: 'globex' }, await makeKey(['outcomes:write']));
    await record(`req_evt_near_${evt}`, { eventId: `${evt}x` });
    const found = await searchIncidents(support, evt);
    expect(found.map((m) => m.requestRef).sort()).toEqual([...acme, `req_evt_globex_${evt}`].sort());
    expect(new Set(found.flatMap((m) => m.matchedBy))).toEqual(new Set(['event id']));
    const globex = await makeKey(['outcomes:read'], 'globex');
    expect((await searchIncidents(globex, evt)).map((m) => m.requestRef)).toEqual([`req_evt_globex_${evt}`]);
  });

  it('matchIncidents says what matched without reading the incidents; searchIncidents adds their summaries', async () => {
    const key = uniq('hit-key');
    await record(`req_hit_${key}`, { idempotencyKey: key });
    expect(await matchIncidents(support, key)).toEqual([
      { requestRef: `req_hit_${key}`, matchedBy: ['idempotency key'] },
    ]);
    expect((await searchIncidents(support, key))[0].summary).toMatchObject({
      records: 1,
      requestRef: `req_hit_${key}`,
    });
  });

  it('an organization-limited key finds only its own organization', async () => {
    const key = uniq('org-key');
    await record(`req_acme_${key}`, { idempotencyKey: key });
    await record(`req_globex_${key}`, { idempotencyKey: key, organization: 'globex' });
    const globex = await makeKey(['outcomes:read'], 'globex');
    expect((await searchIncidents(globex, key)).map((m) => m.requestRef)).toEqual([`req_globex_${key}`]);
  });
});

describe('the start page lists', () => {
  it('recent incidents are the latest active references, newest first', async () => {
    const a = uniq('req_recent_a');
    const b = uniq('req_recent_b');
    await record(a, { occurredAt: new Date(Date.now() + 60_000).toISOString() });
    await record(b, { occurredAt: new Date(Date.now() + 120_000).toISOString() });
    expect((await listRecentIncidents(support, 2)).map((s) => s.requestRef)).toEqual([b, a]);
  });

  it('flagged incidents are the ones with findings', async () => {
    const clean = uniq('req_clean');
    const flagged = uniq('req_flagged');
    await record(clean, { tool: { name: 'get_note', annotations: { readOnlyHint: true } } }); // a trusted read
    // Retrying the non-retryable: the same validation failure, unchanged, twice.
    const invalid = { sent: true, httpStatus: 200, result: { isError: true, errorCategory: 'VALIDATION_ERROR' } };
    await record(flagged, { observed: invalid });
    await record(flagged, { observed: invalid });
    const list = await listFlaggedIncidents(support, [clean, flagged]);
    expect(list.map((s) => [s.requestRef, s.kinds])).toEqual([[flagged, ['retried_non_retryable']]]);
  });
});
