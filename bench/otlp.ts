// `npm run bench:otlp`: how fast POST /api/v1/otlp/v1/traces stores MCP client spans (OTLP
// protobuf, batches of 512 as the SDK's batch processor sends them) against the same records
// over POST /api/v1/outcomes, in the same run, on the same built console and fresh database
// (bench/lib/setup.ts). Reports; exits non-zero only on real errors, never on a missed target.
//   BENCH_SECONDS (15)  BENCH_CONCURRENCY (4)  BENCH_BATCH (512)
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ExportTraceServiceRequest, ExportTraceServiceResponse } from '@/lib/otlp/proto';
import type { Outcome } from '@/lib/outcomes/schemas';
import { percentile, type LoadResult } from './lib/load';
import { recordPool } from './lib/records';
import { cleanup, createApiKey, setUpBench } from './lib/setup';
import { envNumber, int, load1, log, machine, ms, runMain, table, verdict } from './lib/report';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SECONDS = envNumber('BENCH_SECONDS', 15);
const C = Math.floor(envNumber('BENCH_CONCURRENCY', 4));
const BATCH = Math.floor(envNumber('BENCH_BATCH', 512));
const TARGET_OF_NATIVE = 0.8;

// ── The same records as OTLP spans (API.md "OpenTelemetry in", read backwards) ───────────────

type KeyValue = { key: string; value: Record<string, unknown> };
const kv = (key: string, v: string | number | boolean | null | undefined): KeyValue[] =>
  v === null || v === undefined
    ? []
    : [
        {
          key,
          value:
            typeof v === 'string' ? { stringValue: v } : typeof v === 'number' ? { intValue: v } : { boolValue: v },
        },
      ];

function errorType(o: Outcome['observed']): string | undefined {
  if (o.clientError === 'timeout') return '-32001';
  if (o.clientError === 'connection_lost') return '-32000';
  if (o.result?.isError) return 'tool_error';
  if (o.jsonRpcErrorCode != null) return String(o.jsonRpcErrorCode);
  if (o.httpStatus != null && o.httpStatus >= 400) return String(o.httpStatus);
  if (o.clientError || !o.result) return '_OTHER';
  return undefined;
}

function attributes(r: Outcome): KeyValue[] {
  const o = r.observed;
  const a = r.tool.annotations;
  return [
    ...kv('mcp.method.name', 'tools/call'),
    ...kv('gen_ai.tool.name', r.tool.name),
    ...kv('error.type', errorType(o)),
    ...kv('http.response.status_code', o.httpStatus),
    ...kv('rpc.response.status_code', o.jsonRpcErrorCode == null ? null : String(o.jsonRpcErrorCode)),
    ...kv('jsonrpc.request.id', r.mcpRequestId),
    ...kv('mcp.session.id', r.sessionId),
    ...kv('mcp.protocol.version', r.protocolVersion),
    ...kv('countersign.server', r.server),
    ...kv('countersign.request_ref', r.requestRef),
    ...kv('countersign.principal', r.principal),
    ...kv('countersign.organization', r.organization),
    ...kv('countersign.idempotency_key', r.idempotencyKey),
    ...kv('countersign.args_digest', r.argsDigest),
    ...kv('countersign.summary', r.summary),
    ...kv('countersign.grant_id', r.grantId),
    ...kv('countersign.error_category', o.result?.errorCategory),
    ...kv('countersign.output_validation', o.result?.outputValidation),
    ...kv('countersign.tool.read_only_hint', a?.readOnlyHint),
    ...kv('countersign.tool.destructive_hint', a?.destructiveHint),
    ...kv('countersign.tool.idempotent_hint', a?.idempotentHint),
    ...kv('countersign.tool.open_world_hint', a?.openWorldHint),
  ];
}

/** One batch, both ways: the same records as a JSON body and as an OTLP protobuf body. */
type Batch = { json: string; proto: Uint8Array<ArrayBuffer> };

/**
 * The records of batch `t` with this batch's own identifiers: a fresh trace id and span id per
 * record, and the eventId the mapping derives from them (`otel:<traceId>:<spanId>`, random, as
 * an SDK's `evt_<uuid>` is), so both endpoints store the very same rows and pay the same for
 * their place in the indexes; request references, keys and sessions tagged per batch.
 */
function makeBatch(pool: Outcome[], size: number, t: number): Batch {
  const tag = randomBytes(5).toString('hex');
  const records: Outcome[] = [];
  const byAgent = new Map<string, unknown[]>();
  for (let i = 0; i < size; i++) {
    const base = pool[(t * 97 + i) % pool.length];
    const traceId = randomBytes(16);
    const spanId = randomBytes(8);
    const r: Outcome = {
      ...base,
      eventId: `otel:${traceId.toString('hex')}:${spanId.toString('hex')}`,
      requestRef: `${base.requestRef}_${tag}`,
      idempotencyKey: base.idempotencyKey && `${base.idempotencyKey}_${tag}`,
      sessionId: base.sessionId && `${base.sessionId}_${tag}`,
    };
    records.push(r);
    const start = Date.parse(r.occurredAt) * 1e6;
    const span = {
      traceId,
      spanId,
      kind: 3,
      startTimeUnixNano: start,
      endTimeUnixNano: start + (r.durationMs ?? 100) * 1e6,
      attributes: attributes(r),
    };
    byAgent.set(r.agent ?? 'agent', [...(byAgent.get(r.agent ?? 'agent') ?? []), span]);
  }
  const message = {
    resourceSpans: [...byAgent].map(([agent, spans]) => ({
      resource: { attributes: kv('service.name', agent) },
      scopeSpans: [{ spans }],
    })),
  };
  return {
    json: JSON.stringify({ records }),
    proto: new Uint8Array(ExportTraceServiceRequest.encode(message).finish()),
  };
}

/**
 * Batches made before the clock starts (so the load generator only sends), each sent once;
 * more are made on demand if a phase outruns them (counted, and said).
 */
function batches(pool: Outcome[], size: number, count: number) {
  const made = Array.from({ length: count }, (_, t) => makeBatch(pool, size, t));
  let next = 0;
  let extra = 0;
  return {
    take: (): Batch => made[next++] ?? (extra++, makeBatch(pool, size, next)),
    madeDuringLoad: () => extra,
  };
}

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
