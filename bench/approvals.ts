// `npm run bench:approvals`: the two approval paths that must stay fast, on a fresh database
// (bench/lib/setup.ts, dropped afterwards) against the built console.
//  (a) Redemption: approved requests with live grants are staged with SQL (bench/lib/approval-data.ts),
//      then BENCH_REDEEM_CLIENTS clients each redeem their own grants over HTTP
//      (POST /api/v1/grants/{id}/redeem) as fast as they can. A sequential run first gives the
//      uncontended service time; pg_stat_activity is sampled during the concurrent run; the
//      redemption is then traced statement by statement in this process.
//  (b) The queue: BENCH_QUEUE_PENDING pending requests; a reviewer made with the CLI signs in through
//      Auth.js over HTTP; GET /approvals (the server-rendered queue) and
//      GET /api/v1/approvals?status=pending&limit=200 are timed sequentially with that session.
// Reports; exits non-zero only on real errors (set-up failures, unexpected answers).
//   BENCH_REDEEM_GRANTS (5000)  BENCH_REDEEM_CLIENTS (50)  BENCH_REDEEM_SECONDS (60, a cap)
//   BENCH_QUEUE_PENDING (10000)  BENCH_QUEUE_REQUESTS (30)
// After the 50-client run, BURST_ROUNDS bursts of 50 simultaneous single redemptions (labelled
// as an added measure: how long one redemption takes when 50 agents act at the same moment).
//   BENCH_CPU_PROFILE=<dir>: the console writes a V8 .cpuprofile there (open in Chrome DevTools)
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { stageApprovedGrants, stagePendingQueue, type StagedGrant } from './lib/approval-data';
import { cpuMeter, describeCpu, type CpuShare } from './lib/cpu';
import { signIn, timedFetch } from './lib/http';
import { queryLabel, traced, type TracedQuery } from './lib/pgtrace';
import { int, load1, log, machine, ms, runMain, stats, table, verdict, type Stats, envNumber } from './lib/report';
import { cleanup, connect, createApiKey, createUser, setUpBench, pointDataLayerAt } from './lib/setup';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const num = envNumber;
const GRANTS = num('BENCH_REDEEM_GRANTS', 5_000);
const CLIENTS = num('BENCH_REDEEM_CLIENTS', 50);
const REDEEM_SECONDS = num('BENCH_REDEEM_SECONDS', 60);
const PENDING = num('BENCH_QUEUE_PENDING', 10_000);
const QUEUE_REQUESTS = num('BENCH_QUEUE_REQUESTS', 30);
const WARM_GRANTS = 100;
const SERIAL_GRANTS = 200;
const TRACE_GRANTS = 100;
const MID_CLIENTS = 10;
const MID_GRANTS = Math.min(1_000, GRANTS);
// An added measure, not the target's: bursts of CLIENTS simultaneous redemptions, each client
// sending one and waiting for nothing else (an open burst, not a closed loop).
const BURST_ROUNDS = 5;
const TARGET = { redeemP99Ms: 30, queueMs: 150 };

const statsRow = (name: string, s: Stats, extra = '') => [name, ms(s.p50), ms(s.p95), ms(s.p99), ms(s.max), extra];

type RedeemRun = { latencies: number[]; errors: number; firstError: string | null; seconds: number; redeemed: number };

async function redeemAll(origin: string, apiKey: string, slices: StagedGrant[][], seconds: number): Promise<RedeemRun> {
  const out: RedeemRun = { latencies: [], errors: 0, firstError: null, seconds: 0, redeemed: 0 };
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    slices.map(async (slice) => {
      for (const g of slice) {
        if (performance.now() > until) return;
        const body = JSON.stringify({ server: g.server, tool: g.tool, argsDigest: g.argsDigest });
        try {
          const r = await timedFetch(`${origin}/api/v1/grants/${g.id}/redeem`, { method: 'POST', headers, body });
          if (r.status === 200) {
            out.latencies.push(r.ms);
            out.redeemed++;
          } else {
            out.errors++;
            out.firstError ??= `HTTP ${r.status}: ${r.body.slice(0, 400)}`;
          }
        } catch (err) {
          out.errors++;
          out.firstError ??= `request failed: ${err instanceof Error ? `${err.message} ${String(err.cause ?? '')}` : err}`;
          await new Promise((res) => setTimeout(res, 100));
        }
      }
    }),
  );
  out.seconds = (performance.now() - started) / 1000;
  return out;
}

/** Deals grants to `n` clients round-robin: each gets its own. */
const deal = (grants: StagedGrant[], n: number) =>
  Array.from({ length: n }, (_, c) => grants.filter((_, i) => i % n === c));

type Activity = { samples: number; advisoryWaits: number[]; active: number[]; idleInTx: number[] };

/** Samples the app's sessions every 50 ms until stopped: who waits on the audit lock, who is busy. */
async function sampleActivity(databaseUrl: string): Promise<{ stop: () => Promise<Activity> }> {
  const out: Activity = { samples: 0, advisoryWaits: [], active: [], idleInTx: [] };
  const client = await connect(databaseUrl);
  let running = true;
  const loop = (async () => {
    while (running) {
      const {
        rows: [r],
      } = await client.query<{ advisory: number; active: number; idle_tx: number }>(`
        SELECT count(*) FILTER (WHERE wait_event_type = 'Lock' AND wait_event = 'advisory')::int AS advisory,
               count(*) FILTER (WHERE state = 'active')::int AS active,
               count(*) FILTER (WHERE state LIKE 'idle in transaction%')::int AS idle_tx
        FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`);
      out.samples++;
      out.advisoryWaits.push(r.advisory);
      out.active.push(r.active);
      out.idleInTx.push(r.idle_tx);
      await new Promise((res) => setTimeout(res, 50));
    }
    await client.end();
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return out;
    },
  };
}
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);

/** Per statement label: p50 of its time per call, and how often it runs per traced call. */
function breakdown(runs: TracedQuery[][]): { label: string; perCall: number; p50: number; p95: number }[] {
  const by = new Map<string, number[]>();
  for (const run of runs) for (const q of run) by.set(queryLabel(q.sql), [...(by.get(queryLabel(q.sql)) ?? []), q.ms]);
  return [...by].map(([label, xs]) => ({
    label,
    perCall: xs.length / runs.length,
    p50: stats(xs).p50,
    p95: stats(xs).p95,
  }));
}

async function explainAll(client: pg.Client, queries: TracedQuery[]): Promise<string[]> {
  const out: string[] = [];
  await client.query('BEGIN');
  try {
    for (const q of queries) {
      const label = queryLabel(q.sql);
      if (['BEGIN', 'COMMIT', 'ROLLBACK'].includes(label)) continue;
      // Replayed after the fact: a statement whose effect is already there (the audit entry's
      // sequence number) cannot run again; it is named, not explained.
      await client.query('SAVEPOINT explain');
      const res = await client
        .query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${q.sql}`, q.values)
        .catch((err: Error) => err);
      if (res instanceof Error) {
        await client.query('ROLLBACK TO SAVEPOINT explain');
        out.push(`  ${label.padEnd(40)} ${'–'.padStart(10)}   (not replayable afterwards: ${res.message})`);
        continue;
      }
      const plan = res.rows.map((r) => r['QUERY PLAN']);
      const exec = plan.find((l) => l.startsWith('Execution Time'))?.replace('Execution Time: ', '') ?? '?';
      const top = plan[0].replace(/\s*\(cost=[^)]*\)/, '').trim();
      out.push(`  ${label.padEnd(40)} ${exec.padStart(10)}   ${top}`);
    }
  } finally {
    await client.query('ROLLBACK');
  }
  return out;
}

async function main(): Promise<number> {
  // People and keys, made with the project's own CLI.
  const password = randomBytes(12).toString('base64url');
  const reviewerEmail = 'reviewer@bench.local';
  const BURST_GRANTS = BURST_ROUNDS * CLIENTS;
  const {
    startLoad,
    db,
    sql,
    pgVersion,
    app,
    authSecret: secret,
    prepared,
  } = await setUpBench(root, async ({ db: { url }, sql }) => {
    createUser(root, url, { email: reviewerEmail, role: 'reviewer', password, principal: 'bench-reviewer' });
    createUser(root, url, {
      email: 'reviewer2@bench.local',
      role: 'reviewer',
      password,
      principal: 'bench-reviewer-2',
    });
    const redeemKey = createApiKey(root, url, ['grants:redeem'], 'bench-executor');
    createApiKey(root, url, ['approvals:request'], 'bench-gateway');
    const ids = await sql.query<{ id: string; email: string; principal: string }>(
      `SELECT id, email, principal_id AS principal FROM users WHERE email IN ($1, 'reviewer2@bench.local') ORDER BY email`,
      [reviewerEmail],
    );
    const [reviewer, reviewer2] = ids.rows;
    const gatewayId = (await sql.query<{ id: string }>(`SELECT id FROM api_keys WHERE name = 'bench-gateway'`)).rows[0]
      .id;

    log(
      `staging ${int(GRANTS + WARM_GRANTS + SERIAL_GRANTS + TRACE_GRANTS + MID_GRANTS + BURST_GRANTS)} approved requests with grants and ${int(PENDING)} pending requests…`,
    );
    const t0 = performance.now();
    const grants = await stageApprovedGrants(sql, {
      keyId: gatewayId,
      reviewer,
      count: GRANTS + WARM_GRANTS + SERIAL_GRANTS + TRACE_GRANTS + MID_GRANTS + BURST_GRANTS,
      tag: 'redeem',
    });
    await stagePendingQueue(sql, { keyId: gatewayId, reviewer: reviewer2, count: PENDING, tag: 'queue' });
    await sql.query('VACUUM (ANALYZE) approval_requests');
    await sql.query('VACUUM (ANALYZE) approval_decisions');
    await sql.query('VACUUM (ANALYZE) grants');
    log(`staged in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    return { redeemKey, reviewer, grants };
  });
  const { redeemKey, reviewer, grants } = prepared;
  const warm = grants.slice(0, WARM_GRANTS);
  const serial = grants.slice(WARM_GRANTS, WARM_GRANTS + SERIAL_GRANTS);
  const traceGrants = grants.slice(WARM_GRANTS + SERIAL_GRANTS, WARM_GRANTS + SERIAL_GRANTS + TRACE_GRANTS);
  const mid = grants.slice(
    WARM_GRANTS + SERIAL_GRANTS + TRACE_GRANTS,
    WARM_GRANTS + SERIAL_GRANTS + TRACE_GRANTS + MID_GRANTS,
  );
  const timed = grants.slice(
    WARM_GRANTS + SERIAL_GRANTS + TRACE_GRANTS + MID_GRANTS,
    WARM_GRANTS + SERIAL_GRANTS + TRACE_GRANTS + MID_GRANTS + GRANTS,
  );
  const burstGrants = grants.slice(WARM_GRANTS + SERIAL_GRANTS + TRACE_GRANTS + MID_GRANTS + GRANTS);

  // ── (a) Redemption ──────────────────────────────────────────────────────────────────────
  log('redemption: warming up…');
  const warmRun = await redeemAll(app.origin, redeemKey, deal(warm, 10), 60);
  if (warmRun.errors) throw new Error(`warm-up redemptions failed: ${warmRun.firstError}`);
  const cpu: Record<string, CpuShare | undefined> = {};
  log(`redemption: ${SERIAL_GRANTS} sequential (load ${load1()})…`);
  let meter = cpuMeter(app.pid);
  const serialRun = await redeemAll(app.origin, redeemKey, [serial], 60);
  cpu.serial = meter?.stop();
  // The floor under a redemption: routing and the key check, same key, same connection reuse.
  const keyFloor: number[] = [];
  for (let k = 0; k < 100; k++)
    keyFloor.push(
      (await timedFetch(`${app.origin}/api/v1/me`, { headers: { authorization: `Bearer ${redeemKey}` } })).ms,
    );
  log(`redemption: ${int(mid.length)} grants, ${MID_CLIENTS} clients (load ${load1()})…`);
  meter = cpuMeter(app.pid);
  const midRun = await redeemAll(app.origin, redeemKey, deal(mid, MID_CLIENTS), REDEEM_SECONDS);
  cpu.mid = meter?.stop();
  log(`redemption: ${int(timed.length)} grants, ${CLIENTS} clients (load ${load1()})…`);
  const sampler = await sampleActivity(db.url);
  meter = cpuMeter(app.pid);
  const run = await redeemAll(app.origin, redeemKey, deal(timed, CLIENTS), REDEEM_SECONDS);
  cpu.full = meter?.stop();
  const activity = await sampler.stop();
  const redeemLoad = load1();
  log(`redemption: ${BURST_ROUNDS} bursts of ${CLIENTS} simultaneous single redemptions (load ${load1()})…`);
  const burst: RedeemRun = { latencies: [], errors: 0, firstError: null, seconds: 0, redeemed: 0 };
  for (let k = 0; k < BURST_ROUNDS; k++) {
    await new Promise((res) => setTimeout(res, 250));
    const one = await redeemAll(
      app.origin,
      redeemKey,
      deal(burstGrants.slice(k * CLIENTS, (k + 1) * CLIENTS), CLIENTS),
      REDEEM_SECONDS,
    );
    burst.latencies.push(...one.latencies);
    burst.errors += one.errors;
    burst.firstError ??= one.firstError;
    burst.redeemed += one.redeemed;
  }
  const replay = await timedFetch(`${app.origin}/api/v1/grants/${timed[0].id}/redeem`, {
    method: 'POST',
    headers: { authorization: `Bearer ${redeemKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ server: timed[0].server, tool: timed[0].tool, argsDigest: timed[0].argsDigest }),
  });
  const counted = (
    await sql.query<{ grants: number; requests: number }>(`
    SELECT (SELECT count(*) FROM grants WHERE redeemed_at IS NOT NULL)::int AS grants,
           (SELECT count(*) FROM approval_requests WHERE status = 'redeemed')::int AS requests`)
  ).rows[0];
  const expected = warmRun.redeemed + serialRun.redeemed + midRun.redeemed + run.redeemed + burst.redeemed;

  // ── (b) The queue ───────────────────────────────────────────────────────────────────────
  log(`queue: signing in as ${reviewerEmail} through /api/auth/callback/credentials…`);
  const cookie = await signIn(app.origin, reviewerEmail, password);
  const first = (
    await sql.query<{ summary: string }>(
      `SELECT summary FROM approval_requests WHERE status = 'pending' AND expires_at > now() ORDER BY expires_at, id LIMIT 1`,
    )
  ).rows[0].summary;
  const page = async () => {
    const r = await timedFetch(`${app.origin}/approvals`, { headers: { cookie } });
    const rows = r.body.split('data-testid="queue-row"').length - 1;
    if (r.status !== 200 || rows !== 200 || !r.body.includes(first)) {
      throw new Error(
        `GET /approvals answered ${r.status} with ${rows} queue rows (expected 200, the first "${first}"): ${r.body.slice(0, 300)}`,
      );
    }
    return r;
  };
  const list = async () => {
    const r = await timedFetch(`${app.origin}/api/v1/approvals?status=pending&limit=200`, { headers: { cookie } });
    const items = r.status === 200 ? (JSON.parse(r.body) as { items: { summary: string }[] }).items : [];
    if (items.length !== 200 || items[0].summary !== first)
      throw new Error(
        `GET /api/v1/approvals?status=pending&limit=200 answered ${r.status} with ${items.length} items: ${r.body.slice(0, 300)}`,
      );
    return r;
  };
  const me = async () => {
    const r = await timedFetch(`${app.origin}/api/v1/me`, { headers: { cookie } });
    if (r.status !== 200) throw new Error(`GET /api/v1/me with the session answered ${r.status}`);
    return r;
  };
  for (let k = 0; k < 5; k++) {
    await page();
    await list();
    await me();
  }
  log(
    `queue: ${QUEUE_REQUESTS} × GET /approvals, GET /api/v1/approvals, GET /api/v1/me, sequential (load ${load1()})…`,
  );
  meter = cpuMeter(app.pid);
  const pageRuns: number[] = [];
  const listRuns: number[] = [];
  const meRuns: number[] = [];
  let pageBytes = 0;
  let listBytes = 0;
  for (let k = 0; k < QUEUE_REQUESTS; k++) {
    const p = await page();
    pageRuns.push(p.ms);
    pageBytes = p.bytes;
    const l = await list();
    listRuns.push(l.ms);
    listBytes = l.bytes;
    meRuns.push((await me()).ms);
  }
  cpu.queue = meter?.stop();
  const queueLoad = load1();
  await app.stop();

  // ── In this process: the same data-layer calls, every statement timed ───────────────────
  log('tracing redemption and the queue read in this process…');
  await pointDataLayerAt(db.url, secret);
  const { redeemGrant } = await import('@/lib/server/data/grants');
  const { listApprovals, countPendingApprovals } = await import('@/lib/server/data/approvals');
  const { findActiveViewer } = await import('@/lib/server/data/users');
  const executor = (await sql.query<{ id: string }>(`SELECT id FROM api_keys WHERE name = 'bench-executor'`)).rows[0];
  const client = {
    kind: 'apiKey' as const,
    keyId: executor.id,
    name: 'bench-executor',
    scopes: ['grants:redeem' as const],
    organization: null,
  };
  const redeemTraces: TracedQuery[][] = [];
  const redeemTotal: number[] = [];
  const lockHeld: number[] = [];
  for (const g of traceGrants) {
    const t = await traced(() =>
      redeemGrant(client, g.id, { server: g.server, tool: g.tool, argsDigest: g.argsDigest }),
    );
    if (!t.value.ok) throw new Error(`redeemGrant(${g.id}) in process failed: ${t.value.failure}`);
    redeemTraces.push(t.queries);
    redeemTotal.push(t.ms);
    const lock = t.queries.find((q) => /pg_advisory_xact_lock/.test(q.sql));
    const commit = t.queries.findLast((q) => /^\s*COMMIT/i.test(q.sql));
    if (lock && commit) lockHeld.push(commit.start + commit.ms - (lock.start + lock.ms));
    // Since the chain lock is taken inside one statement (redeem_grants → audit_append), that
    // statement, commit included, bounds how long it is held.
    const statement = t.queries.find((q) => /redeem_grants|audit_append/.test(q.sql));
    if (!lock && statement) lockHeld.push(statement.ms);
  }
  const viewer = (await findActiveViewer(reviewer.id))!;
  const listTraces: TracedQuery[][] = [];
  const listTotal: number[] = [];
  const countTotal: number[] = [];
  for (let k = 0; k < QUEUE_REQUESTS + 5; k++) {
    const t = await traced(() => listApprovals(viewer, { status: 'pending', limit: 200 }));
    const c = await traced(() => countPendingApprovals(viewer));
    if (k < 5) continue; // warm-up (and the once-a-minute expiry sweep)
    listTraces.push(t.queries);
    listTotal.push(t.ms);
    countTotal.push(c.ms);
  }
  const redeemPlans = await explainAll(sql, redeemTraces[0]);
  const listPlans = await explainAll(sql, [
    ...listTraces[0],
    ...(await traced(() => countPendingApprovals(viewer))).queries,
  ]);
  await sql.end();

  // ── Report ──────────────────────────────────────────────────────────────────────────────
  const r = stats(run.latencies);
  const b = stats(burst.latencies);
  const s = stats(serialRun.latencies);
  const throughput = run.redeemed / run.seconds;
  const held = stats(lockHeld);
  const pageS = stats(pageRuns);
  const listS = stats(listRuns);
  const meS = stats(meRuns);
  const traceRows = (rows: ReturnType<typeof breakdown>) =>
    rows.map((b) => [`  ${b.label}`, `${b.perCall.toFixed(2)}×`, ms(b.p50), ms(b.p95)]);

  console.log(`
Countersign approvals benchmark
  machine   ${machine(pgVersion)}
  database  ${db.where}
  data      ${int(grants.length)} approved requests with grants (one reviewer decision each), ${int(PENDING)} pending requests (3 in 10 need two approvals)
  load avg  ${startLoad} at start, ${redeemLoad} after redeeming, ${queueLoad} after the queue, ${load1()} at end (1 min)

(a) POST /api/v1/grants/{id}/redeem, each grant once
${table([
  ['run', 'redeemed', 'throughput', 'p50', 'p95', 'p99', 'max', 'errors'],
  [
    `sequential, 1 client`,
    int(serialRun.redeemed),
    `${int(serialRun.redeemed / serialRun.seconds)}/s`,
    ms(s.p50),
    ms(s.p95),
    ms(s.p99),
    ms(s.max),
    String(serialRun.errors),
  ],
  [
    `${MID_CLIENTS} clients, ${midRun.seconds.toFixed(1)} s`,
    int(midRun.redeemed),
    `${int(midRun.redeemed / midRun.seconds)}/s`,
    ms(stats(midRun.latencies).p50),
    ms(stats(midRun.latencies).p95),
    ms(stats(midRun.latencies).p99),
    ms(stats(midRun.latencies).max),
    String(midRun.errors),
  ],
  [
    `${CLIENTS} clients, ${run.seconds.toFixed(1)} s`,
    int(run.redeemed),
    `${int(throughput)}/s`,
    ms(r.p50),
    ms(r.p95),
    ms(r.p99),
    ms(r.max),
    String(run.errors),
  ],
  [
    `added: ${BURST_ROUNDS} bursts of ${CLIENTS} at once`,
    int(burst.redeemed),
    '',
    ms(b.p50),
    ms(b.p95),
    ms(b.p99),
    ms(b.max),
    String(burst.errors),
  ],
])}
  (the added row is not the target's measure: ${CLIENTS} redemptions sent at the same moment, each client sending one and nothing after it, ${BURST_ROUNDS} times)
  floor: GET /api/v1/me with the same key ${ms(stats(keyFloor).p50)} p50 / ${ms(stats(keyFloor).p95)} p95 (routing, key check, no transaction)
${(['serial', 'mid', 'full'] as const)
  .map(
    (k) =>
      cpu[k] &&
      `  ${{ serial: 'sequential', mid: `${MID_CLIENTS} clients`, full: `${CLIENTS} clients` }[k].padEnd(11)} ${describeCpu(cpu[k]!)}`,
  )
  .filter(Boolean)
  .join('\n')}
  Little's law for ${CLIENTS} closed-loop clients: mean latency = ${CLIENTS} ÷ throughput = ${ms((CLIENTS / throughput) * 1000)}; p99 ≤ ${TARGET.redeemP99Ms} ms needs more than ${int(CLIENTS / (TARGET.redeemP99Ms / 1000))} redemptions/s
  checks: redeeming one of them again answers ${replay.status} (expected 409); the database holds ${int(counted.grants)} redeemed grants and ${int(counted.requests)} redeemed requests (expected ${int(expected)})
  during the ${CLIENTS}-client run (${activity.samples} samples of pg_stat_activity): app connections active ${mean(activity.active).toFixed(1)}, waiting on an advisory lock (the audit chain) ${mean(activity.advisoryWaits).toFixed(1)}, idle in transaction ${mean(activity.idleInTx).toFixed(1)}
  in this process, uncontended (${TRACE_GRANTS} redemptions through lib/server/data/grants.redeemGrant): ${ms(stats(redeemTotal).p50)} p50; the audit lock is held from its grant to COMMIT for ${ms(held.p50)} p50 / ${ms(held.p95)} p95${redeemTraces[0]?.some((q) => /pg_advisory_xact_lock/.test(q.sql)) ? '' : ' (at most: the whole one-statement redemption, taken inside it)'} → at most ~${int(1000 / held.p50)} redemptions/s at one redemption per commit
${table([['  statement', 'per call', 'p50', 'p95'], ...traceRows(breakdown(redeemTraces))])}
  EXPLAIN ANALYZE (one redemption, rolled back):
${redeemPlans.join('\n')}

(b) The queue with ${int(PENDING)} pending requests, signed in as a reviewer (session cookie), ${QUEUE_REQUESTS} sequential requests each
${table([
  ['request', 'p50', 'p95', 'p99', 'max', 'answer'],
  statsRow('GET /approvals (server-rendered queue, 200 rows)', pageS, `${int(pageBytes)} bytes`),
  statsRow('GET /api/v1/approvals?status=pending&limit=200', listS, `${int(listBytes)} bytes`),
  statsRow('GET /api/v1/me (session check floor)', meS),
])}
${cpu.queue ? `  ${describeCpu(cpu.queue)}\n` : ''}  in this process: listApprovals(pending, 200) ${ms(stats(listTotal).p50)} p50 / ${ms(stats(listTotal).p95)} p95; countPendingApprovals (the navigation badge) ${ms(stats(countTotal).p50)} p50
${table([['  statement (listApprovals)', 'per call', 'p50', 'p95'], ...traceRows(breakdown(listTraces))])}
  EXPLAIN ANALYZE:
${listPlans.join('\n')}

${table([
  ['target', 'measured', ''],
  [`redemption p99 ≤ ${TARGET.redeemP99Ms} ms (${CLIENTS} clients)`, ms(r.p99), verdict(r.p99 <= TARGET.redeemP99Ms)],
  [
    `GET /approvals p95 ≤ ${TARGET.queueMs} ms`,
    `${ms(pageS.p95)} (p50 ${ms(pageS.p50)})`,
    verdict(pageS.p95 <= TARGET.queueMs),
  ],
  [
    `GET /api/v1/approvals?status=pending&limit=200 p95 ≤ ${TARGET.queueMs} ms`,
    `${ms(listS.p95)} (p50 ${ms(listS.p50)})`,
    verdict(listS.p95 <= TARGET.queueMs),
  ],
])}`);
  const problems: string[] = [];
  const failed = run.errors + serialRun.errors + midRun.errors + burst.errors;
  if (failed)
    problems.push(
      `${failed} redemption(s) failed; first: ${run.firstError ?? midRun.firstError ?? serialRun.firstError ?? burst.firstError}`,
    );
  if (replay.status !== 409) problems.push(`a second redemption answered ${replay.status}, not 409`);
  if (counted.grants !== expected || counted.requests !== expected) {
    problems.push(
      `the database holds ${counted.grants} redeemed grants / ${counted.requests} redeemed requests, expected ${expected}`,
    );
  }
  for (const p of problems) console.error(`[bench] ${p}`);
  return problems.length ? 1 : 0;
}

runMain(main, cleanup);
