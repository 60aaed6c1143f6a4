import 'server-only';
import { isDatabaseUnavailable } from '../db/unavailable';
import { foldOverviewCounts } from './stats';

// Folds the overview's counts (migration 20261201232642_overview_counts) and the tools inventory's
// (20261202024325_tool_counts, one function folds both): every minute, each group's trigger rows
// into one, so the overview and the inventory read about one row per group and hour. The
// counts are exact whether or not this has run (a group's count is the sum of its rows); what it
// bounds is how many rows the overview reads. Safe with any number of instances.

const MINUTE_MS = 60_000;
const timers = globalThis as unknown as { countersignOverviewCounts?: NodeJS.Timeout };

type Log = Pick<Console, 'log' | 'error'>;

/** One run: never throws, logs a line when it failed. */
export async function runOverviewCountsFold(log: Log = console): Promise<void> {
  try {
    await foldOverviewCounts();
  } catch (err) {
    const why = isDatabaseUnavailable(err)
      ? 'the database is unavailable'
      : (err instanceof Error ? err.message : String(err)).split('\n')[0];
    log.error(`[overview-counts] could not fold the overview's counts: ${why}; next try in a minute`);
  }
}

/** Called once by instrumentation.ts. */
export function startOverviewCountsSchedule(
  run: () => void = () => void runOverviewCountsFold(),
): 'started' | 'running' {
  if (timers.countersignOverviewCounts) return 'running';
  const every = setInterval(run, MINUTE_MS);
  every.unref();
  timers.countersignOverviewCounts = every;
  return 'started';
}

export function stopOverviewCountsSchedule(): void {
  clearInterval(timers.countersignOverviewCounts);
  timers.countersignOverviewCounts = undefined;
}
