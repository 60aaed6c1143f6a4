import 'server-only';
import { rows } from '../db/kysely';
import { ensureOutcomePartitions } from './partitions-sql';
import { selectOutcomePartitions, type OutcomePartition } from '../retention/sql';
import { dbNow } from '../approvals';
import { aheadMs, type PartitionUnit } from '@/lib/outcomes/partitions';
import { config } from '@/lib/config';

// outcome_records is partitioned by received_at (docs/design.md "Architecture"): one partition per
// OUTCOME_PARTITION_INTERVAL (month by default), created ahead by the console on start and every
// hour (lib/server/outcomes/partitions-job.ts), and a default partition catching anything outside them
// (its rows move into a partition when one is created for their range). The work is one SQL
// function holding a transaction-level advisory lock: two instances at once create each
// partition once, and a run that finds them all there does nothing.

export const partitionInterval = (): PartitionUnit => config().OUTCOME_PARTITION_INTERVAL;

/** Creates the partitions from the current interval to about three ahead; answers the new names. */
export async function ensurePartitionsAhead(options: { now?: Date; unit?: PartitionUnit } = {}): Promise<string[]> {
  const unit = options.unit ?? partitionInterval();
  const now = options.now ?? (await dbNow());
  const created = await rows(ensureOutcomePartitions(now, new Date(now.getTime() + aheadMs(unit)), unit));
  return created.map((r) => r.name);
}

/** The partitions and their bounds, oldest first, the default one last. */
export const listOutcomePartitions = (): Promise<OutcomePartition[]> => rows(selectOutcomePartitions());
