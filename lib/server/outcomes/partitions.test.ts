import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { ensurePartitionsAhead, listOutcomePartitions } from './partitions';
import { purgeExpiredOutcomes } from '../retention/retention';
import { cleanUpPurged } from '../retention/clean-up';
import { ingestOutcomes } from '.';
import { db } from '../db/db';
import { uniq } from '@/testing/factories';
import { outcomeBatchSchema } from '@/lib/outcomes/schemas';
import { config } from '@/lib/config';
import { setEnv } from '@/testing/env';
import {
  value,
  writer,
  setUpRetentionActors,
  resetRetention,
  ingest,
  record,
  countOf,
  ran,
  requestFor,
  grantFor,
} from '@/testing/retention-fixtures';

// outcome_records partitioned by received_at (migration 20261201160000_outcome_records_partitioned),
// against real PostgreSQL. Expected partition names and bounds are written out by hand.

beforeAll(setUpRetentionActors);
afterEach(resetRetention);

const where = async (requestRef: string) =>
  (
    await db.$queryRaw<{ part: string }[]>`
      SELECT DISTINCT tableoid::regclass::text AS part FROM outcome_records WHERE request_ref = ${requestRef} ORDER BY 1`
  ).map((r) => r.part);

/** The records of these references with whether their event-id claim names them. */
const claimsOf = (refs: string[]) =>
  db.$queryRaw<{ eventId: string; held: boolean }[]>`
    SELECT o.event_id AS "eventId", EXISTS (
      SELECT 1 FROM outcome_event_ids e WHERE e.api_key_id = o.api_key_id AND e.event_id = o.event_id
        AND e.record_id = o.id AND e.received_at = o.received_at) AS held
    FROM outcome_records o WHERE o.request_ref = ANY(${refs}::text[]) ORDER BY 1`;

const receivedAt = (requestRef: string, at: string) =>
  db.$executeRaw`UPDATE outcome_records SET received_at = ${at}::timestamptz WHERE request_ref = ${requestRef}`;

/** Until reset, rows default to received_at in `months` alternately, row by row (a batch can straddle). */
async function alternateReceipt(months: string[]) {
  await db.$executeRawUnsafe(`CREATE SEQUENCE IF NOT EXISTS test_receipt_seq`);
  await db.$executeRawUnsafe(`CREATE OR REPLACE FUNCTION test_receipt() RETURNS timestamptz LANGUAGE sql VOLATILE AS $$
    SELECT (ARRAY[${months.map((m) => `'${m}'::timestamptz`).join(', ')}])[1 + nextval('test_receipt_seq') % ${months.length}] $$`);
  await db.$executeRawUnsafe(`ALTER TABLE outcome_records ALTER COLUMN received_at SET DEFAULT test_receipt()`);
}
const resetReceipt = () =>
  db.$executeRawUnsafe(`ALTER TABLE outcome_records ALTER COLUMN received_at SET DEFAULT CURRENT_TIMESTAMP`);

describe('outcome_records partitions (real PostgreSQL)', () => {
  it('creates monthly partitions ahead across a month boundary, once, even with two callers at once', async () => {
    const created = await Promise.all([
      ensurePartitionsAhead({ now: new Date('2032-05-31T23:59:59Z'), unit: 'month' }),
      ensurePartitionsAhead({ now: new Date('2032-05-31T23:59:59Z'), unit: 'month' }),
    ]);
    // From the month of `now` to 93 days ahead (1 September 23:59:59): May to September.
    expect(created.flat().sort()).toEqual([
      'outcome_records_p20320501',
      'outcome_records_p20320601',
      'outcome_records_p20320701',
      'outcome_records_p20320801',
      'outcome_records_p20320901',
    ]);
    expect(await ensurePartitionsAhead({ now: new Date('2032-06-01T00:00:00Z'), unit: 'month' })).toEqual([]);
    expect(await ensurePartitionsAhead({ now: new Date('2032-07-01T00:00:00Z'), unit: 'month' })).toEqual([
      'outcome_records_p20321001',
    ]);
    const parts = await listOutcomePartitions();
    const bounds = Object.fromEntries(
      parts.map((p) => [p.name, [p.lower_bound?.toISOString() ?? null, p.upper_bound?.toISOString() ?? null]]),
    );
    expect(bounds.outcome_records_p20320501).toEqual(['2032-05-01T00:00:00.000Z', '2032-06-01T00:00:00.000Z']);
    expect(bounds.outcome_records_p20320601).toEqual(['2032-06-01T00:00:00.000Z', '2032-07-01T00:00:00.000Z']);
    expect(bounds.outcome_records_default).toEqual([null, null]);
    // Never overlapping; May to October 2032 contiguous.
    const ranged = parts.filter((p) => p.lower_bound);
    for (let i = 1; i < ranged.length; i++)
      expect(ranged[i].lower_bound!.getTime()).toBeGreaterThanOrEqual(ranged[i - 1].upper_bound!.getTime());
    const y2032 = ranged.filter((p) => p.name.startsWith('outcome_records_p2032'));
    expect(y2032.map((p) => p.name.slice(-4))).toEqual(['0501', '0601', '0701', '0801', '0901', '1001']);
    for (let i = 1; i < y2032.length; i++) expect(y2032[i].lower_bound).toEqual(y2032[i - 1].upper_bound);

    // A record at the last millisecond of May and the first of June land in their own months.
    const ref = uniq('edge');
    await ingest(ref, 2);
    await db.$executeRaw`UPDATE outcome_records SET received_at = CASE WHEN received_seq % 2 = 0
      THEN '2032-05-31T23:59:59.999Z'::timestamptz ELSE '2032-06-01T00:00:00Z'::timestamptz END WHERE request_ref = ${ref}`;
    expect(await where(ref)).toEqual(['outcome_records_p20320501', 'outcome_records_p20320601']);
    expect(await countOf(ref)).toBe(2);
  });

  it('keeps records outside every partition in the default one, and moves them when their partition is made', async () => {
    const ref = uniq('far');
    await ingest(ref, 3);
    await receivedAt(ref, '2031-02-10T12:00:00Z');
    expect(await where(ref)).toEqual(['outcome_records_default']);
    expect(await ensurePartitionsAhead({ now: new Date('2031-02-01T00:00:00Z'), unit: 'month' })).toContain(
      'outcome_records_p20310201',
    );
    expect(await where(ref)).toEqual(['outcome_records_p20310201']);
    expect(await countOf(ref)).toBe(3);
    // Their event-id claims followed them (moved by hand, then into the new partition).
    expect((await claimsOf([ref])).map((c) => c.held)).toEqual([true, true, true]);
  });

  it("frees a record's eventId once the record is gone: of two posts at once, one takes it", async () => {
    const ref = uniq('gone');
    const again = record(ref, { eventId: uniq('evt') });
    const first = value(await ingestOutcomes(writer, outcomeBatchSchema.parse({ records: [again] }))).records[0].id;
    // Deleted without its claim (as by hand): the claim is stale until the next post takes it.
    await db.$executeRaw`DELETE FROM outcome_records WHERE request_ref = ${ref}`;
    const stale = await db.outcomeEventId.findFirstOrThrow({ where: { eventId: again.eventId } });
    expect(stale.recordId).toBe(first);

    const posts = await Promise.all(
      [0, 1].map(() => ingestOutcomes(writer, outcomeBatchSchema.parse({ records: [again, record(ref)] }))),
    );
    expect(posts.map((p) => value(p).accepted).sort()).toEqual([1, 2]);
    const stored = await db.outcomeRecord.findMany({ where: { eventId: again.eventId }, select: { id: true } });
    expect(stored).toHaveLength(1);
    expect(stored[0].id).not.toBe(first);
    const claim = await db.outcomeEventId.findFirstOrThrow({ where: { eventId: again.eventId } });
    expect(claim.recordId).toBe(stored[0].id);
    expect(await countOf(ref)).toBe(3);
  });

  it('stores a batch straddling two partitions whole, or nothing of it in either', async () => {
    await ensurePartitionsAhead({ now: new Date('2029-01-15T00:00:00Z'), unit: 'month' });
    await alternateReceipt(['2029-01-31T23:00:00Z', '2029-02-01T01:00:00Z']);
    try {
      const ok = uniq('straddle');
      const stored = value(
        await ingestOutcomes(writer, outcomeBatchSchema.parse({ records: [record(ok), record(ok), record(ok)] })),
      );
      expect(stored.accepted).toBe(3);
      expect(await where(ok)).toEqual(['outcome_records_p20290101', 'outcome_records_p20290201']);

      // The third row breaks a rule after the first two went into both partitions: none stays.
      const bad = uniq('straddle-bad');
      await db.$executeRawUnsafe(
        `ALTER TABLE outcome_records ADD CONSTRAINT test_no_poison CHECK (principal <> 'poison') NOT VALID`,
      );
      const batch = outcomeBatchSchema.parse({
        records: [
          record(bad, { eventId: 'a1' }),
          record(bad, { eventId: 'a2' }),
          record(bad, { eventId: 'a3', principal: 'poison' }),
        ],
      });
      await expect(ingestOutcomes(writer, batch)).rejects.toThrow(/test_no_poison/);
      expect(await countOf(bad)).toBe(0);
    } finally {
      await db.$executeRawUnsafe(`ALTER TABLE outcome_records DROP CONSTRAINT IF EXISTS test_no_poison`);
      await resetReceipt();
    }
  });

  it('still deduplicates an eventId whose first copy is in another partition', async () => {
    await ensurePartitionsAhead({ now: new Date('2029-06-15T00:00:00Z'), unit: 'month' });
    const ref = uniq('dup');
    const first = record(ref, { eventId: uniq('evt') });
    await alternateReceipt(['2029-06-10T00:00:00Z']);
    let id: string;
    try {
      id = value(await ingestOutcomes(writer, outcomeBatchSchema.parse({ records: [first] }))).records[0].id;
      await alternateReceipt(['2029-07-10T00:00:00Z']);
      // Same content, received a month later: a duplicate, answered with the stored record.
      const again = value(await ingestOutcomes(writer, outcomeBatchSchema.parse({ records: [first, record(ref)] })));
      expect(again).toMatchObject({ accepted: 1, duplicates: 1 });
      expect(again.records[0].id).toBe(id);
      // Other content under the same eventId: refused, nothing stored.
      const clash = await ingestOutcomes(
        writer,
        outcomeBatchSchema.parse({ records: [{ ...first, principal: 'someone_else' }] }),
      );
      expect(clash.ok).toBe(false);
      // Two concurrent first posts of one eventId in different partitions store it once.
      const raced = record(ref, { eventId: uniq('race') });
      await Promise.all([
        ingestOutcomes(writer, outcomeBatchSchema.parse({ records: [raced, record(ref)] })),
        ingestOutcomes(writer, outcomeBatchSchema.parse({ records: [record(ref), raced] })),
      ]);
      const [{ n }] = await db.$queryRaw<{ n: number }[]>`
        SELECT count(*)::int AS n FROM outcome_records WHERE event_id = ${raced.eventId}`;
      expect(n).toBe(1);
    } finally {
      await resetReceipt();
    }
    expect(await where(ref)).toEqual(['outcome_records_p20290601', 'outcome_records_p20290701']);
    expect(await countOf(ref)).toBe(5);
  });

  it('drops whole partitions past the limit, deletes in batches in the boundary one, keeps exactly what it must', async () => {
    // Today (the database clock) is in the month the migration ran; 90 days back is the cutoff.
    const [{ now }] = await db.$queryRaw<{ now: Date }[]>`SELECT now() AS now`;
    const cutoff = new Date(now.getTime() - 90 * 86_400_000);
    const month = (d: Date, add: number) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + add, 1));
    const boundary = month(cutoff, 0);
    const at = (m: Date, day: number) => new Date(m.getTime() + (day - 1) * 86_400_000).toISOString();
    await ensurePartitionsAhead({ now: month(cutoff, -2), unit: 'month' });
    await ensurePartitionsAhead({ now: boundary, unit: 'month' });

    const refs = {
      untiedOld: uniq('untied-old'), // two months before the cutoff's month: dropped with its partition
      pending: uniq('pending'), // same partition, a pending approval: kept
      grant: uniq('grant'), // the month before, a live grant: kept (its partition holds nothing else)
      boundaryOld: uniq('boundary-old'), // the cutoff's month, before the cutoff: deleted by batch
      boundaryNew: uniq('boundary-new'), // the cutoff's month, after the cutoff: kept
    };
    await ingest(refs.untiedOld, 15);
    await ingest(refs.pending, 2);
    await ingest(refs.grant, 3);
    await ingest(refs.boundaryOld, 4);
    await ingest(refs.boundaryNew, 5);
    await receivedAt(refs.untiedOld, at(month(cutoff, -2), 10));
    await receivedAt(refs.pending, at(month(cutoff, -2), 20));
    await receivedAt(refs.grant, at(month(cutoff, -1), 5));
    await receivedAt(refs.boundaryOld, new Date(cutoff.getTime() - 3_600_000).toISOString());
    await receivedAt(refs.boundaryNew, new Date(cutoff.getTime() + 3_600_000).toISOString());
    await requestFor(refs.pending);
    await grantFor(refs.grant);
    const oldName = `outcome_records_p${month(cutoff, -2).toISOString().slice(0, 10).replaceAll('-', '')}`;
    const prevName = `outcome_records_p${month(cutoff, -1).toISOString().slice(0, 10).replaceAll('-', '')}`;
    expect(await where(refs.untiedOld)).toEqual([oldName]);
    const keptIds = (
      await db.outcomeRecord.findMany({
        where: { requestRef: { in: [refs.pending, refs.grant] } },
        select: { id: true },
      })
    )
      .map((r) => r.id)
      .sort();

    // Earlier tests' leftovers swept first, so the count below is this test's alone.
    await cleanUpPurged();
    const claimed = await claimsOf(Object.values(refs));
    const [reposted] = await claimsOf([refs.untiedOld]);

    const r = ran(await purgeExpiredOutcomes({ batchSize: 3 }));
    expect(r).toMatchObject({ partitionsDropped: 2, deleted: 15 + 4, kept: 5 });
    const claimsLeft = async () => {
      const [{ claims }] = await db.$queryRaw<{ claims: number }[]>`
        SELECT count(*)::int AS claims FROM outcome_event_ids
        WHERE event_id = ANY(${claimed.map((c) => c.eventId)}::text[])`;
      return claims;
    };
    // The boundary's batches took their records' claims with them; the dropped month's stay,
    // stale, until the clean-up: 15 of them, beside the kept records' 2 + 3 and boundaryNew's 5.
    expect(await claimsLeft()).toBe(15 + 2 + 3 + 5);
    // Stale, one is taken over by the next post of its event id: stored anew, not a duplicate;
    // the clean-up leaves that one alone.
    const again = value(
      await ingestOutcomes(
        writer,
        outcomeBatchSchema.parse({ records: [record(refs.untiedOld, { eventId: reposted.eventId })] }),
      ),
    );
    expect(again).toMatchObject({ accepted: 1, duplicates: 0 });
    // The two months were taken out, not yet dropped: their tables wait, outside outcome_records.
    const purgedTables = () =>
      db.$queryRaw<{ n: number }[]>`
        SELECT count(*)::int AS n FROM pg_class WHERE relkind = 'r' AND relname LIKE ${'outcome\\_records\\_purged\\_%'}`;
    expect(await purgedTables()).toEqual([{ n: 2 }]);
    expect(await cleanUpPurged({ batchSize: 4 })).toMatchObject({ ran: true, tablesDropped: 2, claimsSwept: 14 });
    expect(await purgedTables()).toEqual([{ n: 0 }]);
    expect(await cleanUpPurged()).toMatchObject({ ran: true, tablesDropped: 0, claimsSwept: 0 });
    // Those of the kept records remain, on their records, and the reposted one's on its new record.
    expect(await claimsLeft()).toBe(2 + 3 + 5 + 1);
    expect(await claimsOf([refs.untiedOld])).toEqual([{ eventId: reposted.eventId, held: true }]);
    await db.$executeRaw`DELETE FROM outcome_records WHERE request_ref = ${refs.untiedOld}`;
    expect(await claimsOf([refs.untiedOld, refs.boundaryOld])).toEqual([]);
    expect((await claimsOf([refs.pending, refs.grant, refs.boundaryNew])).every((c) => c.held)).toBe(true);
    const names = (await listOutcomePartitions()).map((p) => p.name);
    expect(names).not.toContain(oldName);
    expect(names).not.toContain(prevName);
    expect(await countOf(refs.untiedOld)).toBe(0);
    expect(await countOf(refs.boundaryOld)).toBe(0);
    expect(await countOf(refs.boundaryNew)).toBe(5);
    // The kept records, same ids and receipt, now in the default partition.
    const after = await db.outcomeRecord.findMany({
      where: { requestRef: { in: [refs.pending, refs.grant] } },
      select: { id: true },
    });
    expect(after.map((x) => x.id).sort()).toEqual(keptIds);
    expect(await where(refs.pending)).toEqual(['outcome_records_default']);
    expect(await where(refs.grant)).toEqual(['outcome_records_default']);
  });

  it('cleans up one run at a time, and a purge never waits for a clean-up', async () => {
    await cleanUpPurged();
    // A record moved below every range partition (into the default one), then deleted by hand:
    // its claim is stale, where the clean-up looks.
    const ref = uniq('swept');
    await ingest(ref, 1);
    await receivedAt(ref, '2001-01-01T00:00:00Z');
    const [{ eventId }] = await claimsOf([ref]);
    await db.$executeRaw`DELETE FROM outcome_records WHERE request_ref = ${ref}`;

    const blocker = new pg.Client({ connectionString: config().DATABASE_URL });
    await blocker.connect();
    let first!: ReturnType<typeof cleanUpPurged>;
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT 1 FROM outcome_event_ids WHERE event_id = $1 FOR UPDATE', [eventId]);
      first = cleanUpPurged();
      for (let waited = 0; ; waited += 20) {
        const { rows } = await blocker.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        if (rows[0].n >= 1) break;
        if (waited > 15_000) throw new Error('the clean-up never reached the locked claim');
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(await cleanUpPurged()).toEqual({ ran: false, reason: 'busy' });
      setEnv({ OUTCOME_RETENTION_DAYS: '90' });
      expect((await purgeExpiredOutcomes()).ran).toBe(true);
    } finally {
      await blocker.query('COMMIT');
      await blocker.end();
    }
    expect(await first).toMatchObject({ ran: true, claimsSwept: 1 });
    expect(await db.outcomeEventId.count({ where: { eventId } })).toBe(0);
  });
});
