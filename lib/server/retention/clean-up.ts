import 'server-only';
import { rows } from '../db/kysely';
import { RETENTION_CLEAN_UP_LOCK } from '../db/locks';
import { deleteStaleEventIds, dropPurgedTable, selectOutcomePartitions, selectPurgedTables } from './sql';
import { PURGE_BATCH_DEFAULT, PURGE_BATCH_MAX, withAdvisoryLock } from './retention';

// What a purge (./retention.ts) leaves behind, cleaned up apart from it.

export type CleanUpReport =
  | { ran: false; reason: 'busy' }
  | { ran: true; tablesDropped: number; dropMs: number; claimsSwept: number; sweepMs: number };

/**
 * What a purge leaves, done apart so that taking a month out costs the same whatever it held:
 * the steps whose work follows its size, holding no lock that ingestion waits for. Run after
 * each purge (the hourly routine, `retention:purge`); whatever a crash left, the next run does.
 *   1. Drops the months the purge detached (lib/server/retention/sql.ts). Each drop locks
 *      only its own table; its commit frees the files, in time proportional to their size.
 *   2. Deletes the event-id claims whose record went with them, `batchSize` at a time in order of
 *      receipt, each batch its own statement. Until then a stale claim does no harm: the next
 *      record of its pair takes it over (the trigger of migration 20261201192841). Below the
 *      oldest range partition only the default partition holds records (the kept ones, put back
 *      with their time of receipt), so every other claim there is stale.
 * One clean-up at a time (its own lock: a purge never waits for it). The purge's audit entry
 * covers the records; dropping what it removed and ingestion's index change nothing anyone reads.
 */
export async function cleanUpPurged(options: { batchSize?: number } = {}): Promise<CleanUpReport> {
  const batchSize = options.batchSize ?? PURGE_BATCH_DEFAULT;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > PURGE_BATCH_MAX) {
    throw new Error(`batchSize must be a whole number from 1 to ${PURGE_BATCH_MAX}`);
  }
  const lost = () => new Error('the clean-up lost its lock (its connection closed); the next run carries on');
  const report = await withAdvisoryLock(RETENTION_CLEAN_UP_LOCK, async (held) => {
    const t0 = Date.now();
    const purged = await rows(selectPurgedTables());
    for (const { name } of purged) {
      if (!held()) throw lost();
      await rows(dropPurgedTable(name));
    }
    const t1 = Date.now();
    const oldest = (await rows(selectOutcomePartitions())).find((p) => p.lower_bound !== null);
    let swept = 0;
    if (oldest?.lower_bound) {
      for (let from = new Date(0); ;) {
        if (!held()) throw lost();
        const [{ n, upto }] = await rows(deleteStaleEventIds(from, oldest.lower_bound, batchSize));
        swept += n;
        if (n < batchSize || !upto) break;
        from = upto;
      }
    }
    return {
      ran: true as const,
      tablesDropped: purged.length,
      dropMs: t1 - t0,
      claimsSwept: swept,
      sweepMs: Date.now() - t1,
    };
  });
  return report ?? { ran: false, reason: 'busy' };
}
