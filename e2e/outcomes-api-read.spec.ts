// The outcome records API through the real server (docs/api.md, "Outcome records"): listing and reading.
import { type APIRequestContext } from '@playwright/test';
import { checkedContext, expect, test } from '../testing/api-contract';
import { expectProblem } from '../testing/e2e';
import {
  writeKey,
  readKey,
  orgKey,
  supportToken,
  ORG,
  setUpOutcomesApi,
  bearer,
  uniq,
  record,
  post,
} from '../testing/outcomes-api';

setUpOutcomesApi();

test.describe('GET /api/v1/outcomes', () => {
  const requestRef = uniq('req-list');
  let ids: string[] = [];

  test.beforeAll(async ({ playwright }, testInfo) => {
    const request = checkedContext(await playwright.request.newContext({ baseURL: testInfo.project.use.baseURL }));
    // Five records, two of them at the same instant: paging must neither repeat nor skip.
    const records = [
      record({ requestRef, occurredAt: '2026-11-30T10:00:00Z', summary: 'mail jane.doe@example.com about it' }),
      record({
        requestRef,
        occurredAt: '2026-11-30T11:00:00Z',
        observed: { sent: true, httpStatus: 403, authError: 'insufficient_scope' },
      }),
      record({ requestRef, occurredAt: '2026-11-30T12:00:00Z', tool: { name: 'get_order' }, server: 'orders-mcp' }),
      record({
        requestRef,
        occurredAt: '2026-11-30T12:00:00Z',
        observed: { sent: false, clientBlock: 'approval_required' },
      }),
      record({
        requestRef,
        occurredAt: '2026-11-30T13:00:00Z',
        sessionId: 'sess-e2e-secret-id',
        observed: { sent: true, clientError: 'timeout' },
      }),
    ];
    const body = await (await post(request, writeKey, { records })).json();
    ids = body.records.map((r: { id: string }) => r.id);
    await request.dispose();
  });

  const list = (request: APIRequestContext, secret: string, query: string) =>
    request.get(`/api/v1/outcomes?requestRef=${requestRef}${query}`, { headers: bearer(secret) });

  test('newest first, records with their classification and id, never hashes', async ({ request }) => {
    const res = await list(request, readKey, '');
    expect(res.status()).toBe(200);
    const body = await res.json();
    expect(Object.keys(body).sort()).toEqual(['items', 'nextCursor']);
    expect(body.nextCursor).toBeNull();
    expect(body.items).toHaveLength(5);
    expect(body.items[0].id).toBe(ids[4]);
    expect(body.items.at(-1).id).toBe(ids[0]);
    expect(body.items.at(-1)).toMatchObject({
      eventId: expect.any(String),
      occurredAt: '2026-11-30T10:00:00.000Z',
      requestRef,
      organization: 'acme',
      principal: 'user_193',
      server: 'billing-mcp',
      tool: { name: 'refund_payment', annotations: { readOnlyHint: false, destructiveHint: true } },
      argsDigest: `sha256:${'ab'.repeat(32)}`,
      summary: 'mail [masked:email] about it',
      observed: { sent: true, httpStatus: 200 },
      classification: { delivery: 'completed', category: 'ok' },
    });
    const text = JSON.stringify(body);
    expect(text).not.toMatch(/sess-e2e-secret-id|sessionId|sessionHash|contentHash|jane\.doe/);
  });

  test('filters', async ({ request }) => {
    const idsOf = async (query: string) =>
      ((await (await list(request, readKey, query)).json()).items as { id: string }[]).map((i) => i.id);
    expect(await idsOf('&delivery=rejected')).toEqual([ids[1]]);
    expect(await idsOf('&category=approval_required')).toEqual([ids[3]]);
    expect(await idsOf('&boundary=client')).toEqual([ids[4], ids[3]]);
    expect(await idsOf('&retry=after_approval')).toEqual([ids[3], ids[1]]);
    expect(await idsOf('&tool=get_order')).toEqual([ids[2]]);
    expect(await idsOf('&server=orders-mcp')).toEqual([ids[2]]);
    expect(await idsOf('&from=2026-11-30T11:00:00Z&to=2026-11-30T13:00:00%2B01:00')).toEqual([ids[1]]);
    expect(await idsOf('&from=2026-11-30T12:00:00Z')).toHaveLength(3);
    expect(await idsOf('&organization=globex')).toEqual([]);
  });

  test('cursor pagination visits every record once', async ({ request }) => {
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const res = await list(request, readKey, `&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status()).toBe(200);
      const body = await res.json();
      expect(body.items.length).toBeLessThanOrEqual(2);
      seen.push(...body.items.map((i: { id: string }) => i.id));
      cursor = body.nextCursor;
      if (!cursor) break;
    }
    expect(seen).toHaveLength(5);
    expect(new Set(seen)).toEqual(new Set(ids));
    expect(seen[0]).toBe(ids[4]);
  });

  test('bad query parameters: 422 naming each', async ({ request }) => {
    const paths = async (query: string) =>
      (await expectProblem(await list(request, readKey, query), 422, 'invalid_input')).errors.map(
        (e: { path: string }) => e.path,
      );
    expect(await paths('&delivery=lost')).toEqual(['delivery']);
    expect(await paths('&from=yesterday')).toEqual(['from']);
    expect(await paths('&limit=201')).toEqual(['limit']);
    expect(await paths('&cursor=forged')).toEqual(['cursor']);
    expect(await paths('&reqRef=x')).toEqual(['reqRef']);
    // A parameter named like an Object.prototype member is a parameter like any other.
    expect(await paths('&constructor=x&toString=y')).toEqual(['constructor', 'toString']);
  });

  test('people with a personal token may read; keys need outcomes:read; none: 401', async ({ request }) => {
    expect((await (await list(request, supportToken, '')).json()).items).toHaveLength(5);
    await expectProblem(await list(request, writeKey, ''), 403, 'forbidden');
    await expectProblem(await request.get('/api/v1/outcomes'), 401, 'unauthenticated');
  });

  test('an organization-limited key sees only its organization', async ({ request }) => {
    const own = record({ organization: ORG });
    const { records } = await (await post(request, orgKey, { records: [own] })).json();
    const mine = await (await request.get(`/api/v1/outcomes?limit=200`, { headers: bearer(orgKey) })).json();
    expect(mine.items.map((i: { id: string }) => i.id)).toContain(records[0].id);
    expect(mine.items.every((i: { organization: string }) => i.organization === ORG)).toBe(true);
    expect((await (await list(request, orgKey, '')).json()).items).toEqual([]);
    await expectProblem(await request.get(`/api/v1/outcomes/${ids[0]}`, { headers: bearer(orgKey) }), 404, 'not_found');
  });
});

test.describe('GET /api/v1/outcomes/{id}', () => {
  test('one record; unknown and malformed ids: 404', async ({ request }) => {
    const sent = record({ summary: 'ssn 123-45-6789 on file' });
    const { records } = await (await post(request, writeKey, { records: [sent] })).json();
    const res = await request.get(`/api/v1/outcomes/${records[0].id}`, { headers: bearer(readKey) });
    expect(res.status()).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({
      id: records[0].id,
      eventId: sent.eventId,
      requestRef: sent.requestRef,
      summary: 'ssn [masked:ssn] on file',
      classification: records[0].classification,
    });
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', `${records[0].id}0`, '%27%20OR%201%3D1']) {
      await expectProblem(await request.get(`/api/v1/outcomes/${id}`, { headers: bearer(readKey) }), 404, 'not_found');
    }
    await expectProblem(
      await request.get(`/api/v1/outcomes/${records[0].id}`, { headers: bearer(writeKey) }),
      403,
      'forbidden',
    );
  });
});
