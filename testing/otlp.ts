// For the OTLP tests (never imported by the app): the console's OTLP route behind a real HTTP
// listener (the route handler in-process, each request a real `Request`), the real OpenTelemetry
// JS SDK making and exporting spans to it, and what the database holds afterwards.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { diag, DiagLogLevel, SpanKind, SpanStatusCode, type Attributes } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { CompressionAlgorithm } from '@opentelemetry/otlp-exporter-base';
import { ProtobufTraceSerializer, type IExportTraceServiceResponse } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  InMemorySpanExporter,
  NodeTracerProvider,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-node';
import { POST } from '@/app/api/v1/otlp/v1/traces/route';
import { db } from '@/lib/server/db/db';

export type Console = { origin: string; close: () => Promise<void> };

/** An HTTP server on a free port whose every request goes to POST /api/v1/otlp/v1/traces. */
export async function startOtlpConsole(): Promise<Console> {
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers.set(k, String(v));
    const request = new Request(`http://127.0.0.1${req.url}`, {
      method: req.method,
      headers,
      body: req.method === 'POST' ? Buffer.concat(chunks) : undefined,
    });
    const response = await POST(request, { params: Promise.resolve({}) });
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export type SpanSpec = {
  attributes: Attributes;
  kind?: SpanKind;
  status?: SpanStatusCode;
  /** Milliseconds between start and end. */
  durationMs?: number;
};

/** Finished SDK spans, as an instrumented MCP client makes them (one provider, `service.name` on the resource). */
export function makeSpans(specs: SpanSpec[], serviceName = 'otel-agent'): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: [new SimpleSpanProcessor(memory)],
  });
  const tracer = provider.getTracer('countersign-otlp-test');
  const start = Date.UTC(2026, 10, 30, 12, 0, 0);
  specs.forEach((s, i) => {
    const begin = start + i * 1000;
    const span = tracer.startSpan(`tools/call ${String(s.attributes['gen_ai.tool.name'] ?? '')}`, {
      kind: s.kind ?? SpanKind.CLIENT,
      attributes: s.attributes,
      startTime: begin,
    });
    if (s.status !== undefined) span.setStatus({ code: s.status });
    span.end(begin + (s.durationMs ?? 250));
  });
  return memory.getFinishedSpans();
}

export type Exported = { result: ExportResult; warnings: string[] };

/** The SDK's own OTLP exporter (protobuf or HTTP/JSON) sending `spans` to the console. */
export async function exportWithSdk(
  origin: string,
  token: string,
  spans: ReadableSpan[],
  protocol: 'protobuf' | 'json',
  compression: 'gzip' | 'none' = 'none',
): Promise<Exported> {
  const warnings: string[] = [];
  const log = (...args: unknown[]) => warnings.push(args.map(String).join(' '));
  diag.setLogger({ error: log, warn: log, info: () => {}, debug: () => {}, verbose: () => {} }, DiagLogLevel.WARN);
  const config = {
    url: `${origin}/api/v1/otlp/v1/traces`,
    headers: { authorization: `Bearer ${token}` },
    compression: compression as CompressionAlgorithm,
  };
  const exporter = protocol === 'protobuf' ? new ProtoExporter(config) : new JsonExporter(config);
  try {
    const result = await new Promise<ExportResult>((resolve) => exporter.export(spans, resolve));
    return { result, warnings };
  } finally {
    await exporter.shutdown();
    diag.disable();
  }
}
export const SUCCESS = ExportResultCode.SUCCESS;

/** The SDK's protobuf serialization of `spans`, for sending by hand (to read the answer). */
export const serialize = (spans: ReadableSpan[]): Uint8Array<ArrayBuffer> =>
  new Uint8Array(ProtobufTraceSerializer.serializeRequest(spans)!);
/** An ExportTraceServiceResponse read with the SDK's own deserializer. */
export const deserialize = (bytes: Uint8Array): IExportTraceServiceResponse =>
  ProtobufTraceSerializer.deserializeResponse(bytes);

export type StoredOtelRecord = {
  event_id: string;
  request_ref: string;
  tool_name: string;
  server: string;
  agent: string | null;
  boundary: string;
  delivery: string;
  category: string;
  retry: string;
  observed: unknown;
  whole: string;
};

/** The stored records whose event id starts with `otel:` and request reference with `refPrefix`. */
export async function storedOtelRecords(refPrefix: string): Promise<StoredOtelRecord[]> {
  return db.$queryRaw<StoredOtelRecord[]>`
    SELECT event_id, request_ref, tool_name, server, agent, boundary::text, delivery::text, category::text,
           retry::text, observed, row_to_json(r)::text AS whole
      FROM outcome_records r
     WHERE event_id LIKE 'otel:%' AND request_ref LIKE ${`${refPrefix}%`}
     ORDER BY occurred_at`;
}

/** Rows anywhere in outcome_records whose any column contains `needle`. */
export async function outcomeRowsContaining(needle: string): Promise<number> {
  const [row] = await db.$queryRaw<{ n: bigint }[]>`
    SELECT count(*) AS n FROM outcome_records r WHERE row_to_json(r)::text LIKE ${`%${needle}%`}`;
  return Number(row.n);
}
