// `npm run bench:ingest [-- --short]`: how fast the console stores outcome records, native API and
// OTLP, end to end through the built console on a fresh database, with wrk as the client:
//   - batches of 500 on POST /api/v1/outcomes, against COPY of the same rows into the same table
//     (bench/lib/copy.ts), the most the database alone takes;
//   - single records, at 4 connections (latency) and at 64 (throughput), each against the
//     framework's bare route at the same connections (GET /api/v1/me without a credential: routing
//     and a 401, no database), and every acknowledged record checked stored;
//   - OTLP protobuf spans on POST /api/v1/otlp/v1/traces against the same records as native JSON,
//     in alternating halves so the table's growth falls on both alike.
// Exits non-zero on errors (failed requests, lost records), never on a missed target.
import type { Outcome } from '@/lib/outcomes/schemas';
import { jsonBodies, otlpBodies, recordPool, spanPool } from './lib/bodies';
import { copyCeiling } from './lib/copy';
import { int, log, readFlags, report, type Figure } from './lib/report';
import { createApiKey, freshDatabase, newSecret, runMain, startConsole } from './lib/setup';
import { ensureWrk, wrk, type WrkRun } from './lib/wrk';

const flags = readFlags({
  seconds: [20, 5],
  'single-seconds': [10, 4],
  connections: [4, 4],
  batch: [500, 500],
  'load-connections': [64, 64],
  'otlp-seconds': [16, 6],
});
const C = flags.connections;
const LOAD_C = flags['load-connections'];

runMain(async () => {
  ensureWrk();
  const db = await freshDatabase(flags.databaseUrl);
  const apiKey = createApiKey(db, ['outcomes:write'], 'bench-ingest');
  const app = await startConsole({ DATABASE_URL: db.url, AUTH_SECRET: newSecret() });
  const problems: string[] = [];
  const stored = async () =>
    (await db.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM outcome_records')).rows[0].n;

  let phase = 0;
  type Posted = WrkRun & { acked: number; records: number; lost: number };
  /** wrk posting `bodies` of `size` records each; what it acknowledged, checked against the table. */
  const post = async (
    what: string,
    bodies: Buffer[],
    size: number,
    connections: number,
    seconds: number,
    otlp = false,
  ) => {
    const before = await stored();
    const r = await wrk({
      url: `${app.origin}/api/v1/${otlp ? 'otlp/v1/traces' : 'outcomes'}`,
      connections,
      seconds,
      method: 'POST',
      headers: {
        authorization: `Bearer ${apiKey}`,
        'content-type': otlp ? 'application/x-protobuf' : 'application/json',
      },
      bodies,
      prefix: (phase++).toString(36).padStart(2, '0'),
    });
    const acked = (r.requests - r.non2xx) * size;
    const lost = Math.max(0, acked - ((await stored()) - before)); // more stored is fine: answers cut off at the end
    if (r.non2xx || r.socketErrors || r.timeouts || lost)
      problems.push(
        `${what}: ${r.non2xx} non-2xx, ${r.socketErrors} socket errors, ${r.timeouts} timeouts, ${lost} lost`,
      );
    log(`${what}: ${int(acked / r.seconds)} records/s, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms`);
    return { ...r, acked, records: acked / r.seconds, lost } satisfies Posted;
  };
  /** The framework's bare route: no credential, a 401 (routing and the refusal only). */
  const bare = (connections: number, seconds: number) => wrk({ url: `${app.origin}/api/v1/me`, connections, seconds });

  const pool = recordPool();
  const batches = jsonBodies(pool, flags.batch, 16);
  const singles = jsonBodies(pool, 1, 256);
  log('warming up…');
  await post('warm-up batches', batches, flags.batch, C, 3);
  await post('warm-up singles', singles, 1, C, 3);
  await bare(C, 2);

  const batch = await post(`batches of ${flags.batch}, ${C} connections`, batches, flags.batch, C, flags.seconds);
  const single = await post(`single records, ${C} connections`, singles, 1, C, flags['single-seconds']);
  const bareC = await bare(C, flags['single-seconds']);
  const loaded = await post(`single records, ${LOAD_C} connections`, singles, 1, LOAD_C, flags.seconds);
  const bareLoad = await bare(LOAD_C, flags.seconds);

  // OTLP against native JSON: the same records (what a client span can say), batches of 512.
  const spans: Outcome[] = spanPool();
  const native = jsonBodies(spans, 512, 8);
  const otlp = otlpBodies(spans, 512, 8);
  const halves: Record<'native' | 'otlp', Posted[]> = { native: [], otlp: [] };
  for (let half = 0; half < 2; half++) {
    const s = flags['otlp-seconds'] / 2;
    halves.native.push(await post(`native JSON batches of 512, ${C} connections`, native, 512, C, s));
    halves.otlp.push(await post(`OTLP protobuf batches of 512, ${C} connections`, otlp, 512, C, s, true));
  }
  await app.stop();
  const rate = (runs: Posted[]) => runs.reduce((a, r) => a + r.acked, 0) / runs.reduce((a, r) => a + r.seconds, 0);

  const rows = Math.max(batch.acked, 20_000);
  log(`ceiling: COPY of ${int(rows)} rows…`);
  const copy = await copyCeiling(db.url, pool, rows);

  const lost = [batch, single, loaded, ...halves.native, ...halves.otlp].reduce((a, r) => a + r.lost, 0);
  const ms = (v: number) => ({ value: v, unit: 'ms' });
  const figures: Figure[] = [
    {
      name: `batches of ${flags.batch}, ${C} connections`,
      value: batch.records,
      unit: 'records/s',
      target: { op: '≥', value: 10_000, unit: 'records/s' },
    },
    {
      name: 'batches ÷ COPY of the same rows',
      value: batch.records / copy,
      unit: '×',
      ceiling: { name: 'COPY', value: copy, unit: 'rows/s' },
      target: { op: '≥', value: 0.3, unit: '×' },
    },
    {
      name: `single records, ${C} connections: p99`,
      ...ms(single.p99),
      ceiling: { name: 'bare route p99', ...ms(bareC.p99) },
      target: { op: '≤', value: 25, unit: 'ms' },
    },
    {
      name: `single records, ${LOAD_C} connections`,
      value: loaded.records,
      unit: 'records/s',
      ceiling: { name: 'bare route', value: bareLoad.rate, unit: 'req/s' },
      target: { op: '≥', value: 2_000, unit: 'records/s' },
    },
    {
      name: `single records, ${LOAD_C} connections: p99`,
      ...ms(loaded.p99),
      ceiling: { name: 'bare route p99', ...ms(bareLoad.p99) },
      target: { op: '≤', value: 50, unit: 'ms' },
    },
    { name: 'acknowledged records not stored', value: lost, unit: '', target: { op: '≤', value: 0, unit: '' } },
    {
      name: 'OTLP protobuf ÷ native JSON, batches of 512',
      value: rate(halves.otlp) / rate(halves.native),
      unit: '×',
      ceiling: { name: 'native', value: rate(halves.native), unit: 'records/s' },
      target: { op: '≥', value: 0.8, unit: '×' },
    },
  ];
  report('ingest', db.pgVersion, { ...flags, client: 'wrk, 1 thread' }, figures);
  for (const problem of problems) console.error(`[bench] ${problem}`);
  return problems.length ? 1 : 0;
});
