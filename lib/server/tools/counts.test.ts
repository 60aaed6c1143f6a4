// The tools inventory's figures read from the counts kept at every write (outcome_tool_counts,
// migration 20261202024325_tool_counts) against real PostgreSQL: the seven-day calls and
// failures, the last sighting and the latest advertisement must stay what the records say after
// resolution updates, deletes (of a pair's latest record too), the retention purge (its batch
// deletes and a month dropped whole) and folds. Two oracles, neither the code under test: the
// figures written by hand below, and the kept sums per group against a count of the records.
import { beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { db } from '../db/db';
import { foldOverviewCounts } from '../outcomes/stats';
import { purgeExpiredOutcomes } from '../retention/retention';
import { uniq } from '@/testing/factories';
import {
  HOUR,
  DAY,
  ago,
  HTTP_500,
  READ,
  SAFE_WRITE,
  setUpToolActors,
  record,
  serverOf,
  toolOf,
} from '@/testing/tools-fixtures';
import type { Observed } from '@/lib/outcomes/schemas';
import { config } from '@/lib/config';

const MIN = 60_000;
const TIMEOUT: Observed = { sent: true, clientError: 'timeout' };

beforeAll(setUpToolActors);

/** Every (server, tool, hour, receipt day): the kept sums against the records' own counts; answers the differences. */
async function mismatches() {
  return db.$queryRaw<unknown[]>`
    WITH kept AS (
      SELECT server, tool_name, occurred_hour, received_day, sum(calls)::int8 AS calls,
             sum(failures)::int8 AS failures, sum(advertised)::int8 AS advertised
      FROM outcome_tool_counts GROUP BY 1, 2, 3, 4 HAVING sum(calls) <> 0
    ), counted AS (
      SELECT server, tool_name,
             date_trunc('hour', occurred_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS occurred_hour,
             date_trunc('day', received_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS received_day,
             count(*)::int8 AS calls,
             count(*) FILTER (WHERE delivery <> 'completed' OR category <> 'ok')::int8 AS failures,
             count(*) FILTER (WHERE tool_annotations IS NOT NULL)::int8 AS advertised
      FROM outcome_records GROUP BY 1, 2, 3, 4
    )
    SELECT * FROM kept FULL JOIN counted USING (server, tool_name, occurred_hour, received_day)
    WHERE (kept.calls, kept.failures, kept.advertised) IS DISTINCT FROM (counted.calls, counted.failures, counted.advertised)`;
}

const figures = async (server: string, tool: string) => {
  const t = await toolOf(server, tool);
  return { calls7d: t.calls7d, failures7d: t.failures7d, lastSeen: t.lastSeen.toISOString(), advertised: t.advertised };
};

const inInventory = async (server: string) =>
  serverOf(server).then(
    () => true,
    () => false,
  );

describe('the tools inventory from the counts kept at every write (real PostgreSQL)', () => {
  it('counts a record older than seven days for last seen only, and the window edge to the millisecond', async () => {
    const server = uniq('edge');
    const old = ago(10 * DAY);
    await record({ server, tool: 'archive', at: old, observed: HTTP_500 });
    expect(await figures(server, 'archive')).toEqual({ calls7d: 0, failures7d: 0, lastSeen: old, advertised: null });

    // Two minutes inside and outside the window's start: inside the partial hour read from the records.
    const inside = ago(7 * DAY - 2 * MIN);
    await record(
      { server, tool: 'lookup', at: ago(7 * DAY + 2 * MIN) },
      { server, tool: 'lookup', at: inside, observed: HTTP_500 },
    );
    expect(await figures(server, 'lookup')).toEqual({ calls7d: 1, failures7d: 1, lastSeen: inside, advertised: null });
    expect(await mismatches()).toEqual([]);
  });

  it('follows a resolution update, a delete of the latest record, and a fold', async () => {
    const server = uniq('resolve');
    // Two records in one whole hour (five hours back), the later one advertising READ.
    const hour = Math.floor((Date.now() - 5 * HOUR) / HOUR) * HOUR;
    const early = new Date(hour + 5 * MIN).toISOString();
    const late = new Date(hour + 40 * MIN).toISOString();
    await record(
      { server, tool: 'refund', at: early, annotations: SAFE_WRITE },
      { server, tool: 'refund', at: late, annotations: READ, observed: TIMEOUT },
      { server, tool: 'refund', at: ago(2 * DAY), observed: HTTP_500 },
    );
    expect(await figures(server, 'refund')).toMatchObject({ calls7d: 3, failures7d: 2, lastSeen: late });
    expect((await toolOf(server, 'refund')).advertised).toMatchObject(READ);

    // The unknown turns out completed ok (a reclassification's update): one failure fewer, same calls.
    await db.$executeRaw`
      UPDATE outcome_records SET delivery = 'completed', category = 'ok'
      WHERE server = ${server} AND occurred_at = ${late}::timestamptz`;
    expect(await figures(server, 'refund')).toMatchObject({ calls7d: 3, failures7d: 1, lastSeen: late });
    expect(await mismatches()).toEqual([]);

    // Folded: the same figures.
    expect(await foldOverviewCounts()).toBeGreaterThan(0);
    const perGroup = await db.$queryRaw<unknown[]>`
      SELECT server, tool_name, occurred_hour, received_day FROM outcome_tool_counts
      GROUP BY 1, 2, 3, 4 HAVING count(*) > 1`;
    expect(perGroup).toEqual([]);
    expect(await figures(server, 'refund')).toMatchObject({ calls7d: 3, failures7d: 1, lastSeen: late });

    // The latest record goes (through the parent): last seen and the advertisement fall back to
    // the earlier record of the same hour, whose bound in the counts is now past it.
    await db.$executeRaw`DELETE FROM outcome_records WHERE server = ${server} AND occurred_at = ${late}::timestamptz`;
    const after = await figures(server, 'refund');
    expect(after).toMatchObject({ calls7d: 2, failures7d: 1, lastSeen: early });
    expect(after.advertised).toMatchObject(SAFE_WRITE);
    await foldOverviewCounts();
    expect(await figures(server, 'refund')).toEqual(after);

    // Every record of a tool gone: the tool is gone, before and after a fold.
    await db.$executeRaw`DELETE FROM outcome_records WHERE server = ${server}`;
    expect(await inInventory(server)).toBe(false);
    await foldOverviewCounts();
    expect(await inInventory(server)).toBe(false);
    expect(await mismatches()).toEqual([]);
  });

  it('stays right through the retention purge: its batch deletes and a month dropped whole', async () => {
    const server = uniq('purged');
    const gone = uniq('purged-all');
    const [h1, h2, d3] = [ago(HOUR), ago(2 * HOUR), ago(3 * DAY)];
    await record(
      { server, tool: 'get_order', at: h1, annotations: READ },
      { server, tool: 'get_order', at: h2, annotations: SAFE_WRITE, observed: HTTP_500 },
      { server, tool: 'get_order', at: d3, observed: HTTP_500 },
      { server: gone, tool: 'ping', at: ago(4 * HOUR) },
    );
    await foldOverviewCounts();
    // Received long ago: the newest one (and all of `gone`) 200 days back, in a month past the
    // limit that is dropped whole; the three-day-old one 91 days back, deleted by a batch.
    await db.$executeRaw`
      UPDATE outcome_records SET received_at = now() - interval '200 days'
      WHERE (server = ${server} AND occurred_at = ${h1}::timestamptz) OR server = ${gone}`;
    await db.$executeRaw`
      UPDATE outcome_records SET received_at = now() - interval '91 days'
      WHERE server = ${server} AND occurred_at = ${d3}::timestamptz`;
    await db.$executeRaw`SELECT outcome_records_ensure_partitions(now() - interval '210 days', now(), 'month')`;
    // Moved, not yet purged: nothing changed.
    expect(await figures(server, 'get_order')).toMatchObject({ calls7d: 3, failures7d: 2, lastSeen: h1 });
    expect(await mismatches()).toEqual([]);

    const report = await purgeExpiredOutcomes({ actor: 'test' });
    expect(report).toMatchObject({ ran: true });
    if (report.ran) expect(report.partitionsDropped).toBeGreaterThan(0);
    const left = await db.$queryRaw<{ occurred_at: Date }[]>`
      SELECT occurred_at FROM outcome_records WHERE server IN (${server}, ${gone})`;
    expect(left.map((r) => r.occurred_at.toISOString())).toEqual([h2]);

    const expected = { calls7d: 1, failures7d: 1, lastSeen: h2 };
    const after = await figures(server, 'get_order');
    expect(after).toMatchObject(expected);
    expect(after.advertised).toMatchObject(SAFE_WRITE);
    expect(await inInventory(gone)).toBe(false);
    expect(await mismatches()).toEqual([]);
    await foldOverviewCounts();
    expect(await figures(server, 'get_order')).toMatchObject(expected);
    expect(await inInventory(gone)).toBe(false);
    expect(await mismatches()).toEqual([]);
  });

  it('lets two ingest transactions of the same tool and hour write at once (no shared row to wait on)', async () => {
    const server = uniq('busy');
    const at = ago(30 * MIN);
    await record({ server, tool: 'lookup', at });
    // Copies of that record with new event ids, each in its own open transaction.
    const copy = (c: pg.Client, n: number) =>
      c.query(
        `INSERT INTO outcome_records (api_key_id, event_id, occurred_at, request_ref, organization, principal, server,
           tool_name, tool_annotations, observed, boundary, delivery, category, retry, read_only, what_happened,
           next_step, classifier_version, annotations_trusted, content_hash)
         SELECT api_key_id, event_id || '-' || $2, occurred_at, request_ref, organization, principal, server, tool_name,
           tool_annotations, observed, boundary, delivery, category, retry, read_only, what_happened, next_step,
           classifier_version, annotations_trusted, content_hash
         FROM outcome_records WHERE server = $1`,
        [server, n],
      );
    const [a, b] = [
      new pg.Client({ connectionString: config().DATABASE_URL }),
      new pg.Client({ connectionString: config().DATABASE_URL }),
    ];
    await a.connect();
    await b.connect();
    try {
      await a.query('BEGIN');
      await copy(a, 1);
      await b.query('BEGIN');
      await b.query(`SET LOCAL lock_timeout = '2s'`);
      await copy(b, 2);
      await b.query('COMMIT');
      await a.query('COMMIT');
    } finally {
      await a.end();
      await b.end();
    }
    expect(await figures(server, 'lookup')).toMatchObject({ calls7d: 3, failures7d: 0, lastSeen: at });
    expect(await mismatches()).toEqual([]);
  });
});
