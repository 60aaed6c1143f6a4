// `npm run bench:webhooks`: the webhook outbox (docs/design.md "Notifications") in this process, on a
// fresh database (bench/lib/setup.ts, dropped afterwards), through the data layer's own calls.
//  (a) A decision's cost of writing its events: BENCH_WEBHOOK_DECISIONS approvals decided one
//      after another, each traced statement by statement (bench/lib/pgtrace.ts), with one
//      endpoint subscribed, in alternating blocks with webhook_enqueue real and a no-op. The events
//      are written by the statement that settles the decision (no round trip of their own), so the
//      cost is the difference between the blocks; the no-op blocks against each other are the floor.
//  (b) Delivery: BENCH_WEBHOOK_EVENTS approval requests made by BENCH_WEBHOOK_CLIENTS clients as
//      fast as they can, with the worker (lib/server/webhooks/worker.ts, its defaults) delivering to
//      a healthy loopback receiver: time from the event's commit to its arrival, p50/p99, and the
//      drain rate; next to the ceiling, plain POSTs to the same receiver at the same concurrency.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { applyMigrations } from '../scripts/lib/migrations';
import { traced } from './lib/pgtrace';
import { envNumber, int, load1, log, machine, ms, runMain, stats, table, verdict } from './lib/report';
import { benchDatabase, cleanup, connect, onCleanup, pointDataLayerAt } from './lib/setup';
import { benchReceiver, postCeiling } from './lib/webhooks-parts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DECISIONS = envNumber('BENCH_WEBHOOK_DECISIONS', 10_000);
const EVENTS = envNumber('BENCH_WEBHOOK_EVENTS', 10_000);
const CLIENTS = envNumber('BENCH_WEBHOOK_CLIENTS', 8);
const TARGET_DECISION_MS = 1;
const NOOP_ENQUEUE = `CREATE OR REPLACE FUNCTION webhook_enqueue(p_type text, p_approval uuid, p_extra jsonb DEFAULT '{}'::jsonb)
  RETURNS uuid LANGUAGE sql AS $$ SELECT NULL::uuid $$`;

async function main(): Promise<number> {
  const startLoad = load1();
  const db = await benchDatabase(root);
  log(`database: ${db.where}`);
  await applyMigrations(db.url, { warn: () => {} });
  const sql = await connect(db.url);
  const pgVersion = (await sql.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0].v;
  const realEnqueue = (
    await sql.query<{ def: string }>(
      "SELECT pg_get_functiondef('webhook_enqueue(text,uuid,jsonb)'::regprocedure) AS def",
    )
  ).rows[0].def;
  await sql.query(`INSERT INTO trusted_servers (name, trusted_by) VALUES ('bench-mcp', 'bench')`);
  await pointDataLayerAt(db.url, randomBytes(32).toString('base64url'));

  const { cli } = await import('@/lib/auth/actor');
  const { createApiKey } = await import('@/lib/server/credentials/credentials');
  const { requestApproval, decideApproval } = await import('@/lib/server/approvals');
  const { createWebhookEndpoint } = await import('@/lib/server/webhooks/webhooks');
  const { createWebhookWorker } = await import('@/lib/server/webhooks/worker');
  const { approvalRequestSchema } = await import('@/lib/approvals/schemas');
  const key = await createApiKey(cli, { name: 'bench-gateway', scopes: ['approvals:request'] });
  if (!key.ok) throw new Error('could not create the API key');
  const requester = {
    kind: 'apiKey' as const,
    keyId: key.value.key.id,
    name: 'bench-gateway',
    scopes: ['approvals:request' as const],
    organization: null,
  };
  const admin = {
    kind: 'user' as const,
    userId: '00000000-0000-4000-8000-000000000001',
    email: 'admin@bench.local',
    name: 'admin',
    role: 'admin' as const,
    principalId: 'bench-admin',
    tokenId: null,
  };
  const reviewerRow = await sql.query<{ id: string }>(
    `INSERT INTO users (id, email, name, password_hash, role, principal_id, updated_at)
     VALUES (gen_random_uuid(), 'reviewer@bench.local', 'reviewer', '!', 'reviewer', 'bench-reviewer', now()) RETURNING id`,
  );
  const reviewer = {
    kind: 'user' as const,
    userId: reviewerRow.rows[0].id,
    email: 'reviewer@bench.local',
    name: 'reviewer',
    role: 'reviewer' as const,
    principalId: 'bench-reviewer',
    tokenId: null,
  };
  let n = 0;
  const request = async () => {
    const body = approvalRequestSchema.parse({
      requestRef: `req-${++n}`,
      organization: 'acme',
      principal: 'user_193',
      server: 'bench-mcp',
      tool: { name: 'update_note', annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false } },
      argsDigest: `sha256:${'ab'.repeat(32)}`,
      summary: 'Update the note on order 4411',
    });
    const r = await requestApproval(requester, `idem-${n}-${randomBytes(4).toString('hex')}`, body);
    if (!r.ok) throw new Error(`requestApproval failed: ${r.failure}`);
    return r.value.approval.id;
  };

  const receiver = await benchReceiver();
  onCleanup('close the receiver', receiver.close);
  const endpoint = await createWebhookEndpoint(admin, {
    url: receiver.url,
    format: 'standard',
    events: ['approval.requested', 'approval.decided', 'approval.approved'],
  });
  if (!endpoint.ok) throw new Error(`createWebhookEndpoint: ${endpoint.failure}`);

  // (a) The decision's cost, the worker not running.
  log(`(a) staging ${int(DECISIONS)} pending requests, then deciding them one after another…`);
  const ids: string[] = [];
  for (let i = 0; i < DECISIONS; i++) ids.push(await request());
  // Alternating blocks, the real outbox write and a no-op, so drift (autovacuum, checkpoints, the
  // other core's load) falls on both alike; the no-op blocks split in two give the noise floor.
  const withOutbox: number[] = [];
  const noop: number[][] = [[], []];
  const settleWith: number[] = [];
  const settleNoop: number[] = [];
  const blocks = 20;
  for (let b = 0; b < blocks; b++) {
    const real = b % 2 === 0;
    await sql.query(real ? realEnqueue : NOOP_ENQUEUE);
    for (const id of ids.slice((b * ids.length) / blocks, ((b + 1) * ids.length) / blocks)) {
      const t = await traced(() =>
        decideApproval(reviewer, { id, decision: 'approve', reason: 'checked', version: 1 }),
      );
      if (!t.value.ok) throw new Error(`decideApproval failed: ${t.value.failure}`);
      const settle = t.queries.filter((q) => q.sql.includes('webhook_enqueue')).reduce((s, q) => s + q.ms, 0);
      (real ? withOutbox : noop[(b >> 1) % 2]).push(t.ms);
      (real ? settleWith : settleNoop).push(settle);
    }
  }
  await sql.query(realEnqueue);
  await sql.query(`DELETE FROM webhook_events`);

  // (b) Delivery.
  log(`(b) ${int(EVENTS)} approval requests by ${CLIENTS} clients, the worker delivering…`);
  const ceiling = await postCeiling(receiver.url, 2_000, 32);
  const worker = createWebhookWorker({ log: { log: () => {}, error: (m: string) => console.error(m) } });
  worker.start();
  onCleanup('stop the worker', () => worker.stop());
  const t0 = Date.now();
  let made = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (made++ < EVENTS) await request();
    }),
  );
  const madeAt = Date.now();
  const deadline = Date.now() + 600_000;
  while (receiver.arrivals.length < EVENTS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  await worker.stop();
  const drained = Date.now();
  const latency = stats(receiver.arrivals.map((a) => a.arrivedAt - a.committedAt));
  const delivered = receiver.arrivals.length;
  const dead = (
    await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status <> 'delivered'`)
  ).rows[0].n;

  // (c) A backlog: EVENTS events written at once (webhook_enqueue over the requests just made),
  // the worker stopped; then started: how fast it drains.
  log(`(c) a backlog of ${int(EVENTS)} events, then the worker started…`);
  receiver.arrivals.length = 0;
  await sql.query(
    `SELECT count(webhook_enqueue('approval.requested', id)) FROM (SELECT id FROM approval_requests LIMIT $1) r`,
    [EVENTS],
  );
  const backlogWorker = createWebhookWorker({ log: { log: () => {}, error: (m: string) => console.error(m) } });
  const b0 = Date.now();
  backlogWorker.start();
  onCleanup('stop the backlog worker', () => backlogWorker.stop());
  while (receiver.arrivals.length < EVENTS && Date.now() < deadline + 600_000)
    await new Promise((r) => setTimeout(r, 20));
  const backlogSeconds = (Date.now() - b0) / 1000;
  await backlogWorker.stop();
  const backlogDelivered = receiver.arrivals.length;

  const w = stats(withOutbox);
  const x = stats([...noop[0], ...noop[1]]);
  const floor = Math.abs(stats(noop[0]).p99 - stats(noop[1]).p99);
  const sw = stats(settleWith);
  const sn = stats(settleNoop);
  const added = w.p99 - x.p99;
  console.log(`\nbench:webhooks — ${machine(pgVersion)}; load ${startLoad} at start, ${load1()} at end\n`);
  console.log(
    `(a) a decision (one approval: decided, approved, grant issued; 2 events to 1 endpoint), ${int(w.n)} each, sequential, ${blocks} alternating blocks`,
  );
  console.log(
    table([
      ['', 'p50', 'p99', 'max'],
      ['decision with the outbox write', ms(w.p50), ms(w.p99), ms(w.max)],
      ['decision with webhook_enqueue a no-op', ms(x.p50), ms(x.p99), ms(x.max)],
      ['its settling statement, with the events', ms(sw.p50), ms(sw.p99), ms(sw.max)],
      ['its settling statement, webhook_enqueue a no-op', ms(sn.p50), ms(sn.p99), ms(sn.max)],
    ]),
  );
  console.log(
    `  cost added to the p99: ${ms(added)} (target ≤ ${TARGET_DECISION_MS} ms) ${verdict(added <= TARGET_DECISION_MS)}; to the p50: ${ms(w.p50 - x.p50)}; noise floor (p99 of one half of the no-op blocks against the other): ${ms(floor)}\n`,
  );
  console.log(`(b) ${int(EVENTS)} events, ${CLIENTS} clients, worker defaults, healthy loopback receiver`);
  console.log(
    table([
      ['', 'value'],
      [
        'delivered (once each)',
        `${int(delivered)} of ${int(EVENTS)}; duplicates ${receiver.duplicates()}; not delivered ${dead}`,
      ],
      ['commit → delivery p50 / p99 / max', `${ms(latency.p50)} / ${ms(latency.p99)} / ${ms(latency.max)}`],
      ['events committed per second', `${int(EVENTS / ((madeAt - t0) / 1000))}/s`],
      [
        'delivered per second while they came (first commit → last delivery)',
        `${int(EVENTS / ((drained - t0) / 1000))}/s`,
      ],
      [
        'drain rate of a backlog (one worker)',
        `${int(backlogDelivered)} in ${backlogSeconds.toFixed(1)} s: ${int(backlogDelivered / backlogSeconds)}/s`,
      ],
      ['ceiling: plain POSTs to the receiver, 32 at a time', `${int(ceiling)}/s`],
    ]),
  );
  return delivered === EVENTS && backlogDelivered === EVENTS ? 0 : 1;
}

runMain(main, cleanup);
