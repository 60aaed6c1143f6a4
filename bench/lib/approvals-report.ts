// The report of bench/approvals.ts.
import { type StagedGrant } from './approval-data';
import { describeCpu, type CpuShare } from './cpu';
import { type TracedQuery } from './pgtrace';
import { int, load1, machine, ms, stats, table, verdict } from './report';
import {
  OPEN_SECONDS,
  PENDING,
  QUEUE_REQUESTS,
  RATE,
  ROUNDS,
  SCHEDULE,
  TARGET,
  TRACE_GRANTS,
  statsRow,
} from './approvals-config';
import { floorLabel } from './floor';
import { achieved, type OpenLoopRun } from './open-loop';
import { breakdown } from './plans';
import { mean, type Activity, type RedeemRun } from './redeem';

const cpuLabel: Record<string, string> = {
  serial: 'sequential',
  redeem: 'redeeming',
  me: '/api/v1/me',
  bare401: 'bare 401',
};

/** Everything bench/approvals.ts measured, as the report shows it. */
export type ApprovalsMeasures = {
  pgVersion: string;
  db: { where: string };
  startLoad: string;
  grants: StagedGrant[];
  serialRun: RedeemRun;
  open: { redeem: OpenLoopRun; me: OpenLoopRun; bare401: OpenLoopRun };
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
  } = m;
  const r = stats(open.redeem.latencies);
  const fMe = stats(open.me.latencies);
  const f401 = stats(open.bare401.latencies);
  const s = stats(serialRun.latencies);
  const openRow = (name: string, run: OpenLoopRun) => {
    const st = stats(run.latencies);
    return [
      name,
      `${RATE}/s`,
      `${achieved(run).toFixed(0)}/s`,
      ms(st.p50),
      ms(st.p95),
      ms(st.p99),
      ms(st.max),
      String(run.errors),
      ms(stats(run.sendLag).p99),
    ];
  };
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
  load avg  ${startLoad} at start, ${redeemLoad} after each open-loop round, ${queueLoad} after the queue, ${load1()} at end (1 min)

(a) POST /api/v1/grants/{id}/redeem, each grant once
${table([
  ['run', 'offered', 'achieved', 'p50', 'p95', 'p99', 'max', 'errors', 'send lag p99'],
  [
    `sequential, 1 client (service time)`,
    '',
    `${int(serialRun.redeemed / serialRun.seconds)}/s`,
    ms(s.p50),
    ms(s.p95),
    ms(s.p99),
    ms(s.max),
    String(serialRun.errors),
    '',
  ],
  openRow(`open loop: redemption (${int(open.redeem.sent)})`, open.redeem),
  openRow(`open loop: ${floorLabel.me}`, open.me),
  openRow(`open loop: ${floorLabel.bare401}`, open.bare401),
])}
${[open.redeem, open.me, open.bare401]
  .filter((run) => achieved(run) < 0.95 * RATE)
  .map(
    (run) =>
      `  kept up: no — ${run === open.redeem ? 'redemption' : run === open.me ? '/api/v1/me' : 'the bare 401'} answered ${achieved(run).toFixed(0)} of the ${RATE}/s offered; a queue built up, and its latencies measure that queue (the machine's spare CPU, see below, bounds it)\n`,
  )
  .join(
    '',
  )}  open loop: ${SCHEDULE === 'poisson' ? 'Poisson arrivals' : 'evenly spaced sends'} at ${RATE}/s, ${OPEN_SECONDS} s per route in ${ROUNDS} rounds taking turns in rotating order; latency from the scheduled send time to the last byte (no coordinated omission); send lag = how late this process sent (the load generator's share)
${(['serial', 'redeem', 'me', 'bare401'] as const)
  .map((k) => cpu[k] && `  ${cpuLabel[k].padEnd(11)} ${describeCpu(cpu[k]!)}`)
  .filter(Boolean)
  .join('\n')}
  console CPU per answer (load-independent, unlike the latencies): ${(['redeem', 'me', 'bare401'] as const)
    .map((k) => {
      const c = cpu[k];
      const per = c ? (c.app * c.seconds * 1000) / Math.max(1, open[k].ok) : NaN;
      return `${cpuLabel[k]} ${ms(per)} (one free core: ~${Number.isNaN(per) ? '–' : int(1000 / per)}/s)`;
    })
    .join(', ')}
  checks: redeeming one of them again answers ${replay.status} (expected 409); the database holds ${int(counted.grants)} redeemed grants and ${int(counted.requests)} redeemed requests (expected ${int(expected)})
  while redeeming open loop (${activity.samples} samples of pg_stat_activity): app connections active ${mean(activity.active).toFixed(1)}, waiting on an advisory lock (the audit chain) ${mean(activity.advisoryWaits).toFixed(1)}, idle in transaction ${mean(activity.idleInTx).toFixed(1)}
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
  [
    `redemption p99 ≤ ${TARGET.redeemP99Ms} ms, open loop at ${RATE}/s offered (achieved ${achieved(open.redeem).toFixed(0)}/s)`,
    `${ms(r.p99)} (floor p99: /me ${ms(fMe.p99)}, bare 401 ${ms(f401.p99)}; p50 ${ms(r.p50)} vs ${ms(fMe.p50)}, ${ms(f401.p50)})`,
    verdict(r.p99 <= TARGET.redeemP99Ms && open.redeem.errors === 0),
  ],
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
  const failed = open.redeem.errors + serialRun.errors;
  if (failed) problems.push(`${failed} redemption(s) failed; first: ${open.redeem.firstError ?? serialRun.firstError}`);
  for (const f of [open.me, open.bare401])
    if (f.errors) problems.push(`${f.errors} floor request(s) failed; first: ${f.firstError}`);
  if (replay.status !== 409) problems.push(`a second redemption answered ${replay.status}, not 409`);
  if (counted.grants !== expected || counted.requests !== expected) {
    problems.push(
      `the database holds ${counted.grants} redeemed grants / ${counted.requests} redeemed requests, expected ${expected}`,
    );
  }
  for (const p of problems) console.error(`[bench] ${p}`);
  return problems.length ? 1 : 0;
}
