// `npm run bench:ingest`: how fast POST /api/v1/outcomes stores records, end to end through
// the built console, against what the database alone can take. On a fresh database (see
// bench/lib/setup.ts), dropped afterwards. Reports; exits non-zero only on real errors
// (set-up failures, non-200 answers), never on a missed target.
//   BENCH_SECONDS (20)  BENCH_SINGLE_SECONDS (10)  BENCH_CONCURRENCY (4)  BENCH_BATCH (500)
//   BENCH_CPU_PROFILE=<dir>: the console writes a V8 .cpuprofile there (open in Chrome DevTools)
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { ensureBuild } from '../scripts/lib/build';
import { applyMigrations } from '../scripts/lib/migrations';
import { DEMO_TRUSTED_SERVERS } from '../scripts/demo-outcomes';
import { CEILING_METHOD, runCeiling } from './lib/ceiling';
import { percentile, runLoad, type LoadResult } from './lib/load';
import { bodies, recordPool } from './lib/records';
import { benchDatabase, cleanup, createApiKey, startApp } from './lib/setup';
import { envNumber, int, load1, log, machine, ms, runMain, table, verdict } from './lib/report';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SECONDS = envNumber('BENCH_SECONDS', 20);
const SINGLE_SECONDS = envNumber('BENCH_SINGLE_SECONDS', 10);
const C = Math.floor(envNumber('BENCH_CONCURRENCY', 4));
const BATCH = Math.floor(envNumber('BENCH_BATCH', 500));
const TARGET = { recordsPerSecond: 10_000, ofCeiling: 0.3, singleP99Ms: 25 };

function describeErrors(name: string, r: LoadResult): void {
  if (r.errors) console.error(`[bench] ${name}: ${r.errors} failed request(s); first: ${r.firstError}`);
}

async function main(): Promise<number> {
  const startLoad = load1();
  const db = await benchDatabase(root);
  log(`database: ${db.where}`);
  await applyMigrations(db.url, { warn: () => {} });
  const facts = new pg.Client({ connectionString: db.url });
  await facts.connect();
  const pgVersion = (await facts.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0].v;
  // As the demo seed does: annotations from these servers count (the trust lookup runs either way).
  await facts.query(`INSERT INTO trusted_servers (name, trusted_by) SELECT unnest($1::text[]), 'bench'`, [
    DEMO_TRUSTED_SERVERS,
  ]);
  await facts.end();

  ensureBuild(root);
  const profile = process.env.BENCH_CPU_PROFILE;
  const app = await startApp(
    root,
    { DATABASE_URL: db.url, AUTH_SECRET: randomBytes(32).toString('base64url') },
    profile ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(profile)}`] : [],
  );
  log(`console: ${app.origin}`);
  const apiKey = createApiKey(root, db.url);
  const url = `${app.origin}/api/v1/outcomes`;

  const pool = recordPool();
  const batches = bodies(pool, BATCH, 16);
  const singles = bodies(pool, 1, 256);

  log('warming up…');
  const warm = [
    await runLoad({ url, apiKey, bodies: batches, concurrency: C, requestsPerClient: 3 }),
    await runLoad({ url, apiKey, bodies: singles, concurrency: C, requestsPerClient: 50 }),
  ];
  warm.forEach((w) => describeErrors('warm-up', w));

  log(`HTTP batches of ${BATCH}, ${C} clients, ${SECONDS} s (load ${load1()})…`);
  const http = await runLoad({ url, apiKey, bodies: batches, concurrency: C, seconds: SECONDS });
  describeErrors('batches', http);
  log(`HTTP single records, ${C} clients, ${SINGLE_SECONDS} s (load ${load1()})…`);
  const single = await runLoad({ url, apiKey, bodies: singles, concurrency: C, seconds: SINGLE_SECONDS });
  describeErrors('single records', single);
  await app.stop();

  const rps = http.accepted / http.seconds;
  const ceilingRows = Math.max(http.accepted, 100_000);
  log(`ceiling: ${int(ceilingRows)} rows by ${CEILING_METHOD} (load ${load1()})…`);
  const ceiling = await runCeiling(db.url, pool, ceilingRows);
  const ceilingRps = ceiling.rows / ceiling.seconds;
  const ratio = rps / ceilingRps;
  const singleP99 = percentile(single.latenciesMs, 99);

  console.log(`
Countersign ingestion benchmark
  machine   ${machine(pgVersion)}
  database  ${db.where}
  load avg  ${startLoad} at start, ${load1()} at end (1 min)

${table([
  ['phase', 'throughput', 'requests', 'p50', 'p95', 'p99', 'errors'],
  [
    `HTTP batches of ${BATCH}, C=${C}, ${http.seconds.toFixed(1)} s`,
    `${int(rps)} records/s`,
    `${int(http.requests)} (${int(http.accepted)} rec)`,
    ms(percentile(http.latenciesMs, 50)),
    ms(percentile(http.latenciesMs, 95)),
    ms(percentile(http.latenciesMs, 99)),
    String(http.errors),
  ],
  [
    `HTTP single records, C=${C}, ${single.seconds.toFixed(1)} s`,
    `${int(single.requests / single.seconds)} req/s`,
    int(single.requests),
    ms(percentile(single.latenciesMs, 50)),
    ms(percentile(single.latenciesMs, 95)),
    ms(singleP99),
    String(single.errors),
  ],
  [
    `ceiling: ${CEILING_METHOD}, ${ceiling.seconds.toFixed(1)} s`,
    `${int(ceilingRps)} rows/s`,
    `${int(ceiling.rows)} rows`,
    '',
    '',
    '',
    '',
  ],
])}
  The ceiling: the same rows loaded with COPY into the same table, same database, same run.

${table([
  ['target', 'measured', ''],
  [`HTTP ≥ ${int(TARGET.recordsPerSecond)} records/s`, int(rps), verdict(rps >= TARGET.recordsPerSecond)],
  [`HTTP ÷ ceiling ≥ ${TARGET.ofCeiling}`, ratio.toFixed(2), verdict(ratio >= TARGET.ofCeiling)],
  [`single-record p99 ≤ ${TARGET.singleP99Ms} ms`, ms(singleP99), verdict(singleP99 <= TARGET.singleP99Ms)],
])}`);
  const failed = [...warm, http, single].reduce((sum, r) => sum + r.errors, 0);
  if (failed) console.error(`\n[bench] ${failed} request(s) failed: the figures above are not trustworthy.`);
  return failed ? 1 : 0;
}

runMain(main, cleanup);
