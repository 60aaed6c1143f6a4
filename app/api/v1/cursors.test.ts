// The listings' cursors over HTTP (lib/pagination): a page's nextCursor leads to the next page
// with nothing repeated or skipped, and a cursor that is not one the API wrote (garbage, tampered,
// huge, another listing's) is a 422 naming `cursor`. In-process route handlers on a real database.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { api, call, expectOk, expectProblem } from '../../../testing/api-harness';
import { type Actors, fullRecord, makeActors } from '../../../testing/api-bodies';
import { uniq } from '@/testing/factories';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

// ["2026-03-01T12:00:00.000Z","0b7e4a1c-…"]: a well-formed outcome cursor, and ["expires", …] an approval one.
const PAIR = 'WyIyMDI2LTAzLTAxVDEyOjAwOjAwLjAwMFoiLCIwYjdlNGExYy0zZjJkLTRjNWItOWE4ZS0xZDJjM2I0YTVmNjAiXQ';
const EXPIRES =
  'WyJleHBpcmVzIiwiMjAyNi0wMy0wMVQxMjowMDowMC4wMDBaIiwiMGI3ZTRhMWMtM2YyZC00YzViLTlhOGUtMWQyYzNiNGE1ZjYwIl0';
const BAD = ['%%%', 'bm90IGpzb24', PAIR.slice(0, 10) + 'Q' + PAIR.slice(11), 'A'.repeat(400)];

let actors: Actors;
beforeAll(async () => {
  actors = await makeActors();
});

describe('GET /api/v1/outcomes', () => {
  it('pages through every record once, newest first', async () => {
    const requestRef = uniq('req');
    const records = Array.from({ length: 5 }, (_, i) => ({
      ...fullRecord(),
      requestRef,
      occurredAt: `2026-11-30T12:00:0${i % 3}Z`,
    }));
    expectOk(await call(api.postOutcomes, { token: actors.key, body: { records } }));
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 5; page++) {
      const r = await call(api.listOutcomes, {
        token: actors.key,
        query: { requestRef, limit: '2', ...(cursor ? { cursor } : {}) },
      });
      expectOk(r);
      seen.push(...r.json.items.map((i: { eventId: string }) => i.eventId));
      cursor = r.json.nextCursor ?? undefined;
      if (!cursor) break;
    }
    expect(cursor).toBeUndefined();
    expect([...seen].sort()).toEqual(records.map((r) => r.eventId).sort());
    expect(new Set(seen).size).toBe(5);
  });

  it('a cursor it did not write: 422 naming cursor', async () => {
    for (const cursor of [...BAD, EXPIRES])
      expectProblem(await call(api.listOutcomes, { token: actors.key, query: { cursor } }), [422], 'cursor');
  });

  it('a well-formed cursor pointing anywhere: a page', async () => {
    expectOk(await call(api.listOutcomes, { token: actors.key, query: { cursor: PAIR } }));
  });
});

describe('GET /api/v1/approvals', () => {
  it('a cursor it did not write: 422 naming cursor', async () => {
    for (const cursor of [...BAD, PAIR])
      expectProblem(await call(api.listApprovals, { token: actors.key, query: { cursor } }), [422], 'cursor');
  });

  it("another listing's cursor (soonest-to-expire, not newest): 422 naming cursor", async () => {
    expectProblem(await call(api.listApprovals, { token: actors.key, query: { cursor: EXPIRES } }), [422], 'cursor');
    expectOk(await call(api.listApprovals, { token: actors.key, query: { status: 'pending', cursor: EXPIRES } }));
  });
});
