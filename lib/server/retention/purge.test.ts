import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { purgeExpiredOutcomes, type PurgeReport } from './retention';
import { decideApproval, revokeApproval } from '../approvals';
import { redeemGrant } from '../approvals/grants';
import { verifyAuditChain } from '../audit/audit';
import { uniq } from '@/testing/factories';
import { db } from '../db/db';
import { RETENTION_ENV } from '@/lib/outcomes/retention';
import { config } from '@/lib/config';
import { setEnv } from '@/testing/env';
import {
  TRUSTED,
  DAY_MS,
  ARGS_DIGEST,
  value,
  redeemer,
  reviewer,
  admin,
  setUpRetentionActors,
  resetRetention,
  ingest,
  receivedDaysAgo,
  oldRecords,
  countOf,
  ran,
  purgeEntries,
  requestFor,
  grantFor,
} from '@/testing/retention-fixtures';

beforeAll(setUpRetentionActors);
afterEach(resetRetention);

describe('purgeExpiredOutcomes (real PostgreSQL)', () => {
  it("deletes a purged record's state check with it, and keeps a kept record's", async () => {
    const old = await oldRecords(1);
    const recent = uniq('recent');
    await ingest(recent, 1);
    const ids = await Promise.all(
      [old, recent].map(async (requestRef) => (await db.outcomeRecord.findFirstOrThrow({ where: { requestRef } })).id),
    );
    for (const recordId of ids)
      await db.outcomeStateCheck.create({
        data: { recordId, organization: 'acme', verdict: 'happened', note: 'checked', actor: 'test', who: 'Test' },
      });
    ran(await purgeExpiredOutcomes({ actor: 'test' }));
    const left = await db.outcomeStateCheck.findMany({ where: { recordId: { in: ids } }, select: { recordId: true } });
    expect(left.map((c) => c.recordId)).toEqual([ids[1]]);
  });

  it('deletes records received before the cutoff, keeps recent ones, and judges by receipt, not occurredAt', async () => {
    const old = await oldRecords(5);
    const edge = uniq('edge');
    await ingest(edge, 2);
    await receivedDaysAgo(edge, 89);
    // Occurred long ago by the caller's clock, but received now: kept for the whole period.
    const backfilled = uniq('backfill');
    await ingest(backfilled, 3, { occurredAt: '2020-01-01T00:00:00Z' });

    const r = ran(await purgeExpiredOutcomes({ actor: 'test' }));
    expect(r).toMatchObject({ retentionDays: 90, deleted: 5, kept: 0, batches: 1 });
    const [{ now }] = await db.$queryRaw<{ now: Date }[]>`SELECT now() AS now`;
    expect(Math.abs(now.getTime() - 90 * DAY_MS - r.cutoff.getTime())).toBeLessThan(5_000);
    expect([await countOf(old), await countOf(edge), await countOf(backfilled)]).toEqual([0, 2, 3]);

    // Once past the period they go too.
    await receivedDaysAgo(edge, 90);
    await receivedDaysAgo(backfilled, 120);
    expect(ran(await purgeExpiredOutcomes())).toMatchObject({ deleted: 5, kept: 0 });
    expect([await countOf(edge), await countOf(backfilled)]).toEqual([0, 0]);
  });

  it('honours OUTCOME_RETENTION_DAYS, refuses a bad value naming the variable, and does nothing when off', async () => {
    const ref = uniq('ret');
    await ingest(ref, 4);
    await receivedDaysAgo(ref, 8);

    setEnv({ [RETENTION_ENV]: 'off' });
    expect(await purgeExpiredOutcomes()).toEqual({ ran: false, reason: 'off' });
    setEnv({ [RETENTION_ENV]: '10' });
    expect(ran(await purgeExpiredOutcomes())).toMatchObject({ retentionDays: 10, deleted: 0 });
    expect(await countOf(ref)).toBe(4);

    for (const bad of ['0', '-5', '7.5', 'ninety', '90d', '36501']) {
      setEnv({ [RETENTION_ENV]: bad });
      await expect(purgeExpiredOutcomes(), bad).rejects.toThrow(
        /^OUTCOME_RETENTION_DAYS must be a whole number of days/,
      );
    }
    expect(await countOf(ref)).toBe(4);

    setEnv({ [RETENTION_ENV]: '7' });
    expect(ran(await purgeExpiredOutcomes())).toMatchObject({ retentionDays: 7, deleted: 4 });
    expect(await countOf(ref)).toBe(0);
  });

  it('keeps records tied to a pending approval or a live grant, and purges them once it is settled', async () => {
    const pendingRef = await oldRecords(3);
    const pending = await requestFor(pendingRef);
    expect(pending.status).toBe('pending');
    const revokedRef = await oldRecords(2);
    const revoked = await requestFor(revokedRef);
    const expiringRef = await oldRecords(2);
    await requestFor(expiringRef, { pendingTtlSeconds: 60 });
    const grantRef = await oldRecords(2);
    const grant = await grantFor(grantRef);
    // Another request reference, but naming the live grant.
    const namingGrant = await oldRecords(1, { grantId: grant.id });
    const deniedRef = await oldRecords(4);
    const denied = await requestFor(deniedRef);
    value(
      await decideApproval(reviewer, {
        id: denied.id,
        decision: 'deny',
        reason: 'not this one',
        version: denied.version,
      }),
    );
    value(await revokeApproval(admin, { id: revoked.id, reason: 'withdrawn' }));
    const plain = await oldRecords(3);

    const first = ran(await purgeExpiredOutcomes());
    expect(first).toMatchObject({ deleted: 4 + 2 + 3, kept: 3 + 2 + 2 + 1 });
    expect(
      await Promise.all([pendingRef, expiringRef, grantRef, namingGrant, deniedRef, revokedRef, plain].map(countOf)),
    ).toEqual([3, 2, 2, 1, 0, 0, 0]);

    // Two minutes on, the 60-second request has expired (read by the clock, no sweep needed).
    const later = new Date(Date.now() + 120_000);
    expect(ran(await purgeExpiredOutcomes({ now: later }))).toMatchObject({ deleted: 2, kept: 3 + 2 + 1 });
    expect(await countOf(expiringRef)).toBe(0);

    // Decided, and redeemed: nothing is in play any more.
    value(await decideApproval(reviewer, { id: pending.id, decision: 'deny', reason: 'no', version: pending.version }));
    value(await redeemGrant(redeemer, grant.id, { server: TRUSTED, tool: 'get_order', argsDigest: ARGS_DIGEST }));
    expect(ran(await purgeExpiredOutcomes())).toMatchObject({ deleted: 3 + 2 + 1, kept: 0 });
    expect(await Promise.all([pendingRef, grantRef, namingGrant].map(countOf))).toEqual([0, 0, 0]);
  });

  it('works in batches: 10 old records with a batch size of 3 take 4 batches, one audit entry', async () => {
    const before = (await purgeEntries()).length;
    const ref = await oldRecords(10);
    const r = ran(await purgeExpiredOutcomes({ batchSize: 3, actor: 'test' }));
    expect(r).toMatchObject({ deleted: 10, batches: 4 });
    expect(await countOf(ref)).toBe(0);

    // A multiple of the batch size: the last statement finds nothing, and is no batch.
    const nine = await oldRecords(9);
    expect(ran(await purgeExpiredOutcomes({ batchSize: 3 }))).toMatchObject({ deleted: 9, batches: 3 });
    expect(await countOf(nine)).toBe(0);
    expect((await purgeEntries()).length).toBe(before + 2);

    await expect(purgeExpiredOutcomes({ batchSize: 0 })).rejects.toThrow(/batchSize/);
  });

  it('audits each run that deletes something, with its counts, and the chain verifies', async () => {
    const before = await purgeEntries();
    const kept = await oldRecords(2);
    const approval = await requestFor(kept);
    await oldRecords(7);
    const r = ran(await purgeExpiredOutcomes({ batchSize: 5, actor: 'test' }));
    expect(r).toMatchObject({ deleted: 7, kept: 2, batches: 2 });

    // Nothing left to delete: no entry.
    expect(ran(await purgeExpiredOutcomes())).toMatchObject({ deleted: 0, kept: 2, batches: 0 });
    const entries = await purgeEntries();
    expect(entries.length).toBe(before.length + 1);
    const entry = entries.at(-1)!;
    expect(entry).toMatchObject({
      actor: 'test',
      action: 'outcomes.purge',
      targetType: 'outcome_records',
      targetId: 'retention',
    });
    expect(entry.data).toEqual({
      retentionDays: 90,
      cutoff: r.cutoff.toISOString(),
      deleted: 7,
      kept: 2,
      batches: 2,
      batchSize: 5,
      partitionsDropped: 0,
      completed: true,
    });
    expect(await verifyAuditChain()).toMatchObject({ ok: true });

    value(await revokeApproval(admin, { id: approval.id, reason: 'clean up' }));
    expect(ran(await purgeExpiredOutcomes())).toMatchObject({ deleted: 2, kept: 0 });
  });

  it('loses nothing ingested while a purge runs', async () => {
    const old = await oldRecords(2_000);
    const fresh = uniq('fresh');
    let purging = true;
    const purge = purgeExpiredOutcomes({ batchSize: 100 }).finally(() => (purging = false));
    // Three writers post batches until the purge is over (and at least three each).
    const writers = Array.from({ length: 3 }, async () => {
      let batches = 0;
      let whilePurging = 0;
      while (purging || batches < 3) {
        await ingest(fresh, 50);
        batches++;
        if (purging) whilePurging++;
      }
      return { batches, whilePurging };
    });
    const [report, ...written] = await Promise.all([purge, ...writers]);
    expect(ran(report)).toMatchObject({ deleted: 2_000, batches: 20 });
    // A real race: batches were stored while the purge was still deleting.
    expect(written.reduce((n, w) => n + w.whilePurging, 0)).toBeGreaterThan(0);
    expect(await countOf(old)).toBe(0);
    expect(await countOf(fresh)).toBe(50 * written.reduce((n, w) => n + w.batches, 0));
  });

  it('runs once at a time: a second purge skips while one runs, and ingestion never waits for it', async () => {
    const ref = await oldRecords(3);
    // Hold the audit table: the purge then stops in its last transaction, rows deleted but
    // uncommitted, holding the purge lock.
    const blocker = new pg.Client({ connectionString: config().DATABASE_URL });
    await blocker.connect();
    let first!: Promise<PurgeReport>;
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE audit_entries IN EXCLUSIVE MODE');
      first = purgeExpiredOutcomes();
      for (let waited = 0; ; waited += 20) {
        const { rows } = await blocker.query<{ n: number }>(
          // pg_locks is the whole server's, and databases copied from one template share table oids.
          `SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = 'audit_entries'::regclass
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        );
        if (rows[0].n >= 1) break;
        if (waited > 15_000) throw new Error('the purge never reached its audit entry');
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(await purgeExpiredOutcomes()).toEqual({ ran: false, reason: 'busy' });

      const fresh = uniq('fresh');
      const t0 = Date.now();
      await ingest(fresh, 50);
      expect(Date.now() - t0).toBeLessThan(5_000);
      expect(await countOf(fresh)).toBe(50);
    } finally {
      await blocker.query('COMMIT');
      await blocker.end();
    }
    expect(ran(await first)).toMatchObject({ deleted: 3 });
    expect(await countOf(ref)).toBe(0);
    // The lock is free again.
    expect((await purgeExpiredOutcomes()).ran).toBe(true);
  });
});
