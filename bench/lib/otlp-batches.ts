// The records of bench:otlp, both ways: a JSON body for POST /api/v1/outcomes and an OTLP
// protobuf body of the same records for POST /api/v1/otlp/v1/traces.
import { randomBytes } from 'node:crypto';
import { ExportTraceServiceRequest } from '@/lib/otlp/proto';
import type { Outcome } from '@/lib/outcomes/schemas';

// ── The same records as OTLP spans (docs/api.md "OpenTelemetry in", read backwards) ───────────────

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
export type Batch = { json: string; proto: Uint8Array<ArrayBuffer> };

/**
 * The records of batch `t` with this batch's own identifiers: a fresh trace id and span id per
 * record, and the eventId the mapping derives from them (`otel:<traceId>:<spanId>`, random, as
 * an SDK's `evt_<uuid>` is), so both endpoints store the very same rows and pay the same for
 * their place in the indexes; request references, keys and sessions tagged per batch.
 */
export function makeBatch(pool: Outcome[], size: number, t: number): Batch {
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
export function batches(pool: Outcome[], size: number, count: number) {
  const made = Array.from({ length: count }, (_, t) => makeBatch(pool, size, t));
  let next = 0;
  let extra = 0;
  return {
    take: (): Batch => made[next++] ?? (extra++, makeBatch(pool, size, next)),
    madeDuringLoad: () => extra,
  };
}
