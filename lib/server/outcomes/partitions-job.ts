import 'server-only';
import { isDatabaseUnavailable } from '../db/unavailable';
import { ensurePartitionsAhead, partitionInterval } from './partitions';

// Creates outcome_records' partitions ahead (lib/server/outcomes/partitions.ts): at start, then every
// hour. Safe with any number of instances (the SQL function holds an advisory lock).

const HOUR_MS = 3_600_000;
const timers = globalThis as unknown as { countersignPartitions?: NodeJS.Timeout };

type Log = Pick<Console, 'log' | 'error'>;

/** One run: never throws, logs a line when it created partitions or failed. */
export async function runPartitionMaintenance(log: Log = console): Promise<void> {
  try {
    const created = await ensurePartitionsAhead();
    if (created.length) log.log(`[partitions] created ${created.join(', ')}`);
  } catch (err) {
    const why = isDatabaseUnavailable(err)
      ? 'the database is unavailable'
      : (err instanceof Error ? err.message : String(err)).split('\n')[0];
    log.error(`[partitions] could not create outcome partitions ahead: ${why}; next try in an hour`);
  }
}

/** Called once by instrumentation.ts: a bad OUTCOME_PARTITION_INTERVAL throws here, at start-up. */
export function startPartitionSchedule(run: () => void = () => void runPartitionMaintenance()): 'started' | 'running' {
  partitionInterval();
  if (timers.countersignPartitions) return 'running';
  run();
  const hourly = setInterval(run, HOUR_MS);
  hourly.unref();
  timers.countersignPartitions = hourly;
  return 'started';
}

export function stopPartitionSchedule(): void {
  clearInterval(timers.countersignPartitions);
  timers.countersignPartitions = undefined;
}
