// Faults on a real PostgreSQL (docs/api.md, "Errors": nothing partially written), from the client's side:
// the same batch from two clients at once, and clients that disconnect while sending or before the
// answer. The cluster and console are set up in testing/faults.ts.
import http from 'node:http';
import { expect, test } from '@playwright/test';
import {
  app,
  sql,
  key,
  setUpFaultsConsole,
  sleep,
  type Batch,
  batch,
  type Ingested,
  post,
  storedPerBatch,
  expectWholeBatches,
  expectAnswerMatchesStore,
  expectNoUnexpectedErrors,
} from '../testing/faults';

test.describe.configure({ mode: 'serial' });

setUpFaultsConsole();

test('the same batch from two clients at once, again and again: stored once, both answered 200 with the same ids', async () => {
  test.setTimeout(60_000);
  const batches: Batch[] = [];
  for (let i = 0; i < 25; i++) {
    const b = batch(10);
    batches.push(b);
    // Every other time the second client sends the same records in the opposite order.
    const [x, y] = await Promise.all([post(b.records), post(i % 2 ? [...b.records].reverse() : b.records)]);
    expect([x.status, y.status], `${x.text}\n${y.text}`).toEqual([200, 200]);
    const [ax, ay] = [JSON.parse(x.text) as Ingested, JSON.parse(y.text) as Ingested];
    expect(ax.accepted + ay.accepted).toBe(10);
    expect(ax.duplicates + ay.duplicates).toBe(10);
    const fromY = new Map(ay.records.map((r) => [r.eventId, r]));
    for (const r of ax.records) expect(fromY.get(r.eventId)).toEqual(r);
    await expectAnswerMatchesStore(b, ax);
  }
  await expectWholeBatches(batches);
  expectNoUnexpectedErrors();
});

test('a client that disconnects while sending the body: nothing stored; its retry stores each record once', async () => {
  const b = batch(20);
  const body = Buffer.from(JSON.stringify({ records: b.records }));
  const outcome = await new Promise<string>((resolve) => {
    const req = http.request(`${app!.origin}/api/v1/outcomes`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'content-length': String(body.length),
      },
    });
    req.on('response', (res) => {
      res.resume();
      resolve(`answered ${res.statusCode} before the body was complete`);
    });
    req.on('error', () => resolve('aborted'));
    req.write(body.subarray(0, Math.floor(body.length / 2)));
    setTimeout(() => {
      req.destroy();
      resolve('aborted');
    }, 300);
  });
  expect(outcome).toBe('aborted');
  await sleep(500); // time to store something, were the server to do so
  expect((await storedPerBatch([b])).get(b.requestRef)).toBeUndefined();

  const retry = await post(b.records);
  expect(retry.status, retry.text).toBe(200);
  expect(JSON.parse(retry.text)).toMatchObject({ accepted: 20, duplicates: 0 });
  await expectWholeBatches([b]);
  expectNoUnexpectedErrors();
});

test('a client that disconnects after sending, before the answer: the batch is stored whole or not at all; its retry counts the duplicates', async () => {
  const b = batch(20);
  // Hold inserts back so that the request is certainly still running when the client leaves.
  const lock = await sql!.connect();
  try {
    await lock.query('BEGIN');
    await lock.query('LOCK TABLE outcome_records IN EXCLUSIVE MODE');
    const controller = new AbortController();
    const pending = post(b.records, controller.signal);
    await expect
      .poll(
        async () =>
          // The insert waiting for the table (by its lock: pg_stat_activity's text of a long
          // statement is cut at track_activity_query_size, before its INSERT).
          (
            await sql!.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_locks
       WHERE NOT granted AND relation = 'outcome_records'::regclass
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
            )
          ).rows[0].n,
        { timeout: 10_000 },
      )
      .toBe(1);
    controller.abort();
    expect((await pending).status).toBe(0);
    await lock.query('COMMIT');
  } finally {
    lock.release();
  }
  // Let the server finish what it started without the client.
  await expect
    .poll(
      async () =>
        (
          await sql!.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND datname = current_database() AND state <> 'idle'`,
          )
        ).rows[0].n,
      { timeout: 10_000 },
    )
    .toBe(0);
  const before = (await storedPerBatch([b])).get(b.requestRef)?.rows ?? 0;
  expect([0, 20]).toContain(before);

  const retry = await post(b.records);
  expect(retry.status, retry.text).toBe(200);
  const answer = JSON.parse(retry.text) as Ingested;
  expect(answer).toMatchObject({ accepted: 20 - before, duplicates: before });
  await expectAnswerMatchesStore(b, answer);
  await expectWholeBatches([b]);
  expectNoUnexpectedErrors();
});
