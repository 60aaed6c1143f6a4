import 'server-only';
import { randomBytes } from 'node:crypto';
import { db, sessionClient, type Tx } from '../db/db';
import { rows } from '../db/kysely';
import { RETENTION_PURGE_LOCK } from '../db/locks';
import {
  countKeptOutcomes,
  createKeptTable,
  deleteOrphanedStateChecks,
  deleteOutcomeBatch,
  detachPartition,
  renamePurged,
  forgetPartitionCounts,
  partitionRowCount,
  restoreKeptOutcomes,
  selectOutcomePartitions,
  setAsideKeptOutcomes,
  setLockTimeout,
  tryAdvisoryLock,
  type OutcomePartition,
} from './sql';
import { appendAudit } from '../audit/audit';
import { dbNow } from '../approvals';
import type { RetentionSetting } from '@/lib/outcomes/retention';
import { config } from '@/lib/config';

// Outcome records older than the retention period (OUTCOME_RETENTION_DAYS) are deleted, oldest
// first, in short batches: each batch is its own transaction deleting at most `batchSize` rows
// it could lock at once (SKIP LOCKED), so ingestion, which only inserts new rows, never waits on
// a purge. Age is counted from `received_at`, the database's clock when the record arrived:
// `occurred_at` is the caller's clock, and a caller's wrong clock must neither keep records
// forever (dated in the future) nor have them deleted the moment they arrive (back-filled).
//
// Kept whatever their age: records tied to an approval still in play, i.e. records of the same
// request reference as a pending, unexpired request (the evidence its reviewers read), or as an
// approved request whose grant is live (unredeemed, unrevoked, unexpired), and records naming
// such a grant. They go in the first run after the approval is decided, expires or is used.
//
// The table is partitioned by received_at (lib/server/outcomes/partitions.ts): a partition whose
// whole range is past the cutoff is detached, after its kept records are set aside and put back
// (into the default partition, their range having none now), so a month goes in the same time
// whatever it holds. Batches delete only inside the partition the cutoff falls in and the default
// partition; the cost of a run follows that boundary, never the table. The detached months'
// files and their records' event-id claims go afterwards (cleanUpPurged, ./clean-up.ts), outside the purge.

export const PURGE_BATCH_DEFAULT = 5_000;
export const PURGE_BATCH_MAX = 50_000;
const DAY_MS = 86_400_000;
const DROP_LOCK_TIMEOUT_MS = 5_000;

// The audit entries of purges share one target, so the admin page finds the latest by index.
export const AUDIT_TARGET = { targetType: 'outcome_records', targetId: 'retention' } as const;
export const PURGE_ACTION = 'outcomes.purge';

/** The setting in force (lib/config); a bad value throws a ConfigError naming the variable. */
export const retentionSetting = (): RetentionSetting => config().OUTCOME_RETENTION_DAYS;

export type PurgeOptions = {
  /** The instant the run judges ages and approvals by (default: the database clock). */
  now?: Date;
  batchSize?: number;
  /** Who the audit entry names: `system` for the schedule, `cli` for the command. */
  actor?: string;
};

export type PurgeReport =
  | { ran: false; reason: 'off' | 'busy' }
  | {
      ran: true;
      retentionDays: number;
      cutoff: Date;
      deleted: number;
      kept: number;
      batches: number;
      /** Whole partitions taken out (their files freed by cleanUpPurged); their rows are counted in `deleted` (ANALYZE's count). */
      partitionsDropped: number;
      durationMs: number;
    };

/** Where batches delete once whole partitions are gone: the one the cutoff falls in, and the default one. */
const boundaryOf = (partitions: OutcomePartition[], cutoff: Date) =>
  partitions
    .filter(
      (p) => p.lower_bound === null || (p.lower_bound < cutoff && p.upper_bound !== null && p.upper_bound > cutoff),
    )
    .map((p) => p.name);

/**
 * Takes a partition entirely past the cutoff out of the table, keeping its tied records; answers
 * the rows it removed. Detached and renamed, not dropped: its files are freed by cleanUpPurged.
 */
async function detachWholePartition({ name, lower_bound, upper_bound }: OutcomePartition, at: Date): Promise<number> {
  return db.$transaction(
    async (tx) => {
      // Detaching locks the whole table: give up (the next run tries again) rather than queue
      // ingestion behind a long query holding it.
      await rows(setLockTimeout(DROP_LOCK_TIMEOUT_MS), tx);
      const [{ n: total }] = await rows(partitionRowCount(name), tx);
      await rows(createKeptTable(), tx);
      const [{ n: kept }] = await rows(setAsideKeptOutcomes(name, at), tx);
      // The overview's and the tools inventory's counts of its records go with it (the kept ones come back through the
      // insert trigger when restored): before the restore, which would be forgotten with them.
      await rows(forgetPartitionCounts(name, lower_bound!, upper_bound!), tx);
      await rows(detachPartition(name), tx);
      await rows(renamePurged(name, randomBytes(6).toString('hex')), tx);
      if (kept > 0) await rows(restoreKeptOutcomes(), tx);
      return Math.max(0, total - kept);
    },
    { maxWait: 10_000, timeout: 60_000 },
  );
}

/**
 * Deletes up to `batchSize` of the oldest untied records of a partition received in [from, cutoff). `from` is
 * where the previous batch of the run ended: the index entries of rows deleted by this run stay
 * until vacuum, and each batch would otherwise walk past all of them again.
 */
async function deleteBatch(
  tx: Tx,
  partition: string,
  from: Date | null,
  cutoff: Date,
  at: Date,
  batchSize: number,
): Promise<{ n: number; upto: Date | null }> {
  const [r] = await rows(deleteOutcomeBatch(partition, from ?? new Date(0), cutoff, at, batchSize), tx);
  return r;
}

// From the live set through the request_ref and grant_id indexes: as cheap after a run that
// deleted millions of rows as after one that deleted none.
async function countKept(tx: Tx, cutoff: Date, at: Date): Promise<number> {
  const [{ n }] = await rows(countKeptOutcomes(cutoff, at), tx);
  return n;
}

/**
 * Deletes the outcome records past the retention period, a batch at a time, and audits the run
 * (one entry, only when something was deleted). Skips when retention is off or another purge
 * holds the lock. The entry commits with the last batch: a run that fits in one batch, the
 * hourly routine, deletes and audits atomically. If a longer run fails midway, the batches
 * already committed are audited by a best-effort entry marked `completed: false`.
 */
export async function purgeExpiredOutcomes(options: PurgeOptions = {}): Promise<PurgeReport> {
  const setting = retentionSetting();
  if (!setting.enabled) return { ran: false, reason: 'off' };
  const batchSize = options.batchSize ?? PURGE_BATCH_DEFAULT;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > PURGE_BATCH_MAX) {
    throw new Error(`batchSize must be a whole number from 1 to ${PURGE_BATCH_MAX}`);
  }
  const actor = options.actor ?? 'system';

  const report = await withAdvisoryLock(RETENTION_PURGE_LOCK, async (held) => {
    const purged = await (async () => {
      const started = Date.now();
      const at = options.now ?? (await dbNow());
      const cutoff = new Date(at.getTime() - setting.days * DAY_MS);
      const entry = (deleted: number, kept: number | null, batches: number, completed: boolean) => ({
        actor,
        action: PURGE_ACTION,
        ...AUDIT_TARGET,
        data: {
          retentionDays: setting.days,
          cutoff: cutoff.toISOString(),
          deleted,
          kept,
          batches,
          batchSize,
          partitionsDropped: dropped,
          completed,
        },
      });

      let deleted = 0;
      let batches = 0;
      let dropped = 0;
      const done = (kept: number) => ({
        ran: true as const,
        retentionDays: setting.days,
        cutoff,
        deleted,
        kept,
        batches,
        partitionsDropped: dropped,
        durationMs: Date.now() - started,
      });
      try {
        const partitions = await rows(selectOutcomePartitions());
        for (const p of partitions) {
          if (p.upper_bound === null || p.upper_bound > cutoff) continue;
          if (!held()) throw new Error('the purge lost its lock (its connection closed); the next run carries on');
          deleted += await detachWholePartition(p, at);
          dropped++;
        }
        const targets = boundaryOf(partitions, cutoff);
        if (!targets.length) {
          // Nothing left to delete a batch at a time: count what is kept and audit, together.
          const kept = await db.$transaction(async (tx) => {
            const k = await countKept(tx, cutoff, at);
            if (deleted > 0) await appendAudit(tx, entry(deleted, k, batches, true));
            return k;
          });
          return done(kept);
        }
        for (const [t, partition] of targets.entries()) {
          const last = t === targets.length - 1;
          let from: Date | null = null;
          for (;;) {
            // Its connection gone, the lock is gone: another run could be under way.
            if (!held()) throw new Error('the purge lost its lock (its connection closed); the next run carries on');
            const step = await db.$transaction(
              async (tx) => {
                const { n, upto } = await deleteBatch(tx, partition, from, cutoff, at, batchSize);
                if (n === batchSize || !last) return { n, upto, kept: null };
                // The last batch: fewer rows than asked for were left to delete.
                const kept = await countKept(tx, cutoff, at);
                if (deleted + n > 0) await appendAudit(tx, entry(deleted + n, kept, batches + (n > 0 ? 1 : 0), true));
                return { n, upto, kept };
              },
              { maxWait: 10_000, timeout: 60_000 },
            );
            deleted += step.n;
            from = step.upto ?? from;
            if (step.n > 0) batches++;
            if (step.kept !== null) return done(step.kept);
            if (step.n < batchSize) break;
          }
        }
        throw new Error('unreachable: the last partition always ends the run');
      } catch (err) {
        if (deleted > 0) {
          await db.$transaction((tx) => appendAudit(tx, entry(deleted, null, batches, false))).catch(() => {});
        }
        throw err;
      }
    })();
    // A state check belongs to its record (no foreign key: the table is partitioned).
    await rows(deleteOrphanedStateChecks());
    return purged;
  });
  return report ?? { ran: false, reason: 'busy' };
}

/**
 * Runs `work` holding a session-level advisory lock on a connection of its own, or answers null
 * when another run holds it. `held()` turns false once that connection is lost, and the lock with it.
 */
export async function withAdvisoryLock<T>(key: bigint, work: (held: () => boolean) => Promise<T>): Promise<T | null> {
  const client = sessionClient();
  let connected = false;
  // Without a listener a dropped connection would be an uncaught 'error' event: the process dies.
  client.on('error', () => (connected = false));
  client.on('end', () => (connected = false));
  await client.connect();
  connected = true;
  try {
    const [{ locked }] = await rows(tryAdvisoryLock(key), client);
    if (!locked) return null;
    return await work(() => connected);
  } finally {
    // Closing the session releases the lock.
    await client.end().catch(() => {});
  }
}
