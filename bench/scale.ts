// `npm run bench:scale [-- --short]`: do look-ups and lists stay as fast as the outcome log grows?
// Two fresh databases on the same server, one of --small and one of --large records over 12
// monthly partitions (bench/lib/data.ts), each vacuumed and checkpointed as a serving console's
// would be, then measured in turns within the same minutes (each database's side in a worker
// process: the console's data layer takes its database from its process's environment):
//   - the incident look-up (getIncident) and the outcome list's first page filtered by organization
//     and delivery (listOutcomes): p95 at --large ≤ 1.2× at --small;
//   - ingest (ingestOutcomes, batches of 100, in rounds; the median round): at --large ≥ 0.9×;
//   - GET /api/v1/incidents/{ref} through the built console at --large, one request at a time, in
//     rotation with its ceilings: the same SELECT through pg (raw SQL), and the framework's floor,
//     GET /api/v1/me with the same key. Its p95 less the floor's ≤ 2× the raw SQL's p95;
//   - the purge of a month past the retention limit (purgeExpiredOutcomes) holding --purge-small
//     and --purge-large rows, in the large database: ≤ 1.5×;
//   - disk per million records.
// Exits non-zero on errors, never on a missed target.
import { fileURLToPath } from 'node:url';
import type { Actor } from '@/lib/auth/actor';
import { selectIncidentOutcomes } from '@/lib/server/outcomes/sql';
import { recordPool } from './lib/bodies';
import { ensureMonths, loadOutcomes, LOADED_KEY, settle } from './lib/data';
import { int, log, p, percentile, prng, readFlags, report, type Figure } from './lib/report';
import { createApiKey, freshDatabase, newSecret, runMain, startConsole, type Db } from './lib/setup';
import { serveWorker, startWorker } from './lib/worker';

const flags = readFlags({
  small: [2_000_000, 20_000],
  large: [20_000_000, 200_000],
  'purge-small': [1_000_000, 10_000],
  'purge-large': [10_000_000, 100_000],
  samples: [1_000, 200],
  batches: [600, 60],
  requests: [300, 60],
});
const LOOKUP_ROUNDS = 10;
const INGEST_ROUNDS = 6;
const MONTHS = 12;
const reader: Actor = {
  kind: 'apiKey',
  keyId: LOADED_KEY,
  name: 'bench',
  scopes: ['outcomes:read'],
  organization: null,
};
const writer: Actor = { ...reader, scopes: ['outcomes:write' as const] };

// ── In the worker: one database's side ────────────────────────────────────────────────────────
const inWorker = {
  /** `samples` incident look-ups of loaded references and filtered first pages of the list. */
  async lookUps(records: number, samples: number, seed: number) {
    const { getIncident } = await import('@/lib/server/incidents');
    const { listOutcomes } = await import('@/lib/server/outcomes');
    const random = prng(seed);
    const inc: number[] = [];
    const lst: number[] = [];
    for (let i = 0; i < samples; i++) {
      let t0 = performance.now();
      const incident = await getIncident(reader, `s-req-${Math.floor(random() * (records / 4))}`);
      inc.push(performance.now() - t0);
      t0 = performance.now();
      const page = await listOutcomes(reader, {
        organization: `org-${i % 10}`,
        delivery: i % 2 ? 'rejected' : 'completed',
        limit: 50,
      });
      lst.push(performance.now() - t0);
      if (!incident.ok || !page.ok) throw new Error('getIncident or listOutcomes failed');
    }
    return { inc, lst };
  },
  /** `batches` batches of 100 demo records, over the loaded organizations; records per second. */
  async ingest(label: string, batches: number) {
    const { ingestOutcomes } = await import('@/lib/server/outcomes');
    const pool = recordPool();
    const t0 = performance.now();
    for (let b = 0; b < batches; b++) {
      const records = Array.from({ length: 100 }, (_, k) => {
        const r = pool[(b * 100 + k) % pool.length];
        const tag = `${label}-${b}`;
        const task = r.observed.task && { ...r.observed.task, id: `${r.observed.task.id}-${tag}` };
        return {
          ...r,
          eventId: `${tag}-${k}`,
          requestRef: `${r.requestRef}-${tag}`,
          idempotencyKey: r.idempotencyKey && `${r.idempotencyKey}-${tag}`,
          organization: `org-${k % 10}`,
          observed: { ...r.observed, task },
        };
      });
      const stored = await ingestOutcomes(writer, { records });
      if (!stored.ok) throw new Error(`ingestOutcomes failed: ${stored.failure}`);
    }
    return (batches * 100) / ((performance.now() - t0) / 1000);
  },
  /** The hourly purge, timed; then, untimed, the clean-up the routine runs after it. */
  async purge() {
    const { purgeExpiredOutcomes } = await import('@/lib/server/retention/retention');
    const { cleanUpPurged } = await import('@/lib/server/retention/clean-up');
    const t0 = performance.now();
    const r = await purgeExpiredOutcomes({ actor: 'cli' });
    const ms = performance.now() - t0;
    if (!r.ran || r.partitionsDropped !== 1)
      throw new Error(`the purge did not take the month out: ${JSON.stringify(r)}`);
    await cleanUpPurged();
    return ms;
  },
};

// ── The benchmark ─────────────────────────────────────────────────────────────────────────────
async function main() {
  const [small, large] = [await freshDatabase(flags.databaseUrl), await freshDatabase(flags.databaseUrl)];
  const sides = [
    { label: 'small', n: flags.small, db: small },
    { label: 'large', n: flags.large, db: large },
  ];
  const secret = newSecret();
  for (const s of sides) {
    const first = await ensureMonths(s.db.sql, MONTHS - 1, MONTHS + 1); // to next month
    const span = Math.floor((Date.now() - first.getTime()) / 1000);
    log(`loading ${int(s.n)} records into the ${s.label} database…`);
    await loadOutcomes(s.db.sql, s.n, first, span, 's-');
    await settle(s.db.sql);
  }
  const env = (db: Db) => ({ DATABASE_URL: db.url, AUTH_SECRET: secret, OUTCOME_RETENTION_DAYS: '400' });
  const file = fileURLToPath(import.meta.url);
  const workers = [
    await startWorker<typeof inWorker>(file, env(small)),
    await startWorker<typeof inWorker>(file, env(large)),
  ];

  // An untimed pass of the same calls (other references, other records) first, as a serving
  // console has run them; then the sides take turns, alternating which goes first.
  for (const [i, w] of workers.entries()) {
    await w.call('lookUps', sides[i].n, Math.ceil(flags.samples / 4), 1);
    await w.call('ingest', `${sides[i].label}-warm`, Math.ceil(flags.batches / 4));
  }
  const turns = (round: number) => (round % 2 ? [1, 0] : [0, 1]);
  const inc: number[][] = [[], []];
  const lst: number[][] = [[], []];
  const rates: number[][] = [[], []];
  log(`measuring both sizes in turns: ${flags.samples} look-ups and ${flags.batches} ingest batches each…`);
  for (let round = 0; round < LOOKUP_ROUNDS; round++) {
    for (const i of turns(round)) {
      const got = await workers[i].call('lookUps', sides[i].n, Math.ceil(flags.samples / LOOKUP_ROUNDS), round + 2);
      inc[i].push(...got.inc);
      lst[i].push(...got.lst);
    }
  }
  for (let round = 0; round < INGEST_ROUNDS; round++)
    for (const i of turns(round))
      rates[i].push(
        await workers[i].call('ingest', `${sides[i].label}-${round}`, Math.ceil(flags.batches / INGEST_ROUNDS)),
      );
  const { rows: disk } = await large.sql.query<{ bytes: string }>(
    `SELECT (SELECT sum(pg_total_relation_size(relid)) FROM pg_partition_tree('outcome_records'))::bigint
       + pg_total_relation_size('outcome_event_ids') AS bytes`,
  );

  // The incident API at the large size, against its raw SQL and the framework's floor.
  const apiKey = createApiKey(large, ['outcomes:read'], 'bench-scale');
  const app = await startConsole({ DATABASE_URL: large.url, AUTH_SECRET: secret });
  const headers = { authorization: `Bearer ${apiKey}` };
  /** Times `send`, then checks what it answered (outside the time). */
  const timed = async <T>(what: string, send: () => Promise<T>, ok: (answer: T) => boolean) => {
    const t0 = performance.now();
    const answer = await send();
    const ms = performance.now() - t0;
    if (!ok(answer)) throw new Error(`${what} answered wrongly: ${JSON.stringify(answer).slice(0, 300)}`);
    return ms;
  };
  const get = (url: string) => fetch(url, { headers }).then(async (r) => ({ status: r.status, text: await r.text() }));
  const outcomes = (text: string) =>
    (JSON.parse(text) as { timeline: { kind: string }[] }).timeline.filter((e) => e.kind === 'outcome').length;
  const random = prng(7);
  const api: number[] = [];
  const raw: number[] = [];
  const floor: number[] = [];
  log(`incident API: ${flags.requests} references, one request at a time, in rotation with raw SQL and the floor…`);
  for (let k = -20; k < flags.requests; k++) {
    const ref = `s-req-${Math.floor(random() * (flags.large / 4))}`;
    const q = selectIncidentOutcomes([ref], null, 5_000).compile();
    const steps = [
      async () => {
        const url = `${app.origin}/api/v1/incidents/${ref}`;
        const ms = await timed(
          url,
          () => get(url),
          (a) => a.status === 200 && outcomes(a.text) === 4,
        );
        if (k >= 0) api.push(ms);
      },
      async () => {
        const ms = await timed(
          'raw SQL',
          () => large.sql.query(q.sql, [...q.parameters]),
          (r) => r.rowCount === 4,
        );
        if (k >= 0) raw.push(ms);
      },
      async () => {
        const ms = await timed(
          'GET /api/v1/me',
          () => get(`${app.origin}/api/v1/me`),
          (a) => a.status === 200,
        );
        if (k >= 0) floor.push(ms);
      },
    ];
    // Whichever goes first reads the reference's pages: rotate, so each sees every position alike.
    for (let n = 0; n < steps.length; n++) await steps[(k + 21 + n) % steps.length]();
  }
  await app.stop();

  // The purge: a month 24 back (past the 400 days) holding each size of rows, dropped whole.
  const purgeMs: number[] = [];
  for (const n of [flags['purge-small'], flags['purge-large']]) {
    const month = await ensureMonths(large.sql, 24, 1);
    log(`loading ${int(n)} records into one month past the limit…`);
    await loadOutcomes(large.sql, n, month, 27 * 86_400, `p${n}-`);
    await settle(large.sql);
    purgeMs.push(await workers[1].call('purge'));
    log(`purge of a month of ${int(n)}: ${purgeMs.at(-1)!.toFixed(1)} ms`);
  }

  const [ps, pl] = [p(inc[0]).p95, p(inc[1]).p95];
  const [ls, ll] = [p(lst[0]).p95, p(lst[1]).p95];
  const [is, il] = [percentile(rates[0], 50), percentile(rates[1], 50)];
  const [a95, r95, f95] = [p(api).p95, p(raw).p95, p(floor).p95];
  const sizes = `${int(flags.large)} ÷ ${int(flags.small)} records`;
  const ms = (v: number) => `${v.toFixed(2)} ms`;
  const figures: Figure[] = [
    {
      name: `incident look-up p95, ${sizes}`,
      value: pl / ps,
      unit: '×',
      note: ms(pl),
      ceiling: { name: `at ${int(flags.small)}`, value: ps, unit: 'ms' },
      target: { op: '≤', value: 1.2, unit: '×' },
    },
    {
      name: `outcome list first page p95, ${sizes}`,
      value: ll / ls,
      unit: '×',
      note: ms(ll),
      ceiling: { name: `at ${int(flags.small)}`, value: ls, unit: 'ms' },
      target: { op: '≤', value: 1.2, unit: '×' },
    },
    {
      name: `ingest (median of ${INGEST_ROUNDS} rounds), ${sizes}`,
      value: il / is,
      unit: '×',
      note: `${int(il)} records/s`,
      ceiling: { name: `at ${int(flags.small)}`, value: is, unit: 'records/s' },
      target: { op: '≥', value: 0.9, unit: '×' },
    },
    {
      name: `GET /api/v1/incidents/{ref} p95 at ${int(flags.large)}`,
      value: a95,
      unit: 'ms',
      ceiling: { name: 'floor (GET /api/v1/me) p95', value: f95, unit: 'ms' },
      target: { op: '≤', value: 50, unit: 'ms' },
    },
    {
      name: '  its p95 − the floor p95, ÷ raw SQL p95',
      value: (a95 - f95) / r95,
      unit: '×',
      note: ms(a95 - f95),
      ceiling: { name: 'raw SQL p95', value: r95, unit: 'ms' },
      target: { op: '≤', value: 2, unit: '×' },
    },
    {
      name: `purge of a month, ${int(flags['purge-large'])} ÷ ${int(flags['purge-small'])} rows`,
      value: purgeMs[1] / purgeMs[0],
      unit: '×',
      note: ms(purgeMs[1]),
      ceiling: { name: `${int(flags['purge-small'])} rows`, value: purgeMs[0], unit: 'ms' },
      target: { op: '≤', value: 1.5, unit: '×' },
    },
    {
      name: `disk per million records at ${int(flags.large)}`,
      value: Number(disk[0].bytes) / 2 ** 20 / (flags.large / 1e6),
      unit: 'MiB',
    },
  ];
  report('scale', large.pgVersion, { ...flags, lookupRounds: LOOKUP_ROUNDS, ingestRounds: INGEST_ROUNDS }, figures);
}

if (flags.worker) serveWorker(inWorker);
else runMain(main);
