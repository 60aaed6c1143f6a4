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
import { stageApprovedGrants, stagePendingQueue } from './lib/approval-data';
import { cpuMeter, type CpuShare } from './lib/cpu';
import { signIn, timedFetch } from './lib/http';
import { int, load1, log, runMain } from './lib/report';
import { cleanup, createApiKey, createUser, setUpBench } from './lib/setup';
import { printApprovalsReport } from './lib/approvals-report';
import {
  BURST_ROUNDS,
  CLIENTS,
  GRANTS,
  MID_CLIENTS,
  MID_GRANTS,
  PENDING,
  QUEUE_REQUESTS,
  REDEEM_SECONDS,
  SERIAL_GRANTS,
  TRACE_GRANTS,
  WARM_GRANTS,
} from './lib/approvals-config';
import { traceInProcess } from './lib/approvals-trace';
import { deal, redeemAll, sampleActivity, type RedeemRun } from './lib/redeem';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

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
  const { redeemTraces, redeemTotal, lockHeld, listTraces, listTotal, countTotal, redeemPlans, listPlans } =
    await traceInProcess(db, secret, sql, traceGrants, reviewer);
  await sql.end();

  return printApprovalsReport({
    pgVersion,
    db,
    startLoad,
    grants,
    serialRun,
    midRun,
    run,
    burst,
    keyFloor,
    cpu,
    activity,
    redeemLoad,
    queueLoad,
    replay,
    counted,
    expected,
    redeemTotal,
    lockHeld,
    redeemTraces,
    redeemPlans,
    pageRuns,
    listRuns,
    meRuns,
    pageBytes,
    listBytes,
    listTotal,
    countTotal,
    listTraces,
    listPlans,
  });
}

runMain(main, cleanup);
