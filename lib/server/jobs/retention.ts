import 'server-only';
import { isDatabaseUnavailable } from '../data/unavailable';
import {
  purgeExpiredOutcomes,
  retentionSetting,
  sweepStaleEventIds,
  type PurgeReport,
  type SweepReport,
} from '../data/retention';
import { RETENTION_ENV } from '@/lib/outcomes/retention';

// The hourly purge of outcome records past OUTCOME_RETENTION_DAYS, then the sweep of the event-id
// claims their records left (lib/server/data/retention.ts).

const HOUR_MS = 3_600_000;
const FIRST_RUN_DELAY_MS = 60_000;
const timers = globalThis as unknown as { countersignRetention?: NodeJS.Timeout[] };

type Log = Pick<Console, 'log' | 'error'>;

/** One scheduled run: never throws, logs one line when it did something or failed. */
export async function runScheduledPurge(log: Log = console): Promise<void> {
  try {
    const r = await purgeExpiredOutcomes({ actor: 'system' });
    if (r.ran && r.deleted > 0) log.log(`[retention] ${describePurge(r)}`);
    // Then the event-id claims of any month it dropped (or an earlier run did and stopped before).
    const s = await sweepStaleEventIds();
    if (s.ran && s.swept > 0) log.log(`[retention] ${describeSweep(s)}`);
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

/** What a sweep did, in one sentence (the CLI and the log). */
export function describeSweep(r: Extract<SweepReport, { ran: true }>): string {
  if (r.swept === 0) return 'No stale event-id claims to sweep.';
  return `Swept ${r.swept} event-id ${r.swept === 1 ? 'claim' : 'claims'} of purged records in ${(r.durationMs / 1000).toFixed(1)} s.`;
}
