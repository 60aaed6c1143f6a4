// In this process, for bench/approvals.ts: redemption and the queue read through the same data-layer
// calls as the console's, every statement timed, and their plans.
import type pg from 'pg';
import type { StagedGrant } from './approval-data';
import { QUEUE_REQUESTS } from './approvals-config';
import { explainAll } from './plans';
import { traced, type TracedQuery } from './pgtrace';
import { log } from './report';
import { pointDataLayerAt, type BenchDatabase } from './setup';

export async function traceInProcess(
  db: BenchDatabase,
  secret: string,
  sql: pg.Client,
  traceGrants: StagedGrant[],
  reviewer: { id: string },
) {
  log('tracing redemption and the queue read in this process…');
  await pointDataLayerAt(db.url, secret);
  const { redeemGrant } = await import('@/lib/server/approvals/grants');
  const { listApprovals, countPendingApprovals } = await import('@/lib/server/approvals');
  const { findActiveViewer } = await import('@/lib/server/users/users');
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
  return { redeemTraces, redeemTotal, lockHeld, listTraces, listTotal, countTotal, redeemPlans, listPlans };
}
