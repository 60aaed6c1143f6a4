// `npm run bench:load`: the console under a steady stream of agent traffic while people use it.
// On a fresh database (bench/lib/setup.ts, dropped afterwards) against the built console:
//  - ingestion: single-record POST /api/v1/outcomes at a FIXED ARRIVAL RATE (open loop: a request
//    is sent when it is due, whether or not earlier ones were answered, so a slow server shows up
//    as latency and backlog rather than as a politely lower rate). Latency is measured from when
//    the request was due, so time spent waiting behind a backlog counts;
//  - people at the same time: a signed-in support user loading the overview, the outcome list, a
//    filtered list, a record and an incident page, one after another, without pause;
//  - at the end, the check that matters: every record whose post was acknowledged (200) is stored
//    exactly once, and nothing else was stored;
//  - first, the ceilings it runs against, closed loop with BENCH_LOAD_SOCKETS/8 clients for 5 s
//    each: the console's floor (GET /api/v1/me without a credential: routing and a 401, no
//    database) and the most single-record posts a second it can take.
// Reports; exits non-zero only on set-up failures or when an acknowledged record is missing.
// A console that cannot keep up would build an endless backlog: once BENCH_LOAD_BACKLOG posts are
// waiting, posts that fall due are not sent but counted as shed (an error), so the run ends on time.
//   BENCH_LOAD_RATE (2000 records/s)  BENCH_LOAD_SECONDS (60)  BENCH_LOAD_SOCKETS (128)
//   BENCH_LOAD_BACKLOG (2 s of the rate)
//   BENCH_CPU_PROFILE=<dir>: the console writes a V8 .cpuprofile there (bench/lib/setup.ts)
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuMeter, describeCpu } from './lib/cpu';
import { signIn } from './lib/http';
import { browse, closedLoop, poster } from './lib/traffic';
import { bodies, recordPool } from './lib/records';
import { envNumber, int, load1, log, machine, ms, runMain, stats, table, verdict } from './lib/report';
import { cleanup, createApiKey, createUser, setUpBench } from './lib/setup';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RATE = envNumber('BENCH_LOAD_RATE', 2_000);
const SECONDS = envNumber('BENCH_LOAD_SECONDS', 60);
const SOCKETS = envNumber('BENCH_LOAD_SOCKETS', 128);
const TARGET = { rate: 2_000, p99Ms: 50 };
const TICK_MS = 2;
const BACKLOG = envNumber('BENCH_LOAD_BACKLOG', RATE * 2);

type Ingest = {
  due: number;
  /** posts that fell due so far, sent or shed */ sent: number;
  shed: number;
  acked: string[];
  latenciesMs: number[];
  errors: number;
  statuses: Map<string, number>;
  firstError: string | null;
  maxInFlight: number;
  seconds: number;
};

/** Sends RATE posts a second for SECONDS, each when due; resolves when every answer is in. */
async function ingestAtRate(origin: string, apiKey: string): Promise<Ingest> {
  const { post, close } = poster(origin, apiKey, SOCKETS);
  const singles = bodies(recordPool(), 1, 256);
  const runId = randomBytes(3).toString('hex');
  const out: Ingest = {
    due: RATE * SECONDS,
    sent: 0,
    shed: 0,
    acked: [],
    latenciesMs: [],
    errors: 0,
    statuses: new Map(),
    firstError: null,
    maxInFlight: 0,
    seconds: 0,
  };
  let inFlight = 0;
  const pending: Promise<void>[] = [];
  const started = performance.now();

  const send = (n: number) => {
    const dueAt = started + (n * 1000) / RATE;
    const tag = `${runId}${n.toString(36)}`;
    inFlight++;
    out.maxInFlight = Math.max(out.maxInFlight, inFlight);
    pending.push(
      post(singles.next(tag))
        .then(
          (a) => {
            const key = String(a.status);
            out.statuses.set(key, (out.statuses.get(key) ?? 0) + 1);
            if (a.status === 200 && a.text.startsWith('{"accepted":1')) {
              out.acked.push(`evt_${tag}_0`);
              out.latenciesMs.push(performance.now() - dueAt);
            } else {
              out.errors++;
              out.firstError ??= `HTTP ${a.status}: ${a.text.slice(0, 400)}`;
            }
          },
          (err: Error) => {
            out.statuses.set('network', (out.statuses.get('network') ?? 0) + 1);
            out.errors++;
            out.firstError ??= `request failed: ${err.message}`;
          },
        )
        .finally(() => inFlight--),
    );
  };

  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const elapsed = performance.now() - started;
      const due = Math.min(out.due, Math.floor((elapsed / 1000) * RATE));
      while (out.sent < due) {
        if (inFlight >= BACKLOG) out.shed++;
        else send(out.sent);
        out.sent++;
      }
      if (out.sent >= out.due) {
        clearInterval(timer);
        resolve();
      }
    }, TICK_MS);
  });
  await Promise.all(pending);
  out.seconds = (performance.now() - started) / 1000;
  close();
  return out;
}

async function main(): Promise<number> {
  const person = { email: 'support@bench.local', role: 'support' as const, password: randomBytes(12).toString('hex') };
  const {
    startLoad,
    db,
    sql,
    pgVersion,
    app,
    prepared: apiKey,
  } = await setUpBench(root, ({ db: { url } }) => {
    const key = createApiKey(root, url);
    createUser(root, url, person);
    return key;
  });
  const cookie = await signIn(app.origin, person.email, person.password);

  log(`warming up (${int(Math.ceil(RATE / 2))} posts one at a time while a person browses)…`);
  const warmStop = { done: false };
  const warmPeople = browse(app.origin, cookie, warmStop);
  const { post, close } = poster(app.origin, apiKey, SOCKETS);
  const warmBodies = bodies(recordPool(), 1, 64);
  for (let i = 0; i < Math.ceil(RATE / 2); i++)
    await post(warmBodies.next(`warm${i.toString(36)}${randomBytes(2).toString('hex')}`));
  close();
  warmStop.done = true;
  await warmPeople;
  log('ceilings: the console at full tilt, closed loop…');
  const clients = Math.max(4, Math.floor(SOCKETS / 8));
  const probe = poster(app.origin, apiKey, SOCKETS);
  const floorCpu = cpuMeter(app.pid);
  const floor = await closedLoop(clients, 5, async () => (await probe.get('/api/v1/me')) === 401);
  const floorShare = floorCpu?.stop();
  const capacityBodies = bodies(recordPool(), 1, 64);
  const capacityRun = randomBytes(3).toString('hex');
  const capacityCpu = cpuMeter(app.pid);
  const capacity = await closedLoop(
    clients,
    5,
    async (i) => (await probe.post(capacityBodies.next(`cap${capacityRun}${i.toString(36)}`))).status === 200,
  );
  const capacityShare = capacityCpu?.stop();
  probe.close();
  const before = Number((await sql.query<{ n: string }>('SELECT count(*) AS n FROM outcome_records')).rows[0].n);

  log(`ingesting ${int(RATE)} single-record posts/s for ${SECONDS} s while a person browses (load ${load1()})…`);
  const cpu = cpuMeter(app.pid);
  const stop = { done: false };
  const people = browse(app.origin, cookie, stop);
  const ingest = await ingestAtRate(app.origin, apiKey);
  stop.done = true;
  const browsing = await people;
  const share = cpu?.stop();

  // Every acknowledged record exactly once; nothing stored beyond what was sent.
  const found = await sql.query<{ event_id: string; n: string }>(
    'SELECT event_id, count(*) AS n FROM outcome_records WHERE event_id = ANY($1::text[]) GROUP BY event_id',
    [ingest.acked],
  );
  const storedOnce = found.rows.filter((r) => r.n === '1').length;
  const storedTwice = found.rows.filter((r) => r.n !== '1').length;
  const missing = ingest.acked.length - found.rows.length;
  const after = Number((await sql.query<{ n: string }>('SELECT count(*) AS n FROM outcome_records')).rows[0].n);
  const extra = after - before - ingest.acked.length;
  await app.stop();

  const s = stats(ingest.latenciesMs);
  const achieved = ingest.acked.length / ingest.seconds;
  const statuses = [...ingest.statuses].map(([k, v]) => `${k}: ${int(v)}`).join(', ');
  console.log(`
Countersign load benchmark
  machine   ${machine(pgVersion)}
  database  ${db.where}
  load avg  ${startLoad} at start, ${load1()} at end (1 min)
  ${share ? describeCpu(share) : ''}

${table([
  [`ceilings (closed loop, ${clients} clients, 5 s each)`, 'rate', 'console CPU (cores)'],
  [
    'floor: GET /api/v1/me without a credential (routing + 401, no database)',
    `${int(floor.rate)} req/s`,
    floorShare ? floorShare.app.toFixed(2) : '–',
  ],
  [
    'most single-record posts the console takes',
    `${int(capacity.rate)} records/s`,
    capacityShare ? capacityShare.app.toFixed(2) : '–',
  ],
])}
  ${capacityShare ? `at capacity: ${describeCpu(capacityShare)}` : ''}

${table([
  ['ingestion (open loop, latency from when each post was due)', 'value'],
  ['offered', `${int(RATE)} posts/s × ${SECONDS} s = ${int(ingest.due)} posts`],
  ['acknowledged', `${int(ingest.acked.length)} in ${ingest.seconds.toFixed(1)} s = ${int(achieved)} records/s`],
  ['answers', statuses],
  ['shed (not sent: the backlog was full)', int(ingest.shed)],
  ['latency p50 / p95 / p99 / max', `${ms(s.p50)} / ${ms(s.p95)} / ${ms(s.p99)} / ${ms(s.max)}`],
  ['most posts in flight at once', int(ingest.maxInFlight)],
  ['errors', `${int(ingest.errors)}${ingest.firstError ? ` (first: ${ingest.firstError})` : ''}`],
])}

${table([
  ['people, at the same time', 'loads', 'p50', 'p95', 'max'],
  ...[...browsing.latencies].map(([name, values]) => {
    const p = stats(values);
    return [name, int(p.n), ms(p.p50), ms(p.p95), ms(p.max)];
  }),
  ['errors', int(browsing.errors), browsing.firstError ?? '', '', ''],
])}

${table([
  ['stored', 'count'],
  ['acknowledged and stored exactly once', int(storedOnce)],
  ['acknowledged but missing', int(missing)],
  ['acknowledged but stored more than once', int(storedTwice)],
  ['stored without an acknowledgement (answer lost or refused)', int(extra)],
])}

${table([
  ['target', 'measured', ''],
  [`≥ ${int(TARGET.rate)} records/s of single-record posts`, int(achieved), verdict(achieved >= TARGET.rate * 0.99)],
  [`p99 ≤ ${TARGET.p99Ms} ms`, ms(s.p99), verdict(s.p99 <= TARGET.p99Ms)],
  [
    'zero errors (shed posts count)',
    int(ingest.errors + ingest.shed + browsing.errors),
    verdict(ingest.errors + ingest.shed + browsing.errors === 0),
  ],
  [
    'zero loss (every acknowledged record stored once)',
    int(missing + storedTwice),
    verdict(missing + storedTwice === 0),
  ],
])}`);
  if (missing + storedTwice)
    console.error(`\n[bench] ${missing + storedTwice} acknowledged record(s) not stored exactly once.`);
  return missing + storedTwice ? 1 : 0;
}

runMain(main, cleanup);
