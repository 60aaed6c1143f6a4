// `npm run bench:otlp`: how fast POST /api/v1/otlp/v1/traces stores MCP client spans (OTLP
// protobuf, batches of 512 as the SDK's batch processor sends them) against the same records
// over POST /api/v1/outcomes, in the same run, on the same built console and fresh database
// (bench/lib/setup.ts). Reports; exits non-zero only on real errors, never on a missed target.
//   BENCH_SECONDS (15)  BENCH_CONCURRENCY (4)  BENCH_BATCH (512)
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ExportTraceServiceResponse } from '@/lib/otlp/proto';
import { percentile, type LoadResult } from './lib/load';
import { recordPool } from './lib/records';
import { batches, type Batch } from './lib/otlp-batches';
import { cleanup, createApiKey, setUpBench } from './lib/setup';
import { envNumber, int, load1, log, machine, ms, runMain, table, verdict } from './lib/report';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SECONDS = envNumber('BENCH_SECONDS', 15);
const C = Math.floor(envNumber('BENCH_CONCURRENCY', 4));
const BATCH = Math.floor(envNumber('BENCH_BATCH', 512));
const TARGET_OF_NATIVE = 0.8;

type Sender = { take: () => Batch };

async function runPhase(
  kind: 'json' | 'proto',
  url: string,
  apiKey: string,
  b: Sender,
  seconds: number,
  out: LoadResult,
): Promise<void> {
  const headers = {
    authorization: `Bearer ${apiKey}`,
    'content-type': kind === 'json' ? 'application/json' : 'application/x-protobuf',
  };
  const started = performance.now();
  const until = started + seconds * 1000;
  const client = async () => {
    while (performance.now() < until) {
      const batch = b.take();
      const t0 = performance.now();
      try {
        const res = await fetch(url, { method: 'POST', headers, body: kind === 'json' ? batch.json : batch.proto });
        const bytes = new Uint8Array(await res.arrayBuffer());
        const took = performance.now() - t0;
        let stored = 0;
        if (res.status === 200 && kind === 'json') {
          stored = Number(/^\{"accepted":(\d+)/.exec(new TextDecoder().decode(bytes.subarray(0, 40)))?.[1] ?? 0);
        } else if (res.status === 200) {
          const answer = ExportTraceServiceResponse.decode(bytes) as { partialSuccess?: { rejectedSpans?: unknown } };
          if (Number(answer.partialSuccess?.rejectedSpans ?? 0) === 0) stored = BATCH;
        }
        if (stored === BATCH) {
          out.requests++;
          out.accepted += stored;
          out.latenciesMs.push(took);
        } else {
          out.errors++;
          out.firstError ??= `HTTP ${res.status}: ${stored} stored; ${new TextDecoder().decode(bytes).slice(0, 600)}`;
        }
      } catch (err) {
        out.errors++;
        out.firstError ??= `request failed: ${err instanceof Error ? err.message : err}`;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  await Promise.all(Array.from({ length: C }, client));
  out.seconds += (performance.now() - started) / 1000;
}

const emptyResult = (): LoadResult => ({
  requests: 0,
  accepted: 0,
  errors: 0,
  firstError: null,
  latenciesMs: [],
  seconds: 0,
});

async function main(): Promise<number> {
  const { startLoad, db, pgVersion, app, prepared } = await setUpBench(root, ({ db: { url } }) => ({
    apiKey: createApiKey(root, url),
  }));
  const { apiKey } = prepared;
  // Only what a client span can say: calls that were sent (a local block makes no MCP span).
  const pool = recordPool().filter((r) => r.observed.sent && r.observed.clientError !== 'cancelled');
  const nativeUrl = `${app.origin}/api/v1/outcomes`;
  const otlpUrl = `${app.origin}/api/v1/otlp/v1/traces`;
  // Enough for a phase at 60 batches/s; alternating halves, so the table's growth and the
  // machine's drift fall on both alike.
  log(`making the batches (${BATCH} records each)…`);
  const supply = batches(pool, BATCH, Math.ceil(SECONDS * 60) + 8 * C);

  log('warming up…');
  const warm = [emptyResult(), emptyResult()];
  await runPhase('json', nativeUrl, apiKey, supply, 2, warm[0]);
  await runPhase('proto', otlpUrl, apiKey, supply, 2, warm[1]);
  const n = emptyResult();
  const o = emptyResult();
  for (let half = 0; half < 2; half++) {
    log(`native JSON batches of ${BATCH}, ${C} clients, ${SECONDS / 2} s (load ${load1()})…`);
    await runPhase('json', nativeUrl, apiKey, supply, SECONDS / 2, n);
    log(`OTLP protobuf batches of ${BATCH}, ${C} clients, ${SECONDS / 2} s (load ${load1()})…`);
    await runPhase('proto', otlpUrl, apiKey, supply, SECONDS / 2, o);
  }
  if (supply.madeDuringLoad())
    log(`${supply.madeDuringLoad()} batches had to be made during the load (the generator's CPU counted in)`);
  for (const [name, r] of [
    ['warm-up', warm[0]],
    ['warm-up', warm[1]],
    ['native', n],
    ['OTLP', o],
  ] as const)
    if (r.errors) console.error(`[bench] ${name}: ${r.errors} failed request(s); first: ${r.firstError}`);

  const nativeRps = n.accepted / n.seconds;
  const otlpRps = o.accepted / o.seconds;
  const ratio = otlpRps / nativeRps;
  const row = (name: string, r: LoadResult, rps: number, unit: string) => [
    name,
    `${int(rps)} ${unit}/s`,
    `${int(r.requests)} (${int(r.accepted)})`,
    ms(percentile(r.latenciesMs, 50)),
    ms(percentile(r.latenciesMs, 99)),
    String(r.errors),
  ];
  console.log(`
Countersign OTLP ingestion benchmark
  machine   ${machine(pgVersion)}
  database  ${db.where}
  load avg  ${startLoad} at start, ${load1()} at end (1 min)

${table([
  ['phase', 'throughput', 'requests (stored)', 'p50', 'p99', 'errors'],
  row(`POST /api/v1/outcomes, JSON batches of ${BATCH}, C=${C}`, n, nativeRps, 'records'),
  row(`OTLP protobuf, batches of ${BATCH} spans, C=${C}`, o, otlpRps, 'spans'),
])}
  The same records both ways (built from ${int(pool.length)} demo records; random ids as an SDK makes them), each
  OTLP span one record; two alternating halves of ${SECONDS / 2} s each.

${table([
  ['target', 'measured', ''],
  [`OTLP ÷ native ≥ ${TARGET_OF_NATIVE}`, ratio.toFixed(2), verdict(ratio >= TARGET_OF_NATIVE)],
])}`);
  const failed = [...warm, n, o].reduce((sum, r) => sum + r.errors, 0);
  if (failed) console.error(`\n[bench] ${failed} request(s) failed: the figures above are not trustworthy.`);
  return failed ? 1 : 0;
}

runMain(main, cleanup);
