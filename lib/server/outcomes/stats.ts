import 'server-only';
import { replicaSafe } from '../db/replica';
import { pool } from '../db/db';
import { rows as run } from '../db/kysely';
import {
  foldOverviewCounts as foldCounts,
  selectOverviewBuckets,
  selectOverviewGroups,
  selectRecentRequestRefs,
} from './stats-sql';
import { authorize } from '@/lib/auth/permissions';
import type { Actor } from '@/lib/auth/actor';
import type { Category, Delivery } from '@/lib/outcomes/schemas';
import { fail, ok, type Result } from '@/lib/result';

export type DeliveryCounts = Record<Delivery, number>;
export type OverviewStats = {
  last24h: {
    total: number;
    byDelivery: DeliveryCounts;
    byCategory: { category: Category; count: number }[];
    unknownWrites: number;
  };
  last7d: {
    total: number;
    byDelivery: DeliveryCounts;
    byCategory: { category: Category; count: number }[];
    unknownWrites: number;
  };
  /** Where each window starts, for links that reproduce these counts as a filtered list. */
  since: { h24: string; d7: string };
  /** Six-hour buckets over the last seven days, oldest first, with counts per delivery state. */
  series: ({ bucket: string } & DeliveryCounts)[];
};

const emptyCounts = (): DeliveryCounts => ({ completed: 0, rejected: 0, never_sent: 0, unknown: 0 });
const BUCKET_HOURS = 6;

/** The request references with records in the last 24 hours, most recent first, at most `max`. */
// Not a grouping of the whole window (every record of 24 hours, a cost that follows the table): the
// newest records, as many as it takes to see `max` references (ten per reference to start with,
// doubled while too few showed and the window has more).
export const listRecentRequestRefs = replicaSafe(async function listRecentRequestRefs(
  viewer: Actor,
  max: number = 500,
): Promise<string[]> {
  if (!authorize(viewer, 'outcomes.read')) return [];
  for (let scan = Math.max(max, 1) * 10; ; scan *= 2) {
    const refs = await run(selectRecentRequestRefs(scan, max));
    if (refs.length >= max || !refs.length || refs[0].scanned < scan) return refs.map((r) => r.request_ref);
  }
});

/**
 * Counts for the overview, computed in PostgreSQL (never rows in JS): whole hours from the counts
 * kept at every write (outcome_counts), the partial hours at the windows' edges from the records.
 */
export const getOverviewStats = replicaSafe(async function getOverviewStats(
  viewer: Actor,
): Promise<Result<OverviewStats>> {
  if (!authorize(viewer, 'outcomes.read')) return fail('forbidden');
  const [groups, buckets] = await Promise.all([run(selectOverviewGroups()), run(selectOverviewBuckets(BUCKET_HOURS))]);

  const summarize = (pick: (g: (typeof groups)[number]) => number) => {
    const byDelivery = emptyCounts();
    const byCategory = new Map<Category, number>();
    let unknownWrites = 0;
    for (const g of groups) {
      const n = pick(g);
      byDelivery[g.delivery] += n;
      byCategory.set(g.category, (byCategory.get(g.category) ?? 0) + n);
      if (g.unresolved && !g.read_only) unknownWrites += n;
    }
    const total = Object.values(byDelivery).reduce((a, b) => a + b, 0);
    return {
      total,
      byDelivery,
      unknownWrites,
      byCategory: [...byCategory]
        .filter(([, n]) => n > 0)
        .map(([category, count]) => ({ category, count }))
        .sort((a, b) => b.count - a.count),
    };
  };

  // Every bucket of the window appears, empty ones included, so the chart's time axis is honest.
  const step = BUCKET_HOURS * 3_600_000;
  const end = Math.floor(Date.now() / step) * step;
  const series = new Map<number, { bucket: string } & DeliveryCounts>();
  for (let t = end - 7 * 24 * 3_600_000 + step; t <= end; t += step)
    series.set(t, { bucket: new Date(t).toISOString(), ...emptyCounts() });
  for (const b of buckets) {
    const slot = series.get(b.bucket.getTime());
    if (slot) slot[b.delivery] += Number(b.n);
  }
  const since = {
    h24: new Date(Date.now() - 24 * 3_600_000).toISOString(),
    d7: new Date(Date.now() - 7 * 24 * 3_600_000).toISOString(),
  };
  return ok({
    last24h: summarize((g) => Number(g.d1)),
    last7d: summarize((g) => Number(g.d7)),
    since,
    series: [...series.values()],
  });
});

/**
 * Folds the overview's kept counts and the tools inventory's, one row per group (the schedule's:
 * lib/server/outcomes/stats-job.ts); answers the rows folded.
 */
export async function foldOverviewCounts(): Promise<number> {
  const [r] = await run(foldCounts(), pool());
  return Number(r.n);
}
