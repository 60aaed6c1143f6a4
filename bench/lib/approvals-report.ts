// The report of bench/approvals.ts.
import { type StagedGrant } from './approval-data';
import { describeCpu, type CpuShare } from './cpu';
import { type TracedQuery } from './pgtrace';
import { int, load1, machine, ms, stats, table, verdict } from './report';
import {
  BURST_ROUNDS,
  CLIENTS,
  MID_CLIENTS,
  PENDING,
  QUEUE_REQUESTS,
  TARGET,
  TRACE_GRANTS,
  statsRow,
} from './approvals-config';
import { breakdown } from './plans';
import { mean, type Activity, type RedeemRun } from './redeem';

/** Everything bench/approvals.ts measured, as the report shows it. */
export type ApprovalsMeasures = {
  pgVersion: string;
  db: { where: string };
  startLoad: string;
  grants: StagedGrant[];
  serialRun: RedeemRun;
  midRun: RedeemRun;
  run: RedeemRun;
  burst: RedeemRun;
  keyFloor: number[];
  cpu: Record<string, CpuShare | undefined>;
  activity: Activity;
  redeemLoad: string;
  queueLoad: string;
  replay: { status: number };
  counted: { grants: number; requests: number };
  expected: number;
  redeemTotal: number[];
  lockHeld: number[];
  redeemTraces: TracedQuery[][];
  redeemPlans: string[];
  pageRuns: number[];
  listRuns: number[];
  meRuns: number[];
  pageBytes: number;
  listBytes: number;
  listTotal: number[];
  countTotal: number[];
  listTraces: TracedQuery[][];
  listPlans: string[];
};

/** Prints the report; answers the exit code (non-zero only on real errors). */
export function printApprovalsReport(m: ApprovalsMeasures): number {
  const {
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
  } = m;
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
