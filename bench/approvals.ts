// `npm run bench:approvals`: the two approval paths that must stay fast, on a fresh database
// (bench/lib/setup.ts, dropped afterwards) against the built console.
//  (a) Redemption: approved requests with live grants are staged with SQL (bench/lib/approval-data.ts).
//      After a warm-up, SERIAL_GRANTS sequential redemptions give the uncontended service time.
//      Then the target's measure, open loop (bench/lib/open-loop.ts): POST /api/v1/grants/{id}/redeem
//      offered at BENCH_REDEEM_RATE per second on a fixed schedule, each latency from the scheduled
//      send time (a stall is not hidden by sending less), and the framework floor at the same rate
//      in the same run: GET /api/v1/me with the same key (no work) and with no credential (a bare
//      401). The three take turns in ROUNDS rounds, in rotating order. pg_stat_activity is sampled
//      while redeeming; the redemption is then traced statement by statement in this process.
//  (b) The queue: BENCH_QUEUE_PENDING pending requests; a reviewer made with the CLI signs in through
//      Auth.js over HTTP; GET /approvals (the server-rendered queue) and
//      GET /api/v1/approvals?status=pending&limit=200 are timed sequentially with that session.
// Reports; exits non-zero only on real errors (set-up failures, unexpected answers).
//   BENCH_REDEEM_RATE (200/s)  BENCH_REDEEM_SECONDS (30, per open-loop phase)
//   BENCH_REDEEM_SCHEDULE (poisson | even)  BENCH_QUEUE_PENDING (10000)  BENCH_QUEUE_REQUESTS (30)
//   BENCH_CPU_PROFILE=<dir>: the console writes a V8 .cpuprofile there (open in Chrome DevTools)
//   COUNTERSIGN_PROCESSES (1) and REDIS_URL: passed to the console (scripts/lib/serve.mjs)
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stageApprovedGrants, stagePendingQueue } from './lib/approval-data';
import { cpuMeter, mergeCpu, type CpuShare } from './lib/cpu';
import { floorRequest, type FloorRoute } from './lib/floor';
import { mergeRuns, openLoop, type OpenLoopRun } from './lib/open-loop';
import { signIn, timedFetch, timedHttp } from './lib/http';
import { int, load1, log, runMain } from './lib/report';
import { cleanup, createApiKey, createUser, setUpBench } from './lib/setup';
import { printApprovalsReport } from './lib/approvals-report';
import {
  OPEN_GRANTS,
  PENDING,
  PER_ROUND,
  QUEUE_REQUESTS,
  RATE,
  ROUNDS,
  SCHEDULE,
  SERIAL_GRANTS,
  TRACE_GRANTS,
  WARM_GRANTS,
} from './lib/approvals-config';
import { traceInProcess } from './lib/approvals-trace';
import { deal, mergeActivity, redeemAll, redeemOne, sampleActivity, type Activity } from './lib/redeem';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

async function main(): Promise<number> {
  // People and keys, made with the project's own CLI.
  const password = randomBytes(12).toString('base64url');
  const reviewerEmail = 'reviewer@bench.local';
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
      `staging ${int(OPEN_GRANTS + WARM_GRANTS + SERIAL_GRANTS + TRACE_GRANTS)} approved requests with grants and ${int(PENDING)} pending requests…`,
    );
    const t0 = performance.now();
    const grants = await stageApprovedGrants(sql, {
      keyId: gatewayId,
      reviewer,
      count: OPEN_GRANTS + WARM_GRANTS + SERIAL_GRANTS + TRACE_GRANTS,
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
  const timed = grants.slice(WARM_GRANTS + SERIAL_GRANTS + TRACE_GRANTS);

  // ── (a) Redemption ──────────────────────────────────────────────────────────────────────
  log('redemption: warming up…');
  const warmRun = await redeemAll(app.origin, redeemKey, deal(warm, 10), 60);
  if (warmRun.errors) throw new Error(`warm-up redemptions failed: ${warmRun.firstError}`);
  for (let k = 0; k < 200; k++) {
    await floorRequest(app.origin, 'me', redeemKey, timedHttp);
    await floorRequest(app.origin, 'bare401', redeemKey, timedHttp);
  }
  const cpu: Record<string, CpuShare | undefined> = {};
  log(`redemption: ${SERIAL_GRANTS} sequential (load ${load1()})…`);
  let meter = cpuMeter(app.pid);
  const serialRun = await redeemAll(app.origin, redeemKey, [serial], 60);
  cpu.serial = meter?.stop();

  // The target's measure and the floor, open loop at the same rate, taking turns.
  type Phase = 'redeem' | FloorRoute;
  const phases: Phase[] = ['redeem', 'me', 'bare401'];
  const runs: Record<Phase, OpenLoopRun[]> = { redeem: [], me: [], bare401: [] };
  const cpuBy: Record<Phase, (CpuShare | undefined)[]> = { redeem: [], me: [], bare401: [] };
  const activities: Activity[] = [];
  const openLoad: string[] = [];
  let next = 0; // the next unredeemed grant of `timed`
  for (let round = 0; round < ROUNDS; round++) {
    for (let n = 0; n < phases.length; n++) {
      const phase = phases[(round + n) % phases.length];
      log(
        `open loop, round ${round + 1}/${ROUNDS}: ${phase === 'redeem' ? 'POST /api/v1/grants/{id}/redeem' : phase === 'me' ? 'GET /api/v1/me' : 'bare 401'} × ${int(PER_ROUND)} at ${RATE}/s (${SCHEDULE}) (load ${load1()})…`,
      );
      const sampler = phase === 'redeem' ? await sampleActivity(db.url) : null;
      const m = cpuMeter(app.pid);
      const base = next;
      const r = await openLoop({
        rate: RATE,
        count: PER_ROUND,
        schedule: SCHEDULE,
        seed: round * 3 + n + 1,
        send:
          phase === 'redeem'
            ? (i) => redeemOne(app.origin, redeemKey, timed[base + i])
            : () =>
                floorRequest(app.origin, phase, redeemKey, timedHttp).then(
                  () => ({ ok: true as const }),
                  (err: unknown) => ({ ok: false as const, error: err instanceof Error ? err.message : String(err) }),
                ),
      });
      if (phase === 'redeem') next += PER_ROUND;
      cpuBy[phase].push(m?.stop());
      if (sampler) activities.push(await sampler.stop());
      runs[phase].push(r);
    }
    openLoad.push(load1());
  }
  const open = { redeem: mergeRuns(runs.redeem), me: mergeRuns(runs.me), bare401: mergeRuns(runs.bare401) };
  cpu.redeem = mergeCpu(cpuBy.redeem);
  cpu.me = mergeCpu(cpuBy.me);
  cpu.bare401 = mergeCpu(cpuBy.bare401);
  const activity = mergeActivity(activities);
  const redeemLoad = openLoad.join(', ');
  const replayed = await redeemOne(app.origin, redeemKey, timed[0]);
  const replay = { status: replayed.ok ? 200 : Number(/^HTTP (\d+)/.exec(replayed.error)?.[1] ?? 0) };
  const counted = (
    await sql.query<{ grants: number; requests: number }>(`
    SELECT (SELECT count(*) FROM grants WHERE redeemed_at IS NOT NULL)::int AS grants,
           (SELECT count(*) FROM approval_requests WHERE status = 'redeemed')::int AS requests`)
  ).rows[0];
  const expected = warmRun.redeemed + serialRun.redeemed + open.redeem.ok;

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
    open,
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
