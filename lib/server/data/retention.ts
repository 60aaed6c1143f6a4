import 'server-only';
import { db, sessionClient, type Tx } from './db';
import { rows } from './sql/kysely';
import { countKeptOutcomes, deleteOutcomeBatch, tryAdvisoryLock } from './sql/retention';
import { appendAudit } from './audit';
import { dbNow } from './approvals';
import { authorize } from '@/lib/auth/permissions';
import type { Actor } from '@/lib/auth/actor';
import { parseRetentionSetting, RETENTION_ENV, type RetentionSetting } from '@/lib/outcomes/retention';
import { fail, ok, type Result } from '@/lib/result';

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

export const PURGE_BATCH_DEFAULT = 5_000;
const PURGE_BATCH_MAX = 50_000;
const DAY_MS = 86_400_000;

// Session-level advisory lock (a connection of its own, below): one purge at a time across every
// instance and the CLI. Any 64-bit constant unique to this lock: "retention".
const PURGE_LOCK = 0x726574656e74696fn;

// The audit entries of purges share one target, so the admin page finds the latest by index.
const AUDIT_TARGET = { targetType: 'outcome_records', targetId: 'retention' } as const;
export const PURGE_ACTION = 'outcomes.purge';

/** The setting in force; a bad value throws a RetentionConfigError naming the variable. */
export const retentionSetting = (): RetentionSetting => parseRetentionSetting(process.env[RETENTION_ENV]);

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
      durationMs: number;
    };

/**
 * Deletes up to `batchSize` of the oldest untied records received in [from, cutoff). `from` is
 * where the previous batch of the run ended: the index entries of rows deleted by this run stay
 * until vacuum, and each batch would otherwise walk past all of them again.
 */
async function deleteBatch(
  tx: Tx,
  from: Date | null,
  cutoff: Date,
  at: Date,
  batchSize: number,
): Promise<{ n: number; upto: Date | null }> {
  const [r] = await rows(deleteOutcomeBatch(from ?? new Date(0), cutoff, at, batchSize), tx);
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

  const report = await withPurgeLock(async (held) => {
    const started = Date.now();
    const at = options.now ?? (await dbNow());
    const cutoff = new Date(at.getTime() - setting.days * DAY_MS);
    const entry = (deleted: number, kept: number | null, batches: number, completed: boolean) => ({
      actor,
      action: PURGE_ACTION,
      ...AUDIT_TARGET,
      data: { retentionDays: setting.days, cutoff: cutoff.toISOString(), deleted, kept, batches, batchSize, completed },
    });

    let deleted = 0;
    let batches = 0;
    let from: Date | null = null;
    try {
      for (;;) {
        // Its connection gone, the lock is gone: another run could be under way.
        if (!held()) throw new Error('the purge lost its lock (its connection closed); the next run carries on');
        const step = await db.$transaction(
          async (tx) => {
            const { n, upto } = await deleteBatch(tx, from, cutoff, at, batchSize);
            if (n === batchSize) return { n, upto, kept: null };
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
        if (step.kept !== null) {
          return {
            ran: true as const,
            retentionDays: setting.days,
            cutoff,
            deleted,
            kept: step.kept,
            batches,
            durationMs: Date.now() - started,
          };
        }
      }
    } catch (err) {
      if (deleted > 0) {
        await db.$transaction((tx) => appendAudit(tx, entry(deleted, null, batches, false))).catch(() => {});
      }
      throw err;
    }
  });
  return report ?? { ran: false, reason: 'busy' };
}

/**
 * Runs `work` holding the purge lock on a connection of its own, or answers null when another
 * run holds it. `held()` turns false once that connection is lost, and the lock with it.
 */
async function withPurgeLock<T>(work: (held: () => boolean) => Promise<T>): Promise<T | null> {
  const client = sessionClient();
  let connected = false;
  // Without a listener a dropped connection would be an uncaught 'error' event: the process dies.
  client.on('error', () => (connected = false));
  client.on('end', () => (connected = false));
  await client.connect();
  connected = true;
  try {
    const [{ locked }] = await rows(tryAdvisoryLock(PURGE_LOCK), client);
    if (!locked) return null;
    return await work(() => connected);
  } finally {
    // Closing the session releases the lock.
    await client.end().catch(() => {});
  }
}

export type RetentionStatus = {
  setting: RetentionSetting | { enabled: false; invalid: string };
  lastPurge: { at: Date; deleted: number; kept: number | null; cutoff: string } | null;
};

/** The setting in force and the last purge that deleted something (from the audit log). */
export async function getRetentionStatus(viewer: Actor): Promise<Result<RetentionStatus>> {
  if (!authorize(viewer, 'audit.read')) return fail('forbidden');
  let setting: RetentionStatus['setting'];
  try {
    setting = retentionSetting();
  } catch (err) {
    setting = { enabled: false, invalid: (err as Error).message };
  }
  const last = await db.auditEntry.findFirst({
    where: { ...AUDIT_TARGET, action: PURGE_ACTION },
    orderBy: { seq: 'desc' },
    select: { at: true, data: true },
  });
  const data = last?.data as { deleted?: number; kept?: number | null; cutoff?: string } | undefined;
  return ok({
    setting,
    lastPurge:
      last && data
        ? { at: last.at, deleted: data.deleted ?? 0, kept: data.kept ?? null, cutoff: data.cutoff ?? '' }
        : null,
  });
}
