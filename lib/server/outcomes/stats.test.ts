// The overview's counts (getOverviewStats) against real PostgreSQL: read from the counts kept at
// every write (outcome_counts, migration 20261201232642_overview_counts) plus the partial hours at
// the windows' edges, they must be exactly what counting the records says, after every kind of
// change: ingestion, resolution by a later record and by a state check, a reclassification's
// update, a change of receipt (a partition move), the retention purge's batches and its dropped
// partitions, the fold. Two oracles, neither the code under test: this file's own table of the
// records it wrote (it has its database to itself), and hand-written counts over outcome_records.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { foldOverviewCounts, getOverviewStats, listRecentRequestRefs, type OverviewStats } from './stats';
import { ingestOutcomes, recordStateCheck } from '.';
import { purgeExpiredOutcomes } from '../retention/retention';
import { db } from '../db/db';
import { trustServer } from '../policy/trusted-servers';
import { makeUser, uniq } from '@/testing/factories';
import { batchOf, makeKey, makeRecord, OK, value } from '@/testing/outcomes-fixtures';
import { stateCheckBodySchema } from '@/lib/outcomes/resolution';
import { RETENTION_ENV } from '@/lib/outcomes/retention';
import type { Delivery, Observed, Outcome } from '@/lib/outcomes/schemas';
import { cli, type Actor } from '@/lib/auth/actor';
import type { Viewer } from '@/lib/auth/permissions';
import { config } from '@/lib/config';
import { setEnv } from '@/testing/env';

const TIMEOUT: Observed = { sent: true, clientError: 'timeout' };
const NOT_SENT: Observed = { sent: false, clientBlock: 'approval_required' };
const REFUSED: Observed = { sent: true, httpStatus: 200, result: { isError: true, errorCategory: 'validation' } };
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

let key: Actor;
let reviewer: Viewer;

beforeAll(async () => {
  // Trusted: its read-only hint is believed (the unknown read below is no unknown write).
  await trustServer(cli, 'billing-mcp');
  key = await makeKey();
  reviewer = await makeUser('reviewer');
});
afterEach(() => {
  setEnv({ [RETENTION_ENV]: undefined });
});

// Offsets from now (ms) around every edge of the windows: 7 days back (lo), 24 hours back (d1),
// the current hour, an hour ahead (hi), two minutes either side (the test runs well within that),
// and half an hour in; plus places well inside and well outside.
const EDGES = [-7 * DAY, -DAY, 0, HOUR];
const OFFSETS = [
  ...EDGES.flatMap((e) => [e - 2 * MIN, e + 2 * MIN, e + 30 * MIN]),
  -3 * DAY - 5 * HOUR,
  -6 * HOUR,
  -90 * MIN,
  -8 * DAY,
  5 * HOUR,
];

let written: { id: string; offset: number; delivery: Delivery; readOnly: boolean }[] = [];

async function post(records: (Outcome & { offset: number; delivery: Delivery; readOnly: boolean })[]) {
  const stored = value(
    await ingestOutcomes(
      key,
      batchOf(...records.map(({ offset, delivery: _d, readOnly: _r, ...r }) => r)), // eslint-disable-line @typescript-eslint/no-unused-vars
    ),
  ).records;
  stored.forEach((s, i) => written.push({ ...records[i], id: s.id }));
  return stored.map((s) => s.id);
}

/** A record `offset` ms from now: a write (refund_payment, not read-only) unless a read is asked for. */
const at = (offset: number, observed: Observed, delivery: Delivery, over: Partial<Outcome> = {}) => ({
  ...makeRecord({ occurredAt: new Date(Date.now() + offset).toISOString(), observed, ...over }),
  offset,
  delivery,
  readOnly: over.tool?.annotations?.readOnlyHint === true,
});

/** What the overview must say, from this file's own table (`unresolved`: the ids still unresolved). */
function expected(unresolved: Set<string>, gone: Set<string>) {
  const live = written.filter((w) => !gone.has(w.id));
  const win = (from: number) => live.filter((w) => w.offset >= from && w.offset <= HOUR);
  const sum = (ws: typeof live) => {
    const byDelivery: Record<Delivery, number> = { completed: 0, rejected: 0, never_sent: 0, unknown: 0 };
    for (const w of ws) byDelivery[w.delivery]++;
    return {
      total: ws.length,
      byDelivery,
      unknownWrites: ws.filter((w) => w.delivery === 'unknown' && !w.readOnly && unresolved.has(w.id)).length,
    };
  };
  return { last24h: sum(win(-DAY)), last7d: sum(win(-7 * DAY)) };
}

const shape = (s: OverviewStats) => ({
  last24h: { total: s.last24h.total, byDelivery: s.last24h.byDelivery, unknownWrites: s.last24h.unknownWrites },
  last7d: { total: s.last7d.total, byDelivery: s.last7d.byDelivery, unknownWrites: s.last7d.unknownWrites },
});

type Group = { delivery: string; category: string; read_only: boolean; unresolved: boolean; n: string };

/**
 * In one snapshot: the overview's figures as counting every record of the windows says (the
 * statements the overview ran before the kept counts), and the kept counts per group and hour
 * against the records' own. Answers the first.
 */
async function countedFromRecords() {
  const c = new pg.Client({ connectionString: config().DATABASE_URL });
  await c.connect();
  try {
    await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    const groups = (
      await c.query<Group & { d1: string; d7: string }>(`
      SELECT delivery, category, read_only, (delivery = 'unknown' AND resolved_at IS NULL) AS unresolved,
             count(*) FILTER (WHERE occurred_at >= now() - interval '24 hours') AS d1, count(*) AS d7
      FROM outcome_records
      WHERE occurred_at >= now() - interval '7 days' AND occurred_at <= now() + interval '1 hour'
      GROUP BY 1, 2, 3, 4`)
    ).rows;
    const buckets = (
      await c.query<{ bucket: Date; delivery: string; n: string }>(`
      SELECT date_bin('6 hours', occurred_at, timestamptz '2000-01-01 00:00:00+00') AS bucket, delivery, count(*) AS n
      FROM outcome_records
      WHERE occurred_at >= now() - interval '7 days' AND occurred_at <= now() + interval '1 hour'
      GROUP BY 1, 2`)
    ).rows;
    // Every group of every hour and receipt day: the kept sum against a count of the records.
    const mismatches = (
      await c.query(`
      WITH kept AS (
        SELECT occurred_hour, received_day, delivery, category, read_only, unresolved, sum(n)::int8 AS n
        FROM outcome_counts GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(n) <> 0
      ), counted AS (
        SELECT date_trunc('hour', occurred_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS occurred_hour,
               date_trunc('day', received_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS received_day,
               delivery, category, read_only, (delivery = 'unknown' AND resolved_at IS NULL) AS unresolved,
               count(*)::int8 AS n
        FROM outcome_records GROUP BY 1, 2, 3, 4, 5, 6
      )
      SELECT * FROM kept FULL JOIN counted USING (occurred_hour, received_day, delivery, category, read_only, unresolved)
      WHERE kept.n IS DISTINCT FROM counted.n`)
    ).rows;
    await c.query('COMMIT');
    return { groups, buckets, mismatches };
  } finally {
    await c.end();
  }
}

/** The overview's answer equals both oracles. */
async function check(unresolved: Set<string>, gone: Set<string> = new Set()) {
  const stats = value(await getOverviewStats(reviewer));
  expect(shape(stats)).toEqual(expected(unresolved, gone));

  const { groups, buckets, mismatches } = await countedFromRecords();
  expect(mismatches).toEqual([]);
  const pick = (d: 'd1' | 'd7') => {
    const byDelivery: Record<string, number> = { completed: 0, rejected: 0, never_sent: 0, unknown: 0 };
    const byCategory = new Map<string, number>();
    let unknownWrites = 0;
    for (const g of groups) {
      const n = Number(g[d]);
      byDelivery[g.delivery] += n;
      byCategory.set(g.category, (byCategory.get(g.category) ?? 0) + n);
      if (g.unresolved && !g.read_only) unknownWrites += n;
    }
    return { byDelivery, unknownWrites, byCategory: Object.fromEntries([...byCategory].filter(([, n]) => n > 0)) };
  };
  const of = (w: OverviewStats['last24h']) => ({
    byDelivery: w.byDelivery,
    unknownWrites: w.unknownWrites,
    byCategory: Object.fromEntries(w.byCategory.map((c) => [c.category, c.count])),
  });
  expect(of(stats.last24h)).toEqual(pick('d1'));
  expect(of(stats.last7d)).toEqual(pick('d7'));
  const series = new Map(stats.series.map((b) => [b.bucket, b]));
  for (const b of buckets) {
    const slot = series.get(b.bucket.toISOString());
    if (slot)
      expect([slot.bucket, b.delivery, slot[b.delivery as Delivery]]).toEqual([slot.bucket, b.delivery, Number(b.n)]);
  }
  const fromBuckets = buckets.reduce((a, b) => a + (series.has(b.bucket.toISOString()) ? Number(b.n) : 0), 0);
  const inSeries = stats.series.reduce((a, b) => a + b.completed + b.rejected + b.never_sent + b.unknown, 0);
  expect(inSeries).toBe(fromBuckets);
  return stats;
}

describe('the most recently active request references (real PostgreSQL)', () => {
  // First in this file: these are the only records of the last 24 hours yet.
  it('answers the references whose latest record is newest, however many records each has', async () => {
    const refs = ['busy', 'second', 'third', 'fourth', 'yesterday'].map((r) => uniq(r));
    const ofRef = (ref: string, n: number, fromMinutesAgo: number) =>
      Array.from({ length: n }, (_, i) =>
        makeRecord({ requestRef: ref, occurredAt: new Date(Date.now() - (fromMinutesAgo + i) * MIN).toISOString() }),
      );
    // 'busy' has the 45 newest records and one old one; the others are older, one each hour.
    value(await ingestOutcomes(key, batchOf(...ofRef(refs[0], 45, 1), ...ofRef(refs[0], 1, 20 * 60))));
    value(await ingestOutcomes(key, batchOf(...ofRef(refs[1], 5, 60), ...ofRef(refs[2], 5, 120))));
    value(await ingestOutcomes(key, batchOf(...ofRef(refs[3], 5, 180), ...ofRef(refs[4], 3, 25 * 60))));
    // max 2: the first scan (20 records) sees only 'busy'; 40 still only 'busy'; 80 both.
    expect(await listRecentRequestRefs(reviewer, 2)).toEqual(refs.slice(0, 2));
    expect(await listRecentRequestRefs(reviewer, 3)).toEqual(refs.slice(0, 3));
    // More than the window holds: every reference of the last 24 hours, never yesterday's.
    expect(await listRecentRequestRefs(reviewer, 10)).toEqual(refs.slice(0, 4));
    expect(await listRecentRequestRefs(await makeKey(['outcomes:write']), 10)).toEqual([]);
    // Gone again (through the parent: the delete trigger's count), for the next test's own table.
    await db.$executeRaw`DELETE FROM outcome_records WHERE request_ref = ANY(${refs}::text[])`;
  });
});

describe('the overview counts kept at every write (real PostgreSQL)', () => {
  it('counts exactly what the records say, through ingestion, resolution, reclassification, receipt moves, purges and folds', async () => {
    written = [];
    const unresolved = new Set<string>();
    const read = { tool: { name: 'get_order', annotations: { readOnlyHint: true } } };

    // Every edge, every delivery; unknown writes and an unknown read.
    await post(OFFSETS.map((o) => at(o, OK, 'completed')));
    await post(OFFSETS.map((o) => at(o, NOT_SENT, 'never_sent')));
    await post(OFFSETS.map((o) => at(o, REFUSED, 'rejected')));
    const unknownIds = await post(OFFSETS.map((o) => at(o, TIMEOUT, 'unknown')));
    unknownIds.forEach((id) => unresolved.add(id));
    const unknownRead = await post([at(-2 * HOUR, TIMEOUT, 'unknown', read)]);
    unknownRead.forEach((id) => unresolved.add(id));
    await check(unresolved);

    // Resolved later by a settling record of the same operation (in the last 24 hours).
    const settled = written.find((w) => w.delivery === 'unknown' && w.offset === -6 * HOUR)!;
    const op = { idempotencyKey: uniq('idem'), argsDigest: `sha256:${'cd'.repeat(32)}` };
    const unknown = await post([at(-5 * HOUR, TIMEOUT, 'unknown', op)]);
    unresolved.add(unknown[0]);
    await check(unresolved);
    await post([at(-4 * HOUR, OK, 'completed', op)]);
    unresolved.delete(unknown[0]);
    await check(unresolved);

    // Resolved by a state check (an edge record: 7 days back plus two minutes).
    const edge = written.find((w) => w.delivery === 'unknown' && w.offset === -7 * DAY + 2 * MIN)!;
    value(await recordStateCheck(key, edge.id, stateCheckBodySchema.parse({ verdict: 'happened', note: 'checked' })));
    unresolved.delete(edge.id);
    await check(unresolved);

    // A reclassification's update: delivery and category change (another unknown becomes completed).
    await db.$executeRaw`UPDATE outcome_records SET delivery = 'completed', category = 'ok' WHERE id = ${settled.id}::uuid`;
    unresolved.delete(settled.id);
    settled.delivery = 'completed';
    await check(unresolved);
    // An update that changes nothing counted writes nothing.
    const rowsBefore = await db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM outcome_counts`;
    await db.$executeRaw`UPDATE outcome_records SET agent = 'someone' WHERE id = ${settled.id}::uuid`;
    expect(await db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM outcome_counts`).toEqual(rowsBefore);

    // Folding changes no count, and leaves one row per group.
    expect(await foldOverviewCounts()).toBeGreaterThan(0);
    const perGroup = await db.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM outcome_counts
      GROUP BY occurred_hour, received_day, delivery, category, read_only, unresolved HAVING count(*) > 1`;
    expect(perGroup).toEqual([]);
    await check(unresolved);

    // Received long ago (rows move to an old partition, or the default one), then purged: the
    // batches delete through the partitions, and a partition wholly past the cutoff is dropped.
    const gone = new Set<string>();
    const old = written.filter((w) => w.delivery === 'rejected' && w.offset >= -DAY);
    await db.$executeRaw`UPDATE outcome_records SET received_at = now() - interval '200 days' WHERE id = ANY(${old.map((w) => w.id)}::uuid[])`;
    await check(unresolved, gone);
    const boundary = written.filter((w) => w.delivery === 'never_sent' && w.offset >= -DAY);
    await db.$executeRaw`UPDATE outcome_records SET received_at = now() - interval '91 days' WHERE id = ANY(${boundary.map((w) => w.id)}::uuid[])`;
    await check(unresolved, gone);
    await db.$executeRaw`SELECT outcome_records_ensure_partitions(now() - interval '210 days', now(), 'month')`;
    await check(unresolved, gone);
    const report = await purgeExpiredOutcomes({ actor: 'test' });
    expect(report).toMatchObject({ ran: true });
    if (report.ran) expect(report.partitionsDropped).toBeGreaterThan(0);
    for (const w of [...old, ...boundary]) gone.add(w.id);
    expect(await db.outcomeRecord.count({ where: { id: { in: [...gone] } } })).toBe(0);
    await check(unresolved, gone);
    await foldOverviewCounts();
    await check(unresolved, gone);

    // A delete through the parent (not the purge's way) is counted too.
    const deleted = written.filter((w) => w.delivery === 'completed' && w.offset === -90 * MIN);
    await db.$executeRaw`DELETE FROM outcome_records WHERE id = ANY(${deleted.map((w) => w.id)}::uuid[])`;
    for (const w of deleted) gone.add(w.id);
    await check(unresolved, gone);
  });
});
