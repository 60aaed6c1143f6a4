import 'server-only';
import { isDatabaseUnavailable } from '../db/unavailable';
import { purgeExpiredOutcomes, retentionSetting, type PurgeReport } from './retention';
import { cleanUpPurged, type CleanUpReport } from './clean-up';
import { RETENTION_ENV } from '@/lib/outcomes/retention';

// The hourly purge of outcome records past OUTCOME_RETENTION_DAYS, then the clean-up of what it
// left: the months it took out and their records' event-id claims (lib/server/retention/retention.ts,
// clean-up.ts).

const HOUR_MS = 3_600_000;
const FIRST_RUN_DELAY_MS = 60_000;
const timers = globalThis as unknown as { countersignRetention?: NodeJS.Timeout[] };

type Log = Pick<Console, 'log' | 'error'>;

/** One scheduled run: never throws, logs one line when it did something or failed. */
export async function runScheduledPurge(log: Log = console): Promise<void> {
  try {
    const r = await purgeExpiredOutcomes({ actor: 'system' });
    if (r.ran && r.deleted > 0) log.log(`[retention] ${describePurge(r)}`);
    // Then the files of any month it took out and their records' event-id claims (or what an
    // earlier run left).
    const c = await cleanUpPurged();
    if (c.ran && (c.tablesDropped > 0 || c.claimsSwept > 0)) log.log(`[retention] ${describeCleanUp(c)}`);
  } catch (err) {
    const why = isDatabaseUnavailable(err)
      ? 'the database is unavailable'
      : (err instanceof Error ? err.message : String(err)).split('\n')[0];
    log.error(`[retention] purge failed: ${why}; next try in an hour`);
  }
}

/**
 * Called once by instrumentation.ts when the server starts: a purge a minute later, then every
 * hour. Timers are unref'd, so they never keep a process alive. A bad setting throws here, at
 * start-up; `off` starts nothing.
 */
export function startRetentionSchedule(
  run: () => void = () => void runScheduledPurge(),
  log: Log = console,
): 'off' | 'started' | 'running' {
  const setting = retentionSetting();
  if (!setting.enabled) {
    log.log(`[retention] off (${RETENTION_ENV}=off): outcome records are kept forever`);
    return 'off';
  }
  if (timers.countersignRetention) return 'running';
  const first = setTimeout(run, FIRST_RUN_DELAY_MS);
  const hourly = setInterval(run, HOUR_MS);
  first.unref();
  hourly.unref();
  timers.countersignRetention = [first, hourly];
  return 'started';
}

export function stopRetentionSchedule(): void {
  for (const t of timers.countersignRetention ?? []) clearTimeout(t);
  timers.countersignRetention = undefined;
}

/** What a run did, in one sentence (the CLI and the log). */
export function describePurge(r: Extract<PurgeReport, { ran: true }>): string {
  const kept = r.kept ? `; kept ${r.kept} tied to a pending approval or live grant` : '';
  const before = `received before ${r.cutoff.toISOString()} (${r.retentionDays} days)`;
  if (r.deleted === 0)
    return `Nothing to purge: no outcome records ${before}${kept ? ` except ${r.kept} tied to a pending approval or live grant` : ''}.`;
  return `Purged ${r.deleted} outcome ${r.deleted === 1 ? 'record' : 'records'} ${before} in ${r.batches} ${r.batches === 1 ? 'batch' : 'batches'}${kept}.`;
}

/** What a clean-up did, in one sentence (the CLI and the log). */
export function describeCleanUp(r: Extract<CleanUpReport, { ran: true }>): string {
  if (r.tablesDropped === 0 && r.claimsSwept === 0) return 'Nothing left to clean up after purges.';
  const s = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  return `Cleaned up after purges: dropped ${s(r.tablesDropped, 'month', 'months')} taken out (${(r.dropMs / 1000).toFixed(1)} s), deleted ${s(r.claimsSwept, 'event-id claim', 'event-id claims')} of purged records (${(r.sweepMs / 1000).toFixed(1)} s).`;
}
