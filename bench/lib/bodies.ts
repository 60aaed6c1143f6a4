// Ingest bodies for wrk (bench/lib/wrk.ts): realistic, valid outcome records (the demo stories:
// every classification row, masked e-mails and phone numbers, multi-attempt idempotency keys),
// as native JSON batches and as OTLP protobuf spans (docs/api.md "OpenTelemetry in", read
// backwards). Each is a template: MARK stands where a request's own tag goes (event ids, request
// references, keys, sessions, MCP task ids), so no two requests store the same record.
import { ExportTraceServiceRequest } from '@/lib/otlp/proto';
import type { Outcome } from '@/lib/outcomes/schemas';
import { demoOutcomes } from '../../scripts/demo-outcomes';
import { MARK } from './wrk';

/** About 1,300 distinct records from the demo stories, each with a session id. */
export const recordPool = (): Outcome[] =>
  demoOutcomes(Date.now(), 400).map((r) => ({ ...r, sessionId: `sess_${r.requestRef}` }));

/** Only what a client span can say: calls that were sent (a local block makes no MCP span). */
export const spanPool = () => recordPool().filter((r) => r.observed.sent && r.observed.clientError !== 'cancelled');

function stamped(r: Outcome, i: number): Outcome {
  return {
    ...r,
    eventId: `evt_${MARK}_${i}`,
    requestRef: `${r.requestRef}_${MARK}`,
    idempotencyKey: r.idempotencyKey && `${r.idempotencyKey}_${MARK}`,
    sessionId: `${r.sessionId}_${MARK}`,
    // A batch's MCP tasks are its own (else every batch would share the demo's tasks and their locks).
    observed: r.observed.task
      ? { ...r.observed, task: { ...r.observed.task, id: `${r.observed.task.id}_${MARK}` } }
      : r.observed,
  };
}

const slice = (pool: Outcome[], size: number, t: number) =>
  Array.from({ length: size }, (_, i) => pool[(t * 97 + i) % pool.length]);

/** `count` different POST /api/v1/outcomes bodies of `size` records each. */
export const jsonBodies = (pool: Outcome[], size: number, count: number) =>
  Array.from({ length: count }, (_, t) => Buffer.from(JSON.stringify({ records: slice(pool, size, t).map(stamped) })));

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

/**
 * The same records as `jsonBodies` (from a span pool) as POST /api/v1/otlp/v1/traces bodies: one
 * client span per record, its trace id the request's tag followed by the span's number, so every
 * span gets its own event id (`otel:<traceId>:<spanId>`).
 */
export const otlpBodies = (pool: Outcome[], size: number, count: number) =>
  Array.from({ length: count }, (_, t) => {
    const byAgent = new Map<string, unknown[]>();
    slice(pool, size, t).forEach((base, i) => {
      const r = stamped(base, i);
      const traceId = Buffer.alloc(16);
      traceId.write(MARK, 'latin1');
      traceId.writeUInt32BE(i, 12);
      const start = Date.parse(r.occurredAt) * 1e6;
      const span = {
        traceId,
        spanId: Buffer.from([1, 2, 3, 4, 5, 6, (i >> 8) & 255, i & 255]),
        kind: 3,
        startTimeUnixNano: start,
        endTimeUnixNano: start + (r.durationMs ?? 100) * 1e6,
        attributes: attributes(r),
      };
      byAgent.set(r.agent ?? 'agent', [...(byAgent.get(r.agent ?? 'agent') ?? []), span]);
    });
    const message = {
      resourceSpans: [...byAgent].map(([agent, spans]) => ({
        resource: { attributes: kv('service.name', agent) },
        scopeSpans: [{ spans }],
      })),
    };
    return Buffer.from(ExportTraceServiceRequest.encode(message).finish());
  });
