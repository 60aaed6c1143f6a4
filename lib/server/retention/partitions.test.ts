import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { purgeExpiredOutcomes } from './retention';
import { cleanUpPurged } from './clean-up';
import { ensurePartitionsAhead, listOutcomePartitions } from '../outcomes/partitions';
import { ingestOutcomes } from '../outcomes';
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
import { claimsOf, receivedAt, where } from '@/testing/partitions-fixtures';

// The retention purge over outcome_records' partitions (whole months taken out, batches in the
// boundary month) and the clean-up after it, against real PostgreSQL.

beforeAll(setUpRetentionActors);
afterEach(resetRetention);

describe('the purge and the clean-up over partitions (real PostgreSQL)', () => {
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

    // Whatever an earlier purge left swept first, so the count below is this test's alone.
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
