// `npm run bench:scale`: costs that must not grow with the outcome log (issue 15). Two fresh
// databases on the same server (bench/lib/setup.ts, dropped afterwards), one of SMALL and one of
// LARGE records, outcome_records over 12 monthly partitions in each:
//   - incident look-up (lib/server/outcomes/sql.ts selectIncidentOutcomes) and the outcome
//     list's first page with filters (lib/server/data/outcomes listOutcomes: organization and
//     delivery), p95 at SMALL and at LARGE records: LARGE ≤ 1.2× SMALL;
//   - ingest throughput (the real insert statement, trigger included, batches of 100 in a
//     transaction) at LARGE ≥ 0.9× at SMALL;
//   - purge of one month past the limit (lib/server/retention/retention purgeExpiredOutcomes) holding
//     PURGE_SMALL and PURGE_LARGE rows, in the large database: ratio ≤ 1.5×; then, timed apart and
//     without a target, the clean-up the hourly routine runs after it (cleanUpPurged): the month's
//     files dropped, beside what freeing a file of that size costs this filesystem, and its
//     records' event-id claims;
//   - disk used per million records (every partition, indexes and TOAST included).
// The two sizes are measured in turns, in the same minutes (measureInTurns; each database's side
// in a worker process, bench/lib/scale-worker.ts), after each database's records and kept counts
// are vacuumed, its tables and indexes read into the page cache (warm) and held there (mapped by a
// helper: hold), a checkpoint, and an untimed pass of its statements. It prints what the phase
// still read from disk, what it wrote, and how much page cache the kernel freed meanwhile, under
// memory pressure or by a DAMON pageout scheme (bench/lib/io.ts), and the same from the warm on.
// Every organization has both deliveries (i % 10 and i % 7 independent), so each filter matches.
// Rows are generated in SQL (INSERT … SELECT generate_series), each chunk in order of receipt as
// ingestion writes them, the uniqueness trigger off while loading (event ids are unique by
// construction); the event-id claims it would have made are written by the same statement. Prints PASS/MISS; exits non-zero on errors only.
//   BENCH_SCALE_SMALL (2000000)  BENCH_SCALE_LARGE (20000000)
//   BENCH_SCALE_PURGE_SMALL (1000000)  BENCH_SCALE_PURGE_LARGE (10000000)
//   BENCH_SCALE_SAMPLES (1000 per size, in 10 rounds)  BENCH_SCALE_INGEST_BATCHES (500 per size, in 6
//   rounds: the median round's rate)
//   BENCH_SCALE_QUIET_CORES (off): before each measured phase, wait (up to 30 min) until the
//   machine has had at most this many cores busy over 5 s, so other work may run while it loads;
//   BENCH_PAUSE_FILE (off): a file that exists while a phase is measured (from the wait to its end),
//   for other work on the machine to hold off meanwhile
import {
  closeSync,
  existsSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fork } from 'node:child_process';
import { once } from 'node:events';
import type pg from 'pg';
import { applyMigrations } from '../scripts/lib/migrations';
import { waitForQuiet } from './lib/cpu';
import { type Held, holdPages } from './lib/hold-pages';
import { describeIo, ioMeter } from './lib/io';
import { envNumber, int, load1, log, machine, ms, runMain, stats, table, verdict } from './lib/report';
import type { WorkerReply, WorkerRequest } from './lib/scale-worker';
import { benchDatabase, cleanup, connect, onCleanup } from './lib/setup';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SMALL = envNumber('BENCH_SCALE_SMALL', 2_000_000);
const LARGE = envNumber('BENCH_SCALE_LARGE', 20_000_000);
const PURGE_SMALL = envNumber('BENCH_SCALE_PURGE_SMALL', 1_000_000);
const PURGE_LARGE = envNumber('BENCH_SCALE_PURGE_LARGE', 10_000_000);
const SAMPLES = envNumber('BENCH_SCALE_SAMPLES', 1000);
const INGEST_BATCHES = envNumber('BENCH_SCALE_INGEST_BATCHES', 500);
const LOOKUP_ROUNDS = 10;
const INGEST_ROUNDS = 6;
const QUIET_CORES = process.env.BENCH_SCALE_QUIET_CORES ? Number(process.env.BENCH_SCALE_QUIET_CORES) : NaN;
if (process.env.BENCH_SCALE_QUIET_CORES && !(QUIET_CORES > 0))
  throw new Error('BENCH_SCALE_QUIET_CORES must be a positive number of cores');
const KEY = '00000000-0000-4000-8000-000000000001';
const CHUNK = 1_000_000;
const MONTHS = 12;

/** Inserts rows [from, to) received in [start, start + span), spread evenly, 4 records per request. */
async function load(c: pg.Client, from: number, to: number, start: Date, spanSeconds: number, prefix: string) {
  await c.query('ALTER TABLE outcome_records DISABLE TRIGGER outcome_records_event_unique');
  for (let a = from; a < to; a += CHUNK) {
    const b = Math.min(to, a + CHUNK);
    const t0 = Date.now();
    await c.query(
      `WITH loaded AS (
       INSERT INTO outcome_records (api_key_id, event_id, occurred_at, request_ref, organization, principal, server,
         tool_name, observed, boundary, delivery, category, retry, read_only, what_happened, next_step,
         classifier_version, annotations_trusted, content_hash, received_at, summary, duration_ms)
       SELECT $1::uuid, $5 || i, t - interval '1 second', $5 || 'req-' || (i / 4), 'org-' || (i % 10), 'user_' || (i % 1000),
         'mcp-' || (i % 20), 'tool_' || (i % 50), '{"sent":true,"httpStatus":200}'::jsonb, 'none',
         (CASE WHEN i % 7 = 0 THEN 'rejected' ELSE 'completed' END)::outcome_delivery,
         (CASE WHEN i % 7 = 0 THEN 'forbidden' ELSE 'ok' END)::outcome_category, 'no', true,
         'The tool answered.', 'Nothing to do.', 1, true, md5(i::text), t, 'Looked up order ' || i, 40 + i % 200
       FROM generate_series($2::bigint, $3::bigint - 1) i,
         LATERAL (SELECT $4::timestamptz + ((i * 7919) % $6::bigint) * interval '1 second' AS t) x
       ORDER BY t
       RETURNING api_key_id, event_id, organization, id, received_at)
       INSERT INTO outcome_event_ids (api_key_id, event_id, organization, record_id, received_at)
       SELECT * FROM loaded ORDER BY received_at`,
      [KEY, a, b, start, prefix, spanSeconds],
    );
    log(`  loaded ${int(b)} (${int((b - a) / ((Date.now() - t0) / 1000))} rows/s, load ${load1()})`);
  }
  await c.query('ALTER TABLE outcome_records ENABLE TRIGGER outcome_records_event_unique');
  // The kept counts' trigger rows folded, as the console's minute job does (lib/server/outcomes/stats-job.ts):
  // a month past the limit has long been folded when the purge takes it out.
  const t0 = Date.now();
  await c.query('SELECT outcome_counts_fold()');
  log(`  counts folded in ${int(Date.now() - t0)} ms`);
}

/**
 * `measured` run on a quiet machine where asked: BENCH_PAUSE_FILE exists meanwhile, and with
 * BENCH_SCALE_QUIET_CORES it first waits for the machine to go quiet, and says how long it waited.
 */
async function quietly<T>(what: string, measured: () => Promise<T>): Promise<T> {
  const pause = process.env.BENCH_PAUSE_FILE;
  if (pause) writeFileSync(pause, `${process.pid} ${what}\n`);
  try {
    if (!Number.isNaN(QUIET_CORES)) {
      const q = await waitForQuiet(QUIET_CORES);
      log(
        `${what}: ${q.quiet ? 'quiet' : 'NOT quiet'} after ${(q.waitedMs / 1000).toFixed(0)} s (${q.cores.toFixed(2)} cores busy over 5 s; limit ${QUIET_CORES})`,
      );
    }
    return await measured();
  } finally {
    if (pause) rmSync(pause, { force: true });
  }
}

/** Milliseconds to free a file of `bytes` (written and synced first), as a drop's commit frees a table's files. */
function freeFileCost(bytes: number): number {
  const dir = path.join(root, '.bench-data');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'free-floor.bin');
  const fd = openSync(file, 'w');
  try {
    const chunk = Buffer.alloc(8 * 2 ** 20, 1);
    for (let written = 0; written < bytes; written += chunk.length) writeSync(fd, chunk);
    fsyncSync(fd);
    const t0 = performance.now();
    ftruncateSync(fd, 0);
    fsyncSync(fd);
    return performance.now() - t0;
  } finally {
    closeSync(fd);
    rmSync(file, { force: true });
  }
}

/** The records' partitions, the event-id claims and all their indexes: what the measured statements read. */
const MEASURED_RELATIONS = `
  WITH tables AS (
    SELECT relid FROM pg_partition_tree('outcome_records') WHERE isleaf
    UNION ALL SELECT 'outcome_event_ids'::regclass)
  SELECT relid AS oid FROM tables
  UNION ALL SELECT indexrelid FROM pg_index WHERE indrelid IN (SELECT relid FROM tables)`;

/**
 * Reads the measured relations into the OS page cache (pg_prewarm 'read'), as a console that has
 * been serving them holds them: loading pushes them out (its WAL passes through the same cache)
 * and the vacuum reads no index of an insert-only table, so without it the large phase's look-ups
 * wait on the disk and the small one's do not. What each measured phase still read from disk is
 * printed with it.
 */
async function warm(c: pg.Client): Promise<void> {
  const t0 = Date.now();
  await c.query('CREATE EXTENSION IF NOT EXISTS pg_prewarm');
  const { rows } = await c.query<{ blocks: string }>(
    `SELECT sum(pg_prewarm(oid, 'read'))::bigint AS blocks FROM (${MEASURED_RELATIONS}) r`,
  );
  const gib = (Number(rows[0].blocks) * 8192) / 2 ** 30;
  log(`  warmed ${gib.toFixed(2)} GiB of tables and indexes in ${int((Date.now() - t0) / 1000)} s`);
}

/**
 * Then keeps them there for the phase: their files (every 1 GiB segment) held mapped by a helper
 * (bench/lib/hold-pages.ts says why). Nothing is held where the files are not on this machine,
 * and the log says so.
 */
async function hold(c: pg.Client): Promise<Held | null> {
  const { rows } = await c.query<{ dir: string; file: string }>(
    `SELECT current_setting('data_directory') AS dir, pg_relation_filepath(oid) AS file FROM (${MEASURED_RELATIONS}) r`,
  );
  const files: string[] = [];
  for (const r of rows) {
    const base = path.join(r.dir, r.file);
    files.push(base);
    for (let segment = 1; existsSync(`${base}.${segment}`); segment++) files.push(`${base}.${segment}`);
  }
  try {
    const held = await holdPages(files);
    if (held.files === 0) {
      await held.release();
      log('  NOT held in memory: the database files are not on this machine');
      return null;
    }
    log(`  held ${(held.bytes / 2 ** 30).toFixed(2)} GiB of ${held.files} files mapped for the phase`);
    return held;
  } catch (err) {
    log(`  NOT held in memory: ${err instanceof Error ? err.message : err}`);
    return null;
  }
}

const VACUUMED = ['outcome_records', 'outcome_counts', 'outcome_tool_counts'];

/**
 * VACUUM ANALYZE of the records and the kept counts (the fold replaces the trigger rows of the
 * load, one per hour, tool and chunk, with one row each: the rest stays dead until vacuum); says
 * how many dead rows it cleared.
 */
async function vacuumAll(c: pg.Client): Promise<void> {
  const dead = async () => {
    // The statistics of this session's own writes are flushed to the shared counters first.
    await c.query('SELECT pg_stat_force_next_flush()');
    const { rows } = await c.query<{ relname: string; dead: string }>(
      `SELECT relname, n_dead_tup AS dead FROM pg_stat_user_tables WHERE relname = ANY($1) ORDER BY relname`,
      [VACUUMED],
    );
    return rows.map((r) => `${r.relname} ${int(Number(r.dead))}`).join(', ');
  };
  const before = await dead();
  const t0 = Date.now();
  await c.query(`VACUUM ANALYZE ${VACUUMED.join(', ')}`);
  log(`  vacuumed in ${int((Date.now() - t0) / 1000)} s; dead rows before: ${before}`);
}

const monthStart = (d: Date, add: number) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + add, 1));

type Phase = { incident: number; list: number; ingest: number; diskPerM: number };
type Side = { label: 'small' | 'large'; n: number; c: pg.Client; url: string };
type Worker = { ask: <R extends WorkerReply>(req: WorkerRequest) => Promise<R>; stop: () => Promise<void> };

/** A bench/lib/scale-worker.ts process on the database at `url`, answering one request at a time. */
async function startWorker(url: string): Promise<Worker> {
  const child = fork(path.join(root, 'bench/lib/scale-worker.ts'), [], {
    env: { ...process.env, DATABASE_URL: url, BENCH_SCALE_KEY: KEY },
    execArgv: ['--conditions=react-server', '--import', 'tsx'],
  });
  const exited = once(child, 'exit');
  onCleanup('stop a scale worker', () => void child.kill());
  await once(child, 'message'); // ready
  let pending: ((reply: WorkerReply) => void) | null = null;
  child.on('message', (reply: WorkerReply) => pending?.(reply));
  return {
    ask: <R extends WorkerReply>(req: WorkerRequest) =>
      new Promise<R>((resolve, reject) => {
        pending = (reply) => ('error' in reply ? reject(new Error(reply.error)) : resolve(reply as R));
        child.send(req);
      }),
    stop: async () => {
      child.disconnect();
      await exited;
    },
  };
}

/** Alternates which side goes first, so neither always follows the other's work. */
const turns = (round: number) => (round % 2 === 0 ? [0, 1] : [1, 0]);

/**
 * Both sizes measured in turns, in rounds, within the same minutes: whatever the machine does
 * meanwhile (another tenant, the host) falls on both. Each side's records and kept counts
 * vacuumed, warmed and held in memory; a checkpoint; an untimed pass of its statements; then the
 * look-ups in LOOKUP_ROUNDS rounds and ingest in INGEST_ROUNDS rounds, the sides alternating.
 */
async function measureInTurns(sides: Side[]): Promise<Phase[]> {
  const workers: Worker[] = [];
  const held: (Held | null)[] = [];
  try {
    // So no autovacuum of the freshly loaded rows competes with the measurements; and the kept
    // counts as the console keeps them, folded every minute and vacuumed as they churn, not holding
    // the trigger rows of the whole load dead in their indexes (which every ingest writes to).
    for (const s of sides) await vacuumAll(s.c);
    const sinceWarm = ioMeter();
    for (const s of sides) {
      await warm(s.c);
      held.push(await hold(s.c));
    }
    // The loads' and the vacuums' dirty pages written out before measuring, as before the purge
    // below; then an untimed pass of the same statements (other references, other records) reads
    // their hot index pages into the buffers a serving console keeps.
    await sides[0].c.query('CHECKPOINT');
    for (const s of sides) workers.push(await startWorker(s.url));
    for (const [i, s] of sides.entries()) {
      await workers[i].ask({ op: 'lookUps', records: s.n, samples: Math.ceil(SAMPLES / 4), seed: s.n + 1 });
      await workers[i].ask({ op: 'ingest', label: `${s.label}-warm`, batches: Math.ceil(INGEST_BATCHES / 4) });
    }
    return await quietly('measuring both sizes in turns', async () => {
      const lookupIo = ioMeter();
      const inc: number[][] = sides.map(() => []);
      const lst: number[][] = sides.map(() => []);
      const samples = Math.ceil(SAMPLES / LOOKUP_ROUNDS);
      for (let r = 0; r < LOOKUP_ROUNDS; r++) {
        for (const i of turns(r)) {
          const got = await workers[i].ask<{ inc: number[]; lst: number[] }>({
            op: 'lookUps',
            records: sides[i].n,
            samples,
            seed: sides[i].n + 1000 * (r + 2),
          });
          inc[i].push(...got.inc);
          lst[i].push(...got.lst);
        }
      }
      log(`  look-ups and list pages: ${describeIo(lookupIo())}`);
      log(`  from the warm to here: ${describeIo(sinceWarm())}`);
      // In rounds, so a single stall (a checkpoint, a collection) moves one round, not the figure.
      const ingestIo = ioMeter();
      const rates: number[][] = sides.map(() => []);
      for (let r = 0; r < INGEST_ROUNDS; r++) {
        for (const i of turns(r)) {
          const got = await workers[i].ask<{ stored: number; ms: number }>({
            op: 'ingest',
            label: `${sides[i].label}-${r}`,
            batches: Math.ceil(INGEST_BATCHES / INGEST_ROUNDS),
          });
          rates[i].push(got.stored / (got.ms / 1000));
        }
      }
      log(`  ingest: ${describeIo(ingestIo())}`);
      const phases: Phase[] = [];
      for (const [i, s] of sides.entries()) {
        const { rows: disk } = await s.c.query<{ bytes: string }>(
          // The records and their event-id claims (migration 20261201192841_outcome_event_ids).
          `SELECT (SELECT sum(pg_total_relation_size(relid)) FROM pg_partition_tree('outcome_records'))::bigint
           + pg_total_relation_size('outcome_event_ids') AS bytes`,
        );
        const phase = {
          incident: stats(inc[i]).p95,
          list: stats(lst[i]).p95,
          ingest: stats(rates[i]).p50,
          diskPerM: Number(disk[0].bytes) / 2 ** 20 / (s.n / 1e6),
        };
        log(
          `at ${int(s.n)}: incident p95 ${ms(phase.incident)}, list p95 ${ms(phase.list)}, ingest ${int(phase.ingest)} records/s ` +
            `(rounds ${rates[i].map(int).join(', ')}), ${phase.diskPerM.toFixed(0)} MiB per million (load ${load1()})`,
        );
        phases.push(phase);
      }
      return phases;
    });
  } finally {
    for (const w of workers) await w.stop();
    for (const h of held) await h?.release();
  }
}

async function main(): Promise<number> {
  // Two databases on the same server, one per size, so both are measured in the same minutes.
  const smallDb = await benchDatabase(root);
  const largeDb = await benchDatabase(root);
  for (const d of [smallDb, largeDb]) await applyMigrations(d.url, { warn: () => {} });
  // The purge runs in the large one, through the console's own code (whose database is DATABASE_URL).
  process.env.DATABASE_URL = largeDb.url;
  process.env.OUTCOME_RETENTION_DAYS = '400';
  const cs = await connect(smallDb.url);
  const c = await connect(largeDb.url);
  const { rows: ver } = await c.query('SHOW server_version');
  log(`${machine(ver[0].server_version)}; ${largeDb.where}; load ${load1()}`);
  log(
    `sizes: ${int(SMALL)} and ${int(LARGE)} records over ${MONTHS} months, in two databases; purge ${int(PURGE_SMALL)} → ${int(PURGE_LARGE)}`,
  );

  const { rows: nowRows } = await c.query<{ now: Date }>('SELECT now() AS now');
  const now = nowRows[0].now;
  const first = monthStart(now, -(MONTHS - 1));
  const end = monthStart(now, 1);
  for (const client of [cs, c])
    await client.query('SELECT outcome_records_ensure_partitions($1, $2, $3)', [first, end, 'month']);
  // Spread over the first 12 months minus the last hours of the current one (received up to "now").
  const span = Math.floor((now.getTime() - first.getTime()) / 1000);

  const { purgeExpiredOutcomes } = await import('../lib/server/retention/retention');
  const { cleanUpPurged } = await import('../lib/server/retention/clean-up');

  log(`loading ${int(SMALL)} into the small database…`);
  await load(cs, 0, SMALL, first, span, 's-');
  log(`loading ${int(LARGE)} into the large database…`);
  await load(c, 0, LARGE, first, span, 's-');
  const [small, large] = await measureInTurns([
    { label: 'small', n: SMALL, c: cs, url: smallDb.url },
    { label: 'large', n: LARGE, c, url: largeDb.url },
  ]);

  // Purge: a month 24 months back (past 400 days) holding PURGE_* rows, dropped whole.
  const purgeMonth = monthStart(now, -24);
  const purge = async (n: number): Promise<{ took: number; drop: number; sweep: number; floor: number }> => {
    await c.query('SELECT outcome_records_ensure_partitions($1, $2, $3)', [purgeMonth, monthStart(now, -23), 'month']);
    log(`loading ${int(n)} into one old month…`);
    await load(c, 0, n, purgeMonth, 27 * 86_400, `p${n}-`);
    // A month past the limit has long been vacuumed: no autovacuum of fresh rows holding the drop up.
    // So have the kept counts, whose fold leaves the rows it replaced dead until vacuum (the
    // purge's forget of the month would otherwise walk their index entries: 56 → 128 ms at 1M → 10M).
    await vacuumAll(c);
    const { rows: size } = await c.query<{ bytes: string }>(
      `SELECT pg_total_relation_size(name::regclass) AS bytes FROM outcome_records_partitions() WHERE lower_bound = $1`,
      [purgeMonth],
    );
    const bytes = Number(size[0].bytes);
    await c.query('CHECKPOINT');
    return quietly(`purging ${int(n)}`, async () => {
      const t0 = performance.now();
      const r = await purgeExpiredOutcomes({ actor: 'cli' });
      const took = performance.now() - t0;
      if (!r.ran || r.partitionsDropped !== 1)
        throw new Error(`the purge did not take the month out: ${JSON.stringify(r)}`);
      log(`purge of a month of ${int(n)}: ${ms(took)} (deleted ${int(r.deleted)}, load ${load1()})`);
      // Then, apart (the hourly routine runs it after the purge): the month's files freed and its
      // records' event-id claims deleted, the steps whose work follows the rows.
      const u = await cleanUpPurged();
      if (!u.ran || u.tablesDropped !== 1 || u.claimsSwept !== n)
        throw new Error(`the clean-up did not finish the month: ${JSON.stringify(u)}`);
      // The filesystem's own cost of freeing that many bytes (a file of the month's size, on the
      // disk of .bench-data: the database's own when it runs on this machine).
      const floor = freeFileCost(bytes);
      log(
        `clean-up: drop of its ${(bytes / 2 ** 30).toFixed(2)} GiB ${ms(u.dropMs)} (a file that size freed: ${ms(floor)}), ` +
          `${int(u.claimsSwept)} claims ${ms(u.sweepMs)} (${((u.sweepMs * 1000) / n).toFixed(2)} µs each), load ${load1()}`,
      );
      return { took, drop: u.dropMs, sweep: u.sweepMs, floor };
    });
  };
  const purgeSmall = await purge(PURGE_SMALL);
  const purgeLarge = await purge(PURGE_LARGE);

  const ratio = (a: number, b: number) => a / b;
  const checks = [
    [
      'incident look-up p95',
      ms(small.incident),
      ms(large.incident),
      `${ratio(large.incident, small.incident).toFixed(2)}×`,
      '≤ 1.2×',
      verdict(large.incident <= 1.2 * small.incident),
    ],
    [
      'outcome list first page p95',
      ms(small.list),
      ms(large.list),
      `${ratio(large.list, small.list).toFixed(2)}×`,
      '≤ 1.2×',
      verdict(large.list <= 1.2 * small.list),
    ],
    [
      'ingest records/s',
      int(small.ingest),
      int(large.ingest),
      `${ratio(large.ingest, small.ingest).toFixed(2)}×`,
      '≥ 0.9×',
      verdict(large.ingest >= 0.9 * small.ingest),
    ],
    [
      'purge of a month',
      ms(purgeSmall.took),
      ms(purgeLarge.took),
      `${ratio(purgeLarge.took, purgeSmall.took).toFixed(2)}×`,
      '≤ 1.5×',
      verdict(purgeLarge.took <= 1.5 * purgeSmall.took),
    ],
    [
      '  then, apart: drop of its files',
      ms(purgeSmall.drop),
      ms(purgeLarge.drop),
      `${ratio(purgeLarge.drop, purgeSmall.drop).toFixed(2)}×`,
      `a file that size: ${ms(purgeSmall.floor)} → ${ms(purgeLarge.floor)}`,
      '',
    ],
    [
      '  then, apart: delete of its claims',
      ms(purgeSmall.sweep),
      ms(purgeLarge.sweep),
      `${ratio(purgeLarge.sweep, purgeSmall.sweep).toFixed(2)}×`,
      'follows the rows',
      '',
    ],
    ['disk MiB per million records', small.diskPerM.toFixed(0), large.diskPerM.toFixed(0), '', '', ''],
  ];
  console.log(table([['', 'small', 'large', 'ratio', 'target', ''], ...checks]));
  log(
    `small = ${int(SMALL)} records (purge ${int(PURGE_SMALL)}), large = ${int(LARGE)} (purge ${int(PURGE_LARGE)}); load ${load1()}`,
  );
  return 0;
}

runMain(main, cleanup);
