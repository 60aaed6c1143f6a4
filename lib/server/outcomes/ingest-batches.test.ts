import { describe, expect, it } from 'vitest';
import { ingestOutcomes } from '.';
import { makeUser, uniq } from '@/testing/factories';
import { db, sessionClient } from '../db/db';
import { outcomeBatchSchema } from '@/lib/outcomes/schemas';
import { makeKey, makeRecord, batchOf, value, countFor, racing } from '@/testing/outcomes-fixtures';

// `count` records under one key straight into the table (what every writer's insert goes through).
const RAW_INSERT = `INSERT INTO outcome_records (api_key_id, event_id, occurred_at, request_ref, organization, principal,
    server, tool_name, observed, boundary, delivery, category, retry, read_only, what_happened, next_step,
    classifier_version, annotations_trusted, content_hash)
  SELECT $1::uuid, $2 || '-' || i, now(), $3, 'acme', 'user_1', 'billing-mcp', 'get_order', '{"sent":true}',
    'client', 'unknown', 'no_response', 'backoff', false, 'w', 'n', 2, false, md5(i::text)
  FROM generate_series(1, $4::int) AS i`;

describe('ingestOutcomes (real PostgreSQL)', () => {
  it('event ids are unique per API key, not across keys', async () => {
    const [a, b] = [await makeKey(), await makeKey()];
    const record = makeRecord();
    const [ra, rb] = [value(await ingestOutcomes(a, batchOf(record))), value(await ingestOutcomes(b, batchOf(record)))];
    expect(ra.accepted).toBe(1);
    expect(rb.accepted).toBe(1);
    expect(ra.records[0].id).not.toBe(rb.records[0].id);
  });

  it('repeats inside one batch: the same content is stored once, other content is 422', async () => {
    const key = await makeKey();
    const requestRef = uniq('req');
    const record = makeRecord({ requestRef });
    const res = value(await ingestOutcomes(key, batchOf(record, makeRecord({ requestRef }), { ...record })));
    expect(res).toMatchObject({ accepted: 2, duplicates: 1 });
    expect(res.records[2].id).toBe(res.records[0].id);
    expect(await countFor(requestRef)).toBe(2);

    const other = uniq('req');
    const clash = makeRecord({ requestRef: other });
    const refused = await ingestOutcomes(
      key,
      batchOf(clash, makeRecord({ requestRef: other }), { ...clash, attempt: 2 }),
    );
    expect(refused).toMatchObject({
      ok: false,
      failure: 'idempotency_key_reused',
      errors: [{ path: 'records.2.eventId' }],
    });
    expect(await countFor(other)).toBe(0);
  });

  it('a lone record (stored without a transaction): replay, clash and a race each behave like a batch', async () => {
    const key = await makeKey();
    const requestRef = uniq('req');
    const record = makeRecord({ requestRef, summary: 'Refund 12.00 EUR' });
    const first = value(await ingestOutcomes(key, batchOf(record)));
    expect(first).toMatchObject({ accepted: 1, duplicates: 0 });
    expect(value(await ingestOutcomes(key, batchOf(record)))).toEqual({ ...first, accepted: 0, duplicates: 1 });
    const clash = await ingestOutcomes(key, batchOf({ ...record, summary: 'Refund 120.00 EUR' }));
    expect(clash).toMatchObject({
      ok: false,
      failure: 'idempotency_key_reused',
      errors: [{ path: 'records.0.eventId' }],
    });
    expect((await db.outcomeRecord.findFirstOrThrow({ where: { requestRef } })).summary).toBe('Refund 12.00 EUR');

    const raced = makeRecord({ requestRef });
    const results = (
      await racing(10, () => Promise.all(Array.from({ length: 10 }, () => ingestOutcomes(key, batchOf(raced)))))
    ).map(value);
    expect(results.reduce((sum, r) => sum + r.accepted, 0)).toBe(1);
    expect(new Set(results.map((r) => r.records[0].id)).size).toBe(1);
    expect(await countFor(requestRef)).toBe(2);
  });

  it('a batch with one invalid record writes nothing', async () => {
    const key = await makeKey();
    const requestRef = uniq('req');
    const good = () => makeRecord({ requestRef });
    // Refused at the door, naming the field.
    const parsed = outcomeBatchSchema.safeParse({ records: [good(), { ...good(), occurredAt: 'yesterday' }, good()] });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => i.path.join('.'))).toEqual(['records.1.occurredAt']);
    // And should one get past the schema, the database refuses the whole batch.
    const smuggled = { records: [good(), good(), { ...good(), occurredAt: '0000-01-01T00:00:00Z' }] };
    await expect(ingestOutcomes(key, smuggled)).rejects.toThrow();
    expect(await countFor(requestRef)).toBe(0);
  });

  it('10 concurrent identical batches store each record exactly once', async () => {
    const key = await makeKey();
    const requestRef = uniq('req');
    const batch = batchOf(...Array.from({ length: 50 }, () => makeRecord({ requestRef })));
    const results = (
      await racing(10, () => Promise.all(Array.from({ length: 10 }, () => ingestOutcomes(key, batch))))
    ).map(value);
    expect(await countFor(requestRef)).toBe(50);
    expect(results.reduce((sum, r) => sum + r.accepted, 0)).toBe(50);
    for (const r of results) {
      expect(r.accepted + r.duplicates).toBe(50);
      expect(r.records.map((x) => x.id)).toEqual(results[0].records.map((x) => x.id));
    }
  });

  it('concurrent batches sharing records in opposite orders neither deadlock nor double-store', async () => {
    const key = await makeKey();
    const requestRef = uniq('req');
    const records = Array.from({ length: 200 }, () => makeRecord({ requestRef }));
    const forward = batchOf(...records);
    const backward = batchOf(...[...records].reverse());
    const results = await racing(6, () =>
      Promise.all(Array.from({ length: 6 }, (_, i) => ingestOutcomes(key, i % 2 ? backward : forward))),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    expect(await countFor(requestRef)).toBe(200);
  });

  it('receipt order follows the batch, whatever the event ids', async () => {
    const key = await makeKey();
    const requestRef = uniq('req');
    const batch = batchOf(
      ...['evt-c', 'evt-a', 'evt-b'].map((id) => makeRecord({ requestRef, eventId: `${id}-${requestRef}` })),
    );
    value(await ingestOutcomes(key, batch));
    const rows = await db.outcomeRecord.findMany({
      where: { requestRef },
      orderBy: { receivedSeq: 'asc' },
      select: { eventId: true },
    });
    expect(rows.map((r) => r.eventId)).toEqual(batch.records.map((r) => r.eventId));
  });

  it('accepts a 1000-record batch', async () => {
    const key = await makeKey();
    const requestRef = uniq('req');
    const batch = batchOf(
      ...Array.from({ length: 1000 }, (_, i) =>
        makeRecord({
          requestRef,
          summary: `Refund ${i}.00 EUR on order ${4000 + i} for jane${i}@example.com`,
          sessionId: uniq('s'),
          tool: { name: 'refund_payment', annotations: { readOnlyHint: false, destructiveHint: true } },
        }),
      ),
    );
    const started = Date.now();
    const res = value(await ingestOutcomes(key, batch));
    expect(res).toMatchObject({ accepted: 1000, duplicates: 0 });
    expect(res.records).toHaveLength(1000);
    expect(await countFor(requestRef)).toBe(1000);
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  // One (api_key_id, event_id) across partitions is a claim in outcome_event_ids (migration
  // 20261201192841): an insert waits only for a concurrent insert of the same pair, never for the
  // key's other transactions (a lock per key made one key's batches commit one at a time), and
  // takes no advisory lock (a lock per record exhausts the shared lock table).
  it("one key's transactions wait for each other only over the same event id", async () => {
    const key = await makeKey();
    const requestRef = uniq('req');
    const [first, second] = [sessionClient(), sessionClient()];
    await Promise.all([first.connect(), second.connect()]);
    try {
      await first.query('BEGIN');
      await first.query(RAW_INSERT, [key.keyId, `${requestRef}-a`, requestRef, 500]);
      const [{ n: advisory }] = (
        await first.query(
          `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()`,
        )
      ).rows;
      expect(advisory).toBe(0);

      // Other event ids of the same key: stored at once, while the first transaction is open.
      await second.query(`SET lock_timeout = '2s'`);
      await second.query('BEGIN');
      expect((await second.query(RAW_INSERT, [key.keyId, `${requestRef}-b`, requestRef, 500])).rowCount).toBe(500);
      await second.query('COMMIT');

      // An event id the open transaction is storing: waits for it (here, until the timeout).
      await second.query(`SET lock_timeout = '300ms'`);
      await expect(second.query(RAW_INSERT, [key.keyId, `${requestRef}-a`, requestRef, 1])).rejects.toMatchObject({
        code: '55P03',
      });
      await first.query('COMMIT');
      // Committed: the same pair again is skipped, as ON CONFLICT DO NOTHING would.
      expect((await second.query(RAW_INSERT, [key.keyId, `${requestRef}-a`, requestRef, 1])).rowCount).toBe(0);
    } finally {
      await Promise.all([first.end(), second.end()]);
    }
    expect(await countFor(requestRef)).toBe(1000);
  });

  it('refuses people and keys without outcomes:write', async () => {
    const batch = batchOf(makeRecord());
    const admin = await makeUser('admin');
    expect(await ingestOutcomes({ ...admin, kind: 'user', tokenId: null }, batch)).toMatchObject({
      ok: false,
      failure: 'forbidden',
    });
    expect(await ingestOutcomes(await makeKey(['outcomes:read']), batch)).toMatchObject({
      ok: false,
      failure: 'forbidden',
    });
  });
});
