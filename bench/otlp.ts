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
import { percentile, runLoad, type LoadResult } from './lib/load';
import { bodies, recordPool } from './lib/records';
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

type OtlpBodies = { next: () => Uint8Array; spans: number };

/**
 * `count` protobuf requests of `size` spans, grouped by agent (service.name) as an SDK groups by
 * resource. Each send stamps fresh trace ids into a copy of its template: new spans, same bytes.
 */
function otlpBodies(pool: Outcome[], size: number, count: number): OtlpBodies {
  const templates = Array.from({ length: count }, (_, t) => {
    const records = Array.from({ length: size }, (_, i) => pool[(t * 97 + i) % pool.length]);
    const byAgent = new Map<string, unknown[]>();
    const traceIds: Buffer[] = [];
    for (const r of records) {
      const start = Date.parse(r.occurredAt) * 1e6;
      const traceId = randomBytes(16);
      traceIds.push(traceId);
      const span = {
        traceId,
        spanId: randomBytes(8),
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
    const bytes = Buffer.from(ExportTraceServiceRequest.encode(message).finish());
    const offsets = traceIds.map((id) => bytes.indexOf(id));
    if (offsets.some((o) => o < 0)) throw new Error('bench: a trace id is not in its encoded request');
    return { bytes, offsets };
  });
  let n = 0;
  return {
    spans: size,
    next: () => {
      const { bytes, offsets } = templates[n++ % count];
      const copy = Buffer.from(bytes);
      for (const o of offsets) randomBytes(8).copy(copy, o);
      return copy;
    },
  };
}

async function runOtlpLoad(url: string, apiKey: string, b: OtlpBodies, seconds: number): Promise<LoadResult> {
  const out: LoadResult = { requests: 0, accepted: 0, errors: 0, firstError: null, latenciesMs: [], seconds: 0 };
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/x-protobuf' };
  const started = performance.now();
  const until = started + seconds * 1000;
  const client = async () => {
    while (performance.now() < until) {
      const body = b.next();
      const t0 = performance.now();
      try {
        const res = await fetch(url, { method: 'POST', headers, body: new Uint8Array(body) });
        const bytes = new Uint8Array(await res.arrayBuffer());
        const took = performance.now() - t0;
        const answer =
          res.status === 200
            ? (ExportTraceServiceResponse.decode(bytes) as { partialSuccess?: { rejectedSpans?: unknown } })
            : null;
        const rejected = Number(answer?.partialSuccess?.rejectedSpans ?? 0);
        if (answer && rejected === 0) {
          out.requests++;
          out.accepted += b.spans;
          out.latenciesMs.push(took);
        } else {
          out.errors++;
          out.firstError ??= `HTTP ${res.status}: ${rejected} rejected ${new TextDecoder().decode(bytes).slice(0, 600)}`;
        }
      } catch (err) {
        out.errors++;
        out.firstError ??= `request failed: ${err instanceof Error ? err.message : err}`;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  await Promise.all(Array.from({ length: C }, client));
  out.seconds = (performance.now() - started) / 1000;
  return out;
}

async function main(): Promise<number> {
  const { startLoad, db, pgVersion, app, prepared } = await setUpBench(root, ({ db: { url } }) => ({
    apiKey: createApiKey(root, url),
  }));
  const { apiKey } = prepared;
  // Only what a client span can say: calls that were sent (a local block makes no MCP span).
  const pool = recordPool().filter((r) => r.observed.sent && r.observed.clientError !== 'cancelled');
  const native = bodies(pool, BATCH, 16);
  const otlp = otlpBodies(pool, BATCH, 16);
  const nativeUrl = `${app.origin}/api/v1/outcomes`;
  const otlpUrl = `${app.origin}/api/v1/otlp/v1/traces`;

  log('warming up…');
  const warm = [
    await runLoad({ url: nativeUrl, apiKey, bodies: native, concurrency: C, requestsPerClient: 3 }),
    await runOtlpLoad(otlpUrl, apiKey, otlp, 2),
  ];
  log(`native batches of ${BATCH}, ${C} clients, ${SECONDS} s (load ${load1()})…`);
  const n = await runLoad({ url: nativeUrl, apiKey, bodies: native, concurrency: C, seconds: SECONDS });
  log(`OTLP protobuf batches of ${BATCH}, ${C} clients, ${SECONDS} s (load ${load1()})…`);
  const o = await runOtlpLoad(otlpUrl, apiKey, otlp, SECONDS);
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
  The same ${int(pool.length)} records both ways; each OTLP span becomes one record.

${table([
  ['target', 'measured', ''],
  [`OTLP ÷ native ≥ ${TARGET_OF_NATIVE}`, ratio.toFixed(2), verdict(ratio >= TARGET_OF_NATIVE)],
])}`);
  const failed = [...warm, n, o].reduce((sum, r) => sum + r.errors, 0);
  if (failed) console.error(`\n[bench] ${failed} request(s) failed: the figures above are not trustworthy.`);
  return failed ? 1 : 0;
}

runMain(main, cleanup);
