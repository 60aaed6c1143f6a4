import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensurePartitionsAhead, listOutcomePartitions } from './partitions';
import { ingestOutcomes } from '.';
import { db } from '../db/db';
import { uniq } from '@/testing/factories';
import { outcomeBatchSchema } from '@/lib/outcomes/schemas';
import {
  value,
  writer,
  setUpRetentionActors,
  resetRetention,
  ingest,
  record,
  countOf,
} from '@/testing/retention-fixtures';
import { alternateReceipt, claimsOf, receivedAt, resetReceipt, where } from '@/testing/partitions-fixtures';

// outcome_records partitioned by received_at (migration 20261201160000_outcome_records_partitioned),
// against real PostgreSQL. Expected partition names and bounds are written out by hand. The retention
// purge over partitions: lib/server/retention/partitions.test.ts.

beforeAll(setUpRetentionActors);
afterEach(resetRetention);

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
});
