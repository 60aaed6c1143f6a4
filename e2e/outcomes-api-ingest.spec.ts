// The outcome records API through the real server (docs/api.md, "Outcome records"): ingesting.
import { expect, test } from '../testing/api-contract';
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
  CLASSIFICATION_KEYS,
} from '../testing/outcomes-api';

setUpOutcomesApi();

test.describe('POST /api/v1/outcomes', () => {
  test('stores a batch and answers { accepted, duplicates, records } with classifications', async ({ request }) => {
    const requestRef = uniq('req');
    const records = [
      record({ requestRef }),
      record({
        requestRef,
        observed: { sent: true, httpStatus: 200, result: { isError: true, errorCategory: 'INVALID_INPUT' } },
      }),
      record({ requestRef, observed: { sent: true, clientError: 'timeout' } }),
    ];
    const res = await post(request, writeKey, { records });
    expect(res.status()).toBe(200);
    const body = await res.json();
    expect(Object.keys(body).sort()).toEqual(['accepted', 'duplicates', 'records']);
    expect(body).toMatchObject({ accepted: 3, duplicates: 0 });
    expect(body.records.map((r: { eventId: string }) => r.eventId)).toEqual(records.map((r) => r.eventId));
    for (const r of body.records) {
      expect(Object.keys(r).sort()).toEqual(['classification', 'eventId', 'id']);
      expect(Object.keys(r.classification).sort()).toEqual(CLASSIFICATION_KEYS);
    }
    expect(body.records[0].classification).toMatchObject({
      boundary: 'none',
      delivery: 'completed',
      category: 'ok',
      retry: 'no',
      readOnly: false,
    });
    expect(body.records[1].classification).toMatchObject({
      boundary: 'tool',
      delivery: 'rejected',
      category: 'validation',
      retry: 'after_correction',
    });
    expect(body.records[2].classification).toMatchObject({
      boundary: 'client',
      delivery: 'unknown',
      category: 'timeout',
      retry: 'after_state_check',
    });
  });

  test('a replay is a duplicate with the same answer; other content under the same eventId is 422', async ({
    request,
  }) => {
    const first = record();
    const original = await (await post(request, writeKey, { records: [first] })).json();
    const replay = await post(request, writeKey, { records: [first] });
    expect(replay.status()).toBe(200);
    expect(await replay.json()).toEqual({ ...original, accepted: 0, duplicates: 1 });

    const fresh = record();
    const changed = await post(request, writeKey, { records: [fresh, { ...first, summary: 'Refund 400.00 EUR' }] });
    const problem = await expectProblem(changed, 422, 'idempotency_key_reused');
    expect(problem.errors).toEqual([{ path: 'records.1.eventId', message: expect.any(String) }]);
    // Nothing of that batch was stored: the fresh record is accepted when sent alone.
    expect(await (await post(request, writeKey, { records: [fresh] })).json()).toMatchObject({
      accepted: 1,
      duplicates: 0,
    });
  });

  test('no credential: 401', async ({ request }) => {
    const res = await request.post('/api/v1/outcomes', { data: { records: [record()] } });
    await expectProblem(res, 401, 'unauthenticated');
  });

  test('a key without outcomes:write, or a person: 403', async ({ request }) => {
    await expectProblem(await post(request, readKey, { records: [record()] }), 403, 'forbidden');
    await expectProblem(await post(request, supportToken, { records: [record()] }), 403, 'forbidden');
  });

  test('an organization-limited key: 403 naming the record of another organization, nothing stored', async ({
    request,
  }) => {
    const requestRef = uniq('req');
    const res = await post(request, orgKey, {
      records: [record({ requestRef, organization: ORG }), record({ requestRef, organization: 'acme' })],
    });
    const problem = await expectProblem(res, 403, 'forbidden');
    expect(problem.errors).toEqual([{ path: 'records.1.organization', message: expect.any(String) }]);
    const listed = await (
      await request.get(`/api/v1/outcomes?requestRef=${requestRef}`, { headers: bearer(readKey) })
    ).json();
    expect(listed.items).toEqual([]);
  });

  test('malformed JSON: 400', async ({ request }) => {
    const res = await request.post('/api/v1/outcomes', {
      headers: { ...bearer(writeKey), 'content-type': 'application/json' },
      data: Buffer.from('{"records": ['),
    });
    await expectProblem(res, 400, 'invalid_input');
  });

  test('a body over 1 MiB: 413', async ({ request }) => {
    const big = JSON.stringify({ records: [record({ summary: 'x'.repeat(1024 * 1024 + 10) })] });
    const res = await request.post('/api/v1/outcomes', {
      headers: { ...bearer(writeKey), 'content-type': 'application/json' },
      data: big,
    });
    await expectProblem(res, 413, 'payload_too_large');
  });

  test('schema violations: 422 naming each field path, nothing stored', async ({ request }) => {
    const requestRef = uniq('req');
    const { eventId: _dropped, ...noEventId } = record({ requestRef });
    const res = await post(request, writeKey, {
      records: [
        record({ requestRef, occurredAt: '30/11/2026' }),
        record({ requestRef }),
        noEventId,
        record({ requestRef, observed: { sent: true, httpStatus: 999 } }),
      ],
    });
    const problem = await expectProblem(res, 422, 'invalid_input');
    const paths = problem.errors.map((e: { path: string }) => e.path);
    expect(paths).toEqual(
      expect.arrayContaining(['records.0.occurredAt', 'records.2.eventId', 'records.3.observed.httpStatus']),
    );
    expect(paths.every((p: string) => !p.startsWith('records.1'))).toBe(true);
    const listed = await (
      await request.get(`/api/v1/outcomes?requestRef=${requestRef}`, { headers: bearer(readKey) })
    ).json();
    expect(listed.items).toEqual([]);
  });

  test('0 or 1001 records: 422; 1000 is accepted', async ({ request }) => {
    const none = await expectProblem(await post(request, writeKey, { records: [] }), 422, 'invalid_input');
    expect(none.errors[0].path).toBe('records');
    const requestRef = uniq('req');
    const many = (n: number) =>
      Array.from({ length: n }, () => record({ requestRef, summary: null, argsDigest: null }));
    const tooMany = await expectProblem(await post(request, writeKey, { records: many(1001) }), 422, 'invalid_input');
    expect(tooMany.errors[0].path).toBe('records');
    const res = await post(request, writeKey, { records: many(1000) });
    expect(res.status()).toBe(200);
    expect(await res.json()).toMatchObject({ accepted: 1000, duplicates: 0 });
  });
});
