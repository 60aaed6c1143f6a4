// `npm run bench:approvals [-- --short]`: approvals, request → decide → redeem, and their webhooks,
// on a fresh database with a webhook endpoint subscribed (approval.requested, .decided, .approved)
// pointing at a receiver on loopback:
//   - a decision (approved: the request settled, its grant issued, its two events written),
//     through the data layer in a worker process, --decisions of them one at a time in
//     alternating blocks with webhook_enqueue real and a no-op: what the outbox adds to its p99
//     (the no-op blocks against each other are the noise floor);
//   - the console started: its webhook worker drains the events the decisions left, against
//     plain POSTs to the same receiver (the ceiling); then --pending requests over HTTP
//     (POST /api/v1/approvals, 8 clients) in alternating blocks with 4 KiB of arguments and without
//     (the target: the first's p99 at most 1.5× the second's), their events delivered as they come
//     (commit → arrival);
//   - the queue with those pending, signed in as a reviewer: GET /approvals and
//     GET /api/v1/approvals?status=pending&limit=200, against GET /api/v1/me with the session;
//   - redemption of the decided grants, POST /api/v1/grants/{id}/redeem, open loop at --rate per
//     second, in rotating rounds with the framework's floor at the same rate: GET /api/v1/me with
//     the same key, and with no credential (a bare 401).
// Exits non-zero on errors, never on a missed target.
import { fileURLToPath } from 'node:url';
import type { Actor } from '@/lib/auth/actor';
import { openLoop, signIn, timedHttp, webhookReceiver, type Answer } from './lib/http';
import { int, log, p, readFlags, report, type Figure } from './lib/report';
import { createApiKey, createUser, freshDatabase, newSecret, runMain, startConsole } from './lib/setup';
import { startWorker } from './lib/worker';
import { inWorker, requestBody, type Carrying } from './lib/approvals-worker';

const flags = readFlags({
  decisions: [10_000, 1_000],
  pending: [10_000, 2_000],
  rate: [200, 100],
  seconds: [30, 6],
  'queue-requests': [30, 15],
});
const BLOCKS = 20;
const ROUNDS = 3;
const WARM = 200;
const STAGE_WARM = 200;
const ARGS_4K: Carrying = '4 KiB of arguments';
const NOOP_ENQUEUE = `CREATE OR REPLACE FUNCTION webhook_enqueue(p_type text, p_approval uuid, p_extra jsonb DEFAULT '{}'::jsonb)
  RETURNS uuid LANGUAGE sql AS $$ SELECT NULL::uuid $$`;
// ── The benchmark ─────────────────────────────────────────────────────────────────────────────
async function main() {
  const db = await freshDatabase(flags.databaseUrl);
  const failures: string[] = [];
  const password = newSecret();
  createUser(db, { email: 'reviewer@bench.local', role: 'reviewer', password, principal: 'bench-reviewer' });
  const requestKey = createApiKey(db, ['approvals:request'], 'bench-gateway');
  const redeemKey = createApiKey(db, ['grants:redeem'], 'bench-executor');
  const id = async (sql: string) => (await db.sql.query<{ id: string }>(sql)).rows[0].id;
  const reviewer: Actor = {
    kind: 'user',
    userId: await id(`SELECT id FROM users WHERE email = 'reviewer@bench.local'`),
    email: 'reviewer@bench.local',
    name: 'reviewer',
    role: 'reviewer',
    principalId: 'bench-reviewer',
    tokenId: null,
  };
  const receiver = await webhookReceiver();
  const secret = newSecret();
  const worker = await startWorker<typeof inWorker>(
    fileURLToPath(new URL('./lib/approvals-worker.ts', import.meta.url)),
    {
      DATABASE_URL: db.url,
      AUTH_SECRET: secret,
    },
  );
  await worker.call('subscribe', receiver.url);

  // (1) Decisions, the console not running: alternating blocks, the outbox real and a no-op.
  log(`${int(flags.decisions)} requests, then decisions in ${BLOCKS} alternating blocks…`);
  const ids = await worker.call(
    'request',
    await id(`SELECT id FROM api_keys WHERE name = 'bench-gateway'`),
    flags.decisions,
  );
  const realEnqueue = (
    await db.sql.query<{ def: string }>(
      "SELECT pg_get_functiondef('webhook_enqueue(text,uuid,jsonb)'::regprocedure) AS def",
    )
  ).rows[0].def;
  const withOutbox: number[] = [];
  const noop: number[][] = [[], []];
  for (let b = 0; b < BLOCKS; b++) {
    await db.sql.query(b % 2 === 0 ? realEnqueue : NOOP_ENQUEUE);
    const ms = await worker.call(
      'decide',
      reviewer,
      ids.slice((b * ids.length) / BLOCKS, ((b + 1) * ids.length) / BLOCKS),
    );
    (b % 2 === 0 ? withOutbox : noop[(b >> 1) % 2]).push(...ms);
  }
  await db.sql.query(realEnqueue);
  const backlog = (await db.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_deliveries')).rows[0].n;

  // (2) The console: its webhook worker drains that backlog; then requests over HTTP as they come.
  const app = await startConsole({
    DATABASE_URL: db.url,
    AUTH_SECRET: secret,
    COUNTERSIGN_APPROVALS_REQUIRE_ARGUMENTS: 'off',
  });
  log(`draining a backlog of ${int(backlog)} deliveries…`);
  /** Waits for `n` deliveries in all (at most ten minutes); says so when they did not all come. */
  const until = async (n: number) => {
    for (const deadline = Date.now() + 600_000; receiver.arrivals.size < n && Date.now() < deadline;)
      await new Promise((r) => setTimeout(r, 20));
    if (receiver.arrivals.size < n) failures.push(`${receiver.arrivals.size} of ${n} deliveries arrived`);
  };
  await until(backlog);
  const times = [...receiver.arrivals.values()].map((a) => a.arrivedAt);
  const drained = (backlog - 1) / ((Math.max(...times) - Math.min(...times)) / 1000);
  const posts = await receiver.plainPosts(2_000, 32);
  const seen = new Set(receiver.arrivals.keys());
  const auth = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });
  /** `count` requests by 8 clients, each sending its next when its answer is in; their milliseconds. */
  const eightClients = async (count: number, send: (n: number) => Promise<Answer>, status: number) => {
    const ms: number[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let n = next++; n < count; n = next++) {
          const r = await send(n);
          if (r.status !== status) throw new Error(`answered ${r.status}, not ${status}: ${r.body.slice(0, 300)}`);
          ms.push(r.ms);
        }
      }),
    );
    return ms;
  };
  const stage = (from: number, count: number, carrying: Carrying) =>
    eightClients(
      count,
      (n) =>
        timedHttp(`${app.origin}/api/v1/approvals`, {
          method: 'POST',
          headers: { ...auth(requestKey), 'idempotency-key': `queue-${from + n}` },
          body: JSON.stringify(requestBody(`q${from + n}`, carrying)),
        }),
      201,
    );
  // Staging with 4 KiB of arguments and without any, in alternating blocks after a warm-up of both
  // (the console accepts requests without arguments: COUNTERSIGN_APPROVALS_REQUIRE_ARGUMENTS=off).
  log(`${int(flags.pending)} requests over HTTP, 8 clients, in ${BLOCKS} blocks: 4 KiB of arguments, none…`);
  for (let w = 0; w < STAGE_WARM; w += 50) await stage(flags.pending + w, 50, w % 100 ? 'no arguments' : ARGS_4K);
  const staged = { args: [] as number[], none: [[], []] as number[][] };
  for (let b = 0; b < BLOCKS; b++) {
    const [from, to] = [b, b + 1].map((k) => Math.floor((k * flags.pending) / BLOCKS));
    const ms = await stage(from, to - from, b % 2 === 0 ? ARGS_4K : 'no arguments');
    (b % 2 === 0 ? staged.args : staged.none[(b >> 1) % 2]).push(...ms);
  }
  const requestFloor = await eightClients(
    Math.min(flags.pending, 2_000),
    () => timedHttp(`${app.origin}/api/v1/me`, { headers: auth(requestKey) }),
    200,
  );
  await until(backlog + flags.pending + STAGE_WARM);
  const delivery = [...receiver.arrivals].filter(([k]) => !seen.has(k)).map(([, a]) => a.arrivedAt - a.committedAt);

  // (3) The queue, signed in as the reviewer.
  const cookie = await signIn(app.origin, 'reviewer@bench.local', password);
  const get = async (path: string, check: (body: string) => boolean) => {
    const r = await timedHttp(`${app.origin}${path}`, { headers: { cookie } });
    if (r.status !== 200 || !check(r.body))
      throw new Error(`GET ${path} answered ${r.status}: ${r.body.slice(0, 300)}`);
    return r.ms;
  };
  const queue = {
    page: () => get('/approvals', (b) => b.includes('Update the note on order')),
    list: () =>
      get(
        '/api/v1/approvals?status=pending&limit=200',
        (b) => (JSON.parse(b) as { items: unknown[] }).items.length === 200,
      ),
    me: () => get('/api/v1/me', () => true),
  };
  const queueMs = { page: [] as number[], list: [] as number[], me: [] as number[] };
  log(`the queue: ${flags['queue-requests']} × GET /approvals, the API list and /api/v1/me…`);
  for (let k = -5; k < flags['queue-requests']; k++)
    for (const what of ['page', 'list', 'me'] as const) {
      const ms = await queue[what]();
      if (k >= 0) queueMs[what].push(ms);
    }

  // (4) Redemption, open loop, in rounds with the floor at the same rate.
  const grants = (
    await db.sql.query<{ id: string; server: string; tool: string; digest: string }>(
      `SELECT id, server, tool_name AS tool, args_digest AS digest FROM grants WHERE redeemed_at IS NULL ORDER BY issued_at, id`,
    )
  ).rows;
  const perRound = Math.ceil((flags.rate * flags.seconds) / ROUNDS);
  if (grants.length < WARM + perRound * ROUNDS) throw new Error(`${grants.length} grants: raise --decisions`);
  const redeem = (g: (typeof grants)[number]) =>
    timedHttp(`${app.origin}/api/v1/grants/${g.id}/redeem`, {
      method: 'POST',
      headers: auth(redeemKey),
      body: JSON.stringify({ server: g.server, tool: g.tool, argsDigest: g.digest }),
    });
  const routes: Record<'redeem' | 'me' | 'bare', (i: number) => Promise<Answer>> = {
    redeem: (i) => redeem(grants[i]),
    me: () => timedHttp(`${app.origin}/api/v1/me`, { headers: auth(redeemKey) }),
    bare: () => timedHttp(`${app.origin}/api/v1/me`).then((a) => ({ ...a, status: a.status === 401 ? 200 : 500 })),
  };
  for (let i = 0; i < WARM; i++) {
    const [r] = await Promise.all([routes.redeem(i), routes.me(i), routes.bare(i)]);
    if (r.status !== 200) failures.push(`warm-up redemption: HTTP ${r.status}: ${r.body.slice(0, 300)}`);
  }
  const open = { redeem: [] as number[], me: [] as number[], bare: [] as number[] };
  let achieved = 0;
  let used = WARM;
  for (let round = 0; round < ROUNDS; round++) {
    for (let n = 0; n < 3; n++) {
      const route = (['redeem', 'me', 'bare'] as const)[(round + n) % 3];
      log(`open loop, round ${round + 1}/${ROUNDS}: ${route} × ${perRound} at ${flags.rate}/s…`);
      const base = used;
      const r = await openLoop(flags.rate, perRound, round * 3 + n + 1, (i) => routes[route](base + i));
      if (route === 'redeem') {
        used += perRound;
        achieved += r.achieved / ROUNDS;
      }
      open[route].push(...r.latencies);
      failures.push(...r.failures.map((f) => `${route}: ${f}`));
    }
  }
  const again = await redeem(grants[WARM]);
  if (again.status !== 409) failures.push(`a second redemption answered ${again.status}, not 409`);

  const [w, x] = [p(withOutbox), p([...noop[0], ...noop[1]])];
  const d = p(delivery);
  const [withArgs, none] = [p(staged.args), p([...staged.none[0], ...staged.none[1]])];
  const figures: Figure[] = [
    {
      name: `a decision: p99 added by the outbox (${int(w.n)} each way)`,
      value: w.p99 - x.p99,
      unit: 'ms',
      note: `${w.p99.toFixed(2)} − ${x.p99.toFixed(2)} ms; noise floor ${Math.abs(p(noop[0]).p99 - p(noop[1]).p99).toFixed(2)} ms`,
      ceiling: { name: 'decision p50 without the outbox', value: x.p50, unit: 'ms' },
      target: { op: '≤', value: 1, unit: 'ms' },
    },
    {
      name: `a backlog of ${int(backlog)} deliveries drained`,
      value: drained,
      unit: 'deliveries/s',
      ceiling: { name: 'plain POSTs, 32 at a time', value: posts, unit: 'POSTs/s' },
    },
    {
      name: 'POST /api/v1/approvals p99, 8 clients, without arguments',
      value: none.p99,
      unit: 'ms',
      note: `p50 ${none.p50.toFixed(1)} ms`,
      ceiling: { name: 'GET /api/v1/me, 8 clients, p99', value: p(requestFloor).p99, unit: 'ms' },
    },
    {
      name: '  with 4 KiB of arguments ÷ without, p99',
      value: withArgs.p99 / none.p99,
      unit: '×',
      note: `${withArgs.p99.toFixed(1)} ms, p50 ${withArgs.p50.toFixed(1)} ms; noise: without ÷ without, block against block, ${(p(staged.none[0]).p99 / p(staged.none[1]).p99).toFixed(2)}×`,
      ceiling: { name: 'without arguments p99', value: none.p99, unit: 'ms' },
      target: { op: '≤', value: 1.5, unit: '×' },
    },
    { name: 'its event: commit → delivery p99', value: d.p99, unit: 'ms', note: `p50 ${d.p50.toFixed(0)} ms` },
    ...(['page', 'list'] as const).map((k): Figure => ({
      name: `${k === 'page' ? 'GET /approvals' : 'GET /api/v1/approvals?status=pending&limit=200'} p95, ${int(flags.pending)} pending`,
      value: p(queueMs[k]).p95,
      unit: 'ms',
      ceiling: { name: 'GET /api/v1/me (session) p95', value: p(queueMs.me).p95, unit: 'ms' },
      target: { op: '≤', value: 150, unit: 'ms' },
    })),
    {
      name: `redemption p99, open loop at ${flags.rate}/s`,
      value: p(open.redeem).p99,
      unit: 'ms',
      note: `p50 ${p(open.redeem).p50.toFixed(1)} ms, achieved ${achieved.toFixed(0)}/s`,
      ceiling: { name: 'floor p99: /api/v1/me', value: p(open.me).p99, unit: 'ms' },
      target: { op: '≤', value: 30, unit: 'ms' },
    },
    { name: '  the bare 401 at the same rate, p99', value: p(open.bare).p99, unit: 'ms' },
  ];
  report('approvals', db.pgVersion, { ...flags, blocks: BLOCKS, rounds: ROUNDS }, figures);
  for (const f of failures.slice(0, 10)) console.error(`[bench] ${f}`);
  return failures.length ? 1 : 0;
}

runMain(main);
