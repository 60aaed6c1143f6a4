// OTLP/HTTP trace export bodies (protobuf or JSON) decoded into one plain shape the mapping
// reads (map.ts). Pure. A body that does not decode throws OtlpDecodeError (the route's 400);
// a span with odd values still decodes and is rejected by the mapping, naming what is wrong.
import { ExportTraceServiceRequest, type Int64, type PbAnyValue, type PbKeyValue, type PbRequest } from './proto';

/** What an attribute holds, as far as the mapping cares: a scalar, or something else (array, map, bytes). */
export type AttrValue = string | number | boolean | { other: 'array' | 'kvlist' | 'bytes' | 'empty' };
export type Attributes = Map<string, AttrValue>;

export type OtlpSpan = {
  /** Lowercase hex as sent; the mapping checks its length. */
  traceId: string;
  spanId: string;
  /** OTLP SpanKind: 3 is CLIENT. */
  kind: number;
  /** Unix time in milliseconds (fractional); 0 when not set. */
  startMs: number;
  endMs: number;
  /** OTLP StatusCode: 2 is ERROR. */
  statusCode: number;
  attributes: Attributes;
  resource: Attributes;
};

export class OtlpDecodeError extends Error {}

// Opt-in content attributes (raw tool arguments and results): never stored, never shown, so
// never even read. Their values are not converted or kept.
export const DROPPED_ATTRIBUTES = new Set(['gen_ai.tool.call.arguments', 'gen_ai.tool.call.result']);

const int64 = (v: Int64 | undefined): number =>
  v === undefined ? 0 : typeof v === 'number' ? v : (v.high >>> 0) * 2 ** 32 + (v.low >>> 0);
// intValue is signed: a negative JSON-RPC code arrives as a two's-complement int64.
const signed64 = (v: Int64): number => (typeof v === 'number' ? v : v.high * 2 ** 32 + (v.low >>> 0));

const hex = (b: Uint8Array | undefined) => (b ? Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex') : '');

function pbValue(v: PbAnyValue | undefined): AttrValue {
  if (!v) return { other: 'empty' };
  // protobufjs leaves unset fields on the prototype: own properties are what was sent.
  if (Object.hasOwn(v, 'stringValue')) return v.stringValue!;
  if (Object.hasOwn(v, 'intValue')) return signed64(v.intValue!);
  if (Object.hasOwn(v, 'boolValue')) return v.boolValue!;
  if (Object.hasOwn(v, 'doubleValue')) return v.doubleValue!;
  if (Object.hasOwn(v, 'arrayValue')) return { other: 'array' };
  if (Object.hasOwn(v, 'kvlistValue')) return { other: 'kvlist' };
  if (Object.hasOwn(v, 'bytesValue')) return { other: 'bytes' };
  return { other: 'empty' };
}

function pbAttributes(list: PbKeyValue[] | undefined): Attributes {
  const out: Attributes = new Map();
  for (const kv of list ?? []) {
    const key = kv.key ?? '';
    if (DROPPED_ATTRIBUTES.has(key) || out.has(key)) continue; // OTLP: the first of duplicate keys counts
    out.set(key, pbValue(kv.value));
  }
  return out;
}

/** An `application/x-protobuf` ExportTraceServiceRequest. */
export function decodeProtobuf(body: Uint8Array): OtlpSpan[] {
  let message: PbRequest;
  try {
    message = ExportTraceServiceRequest.decode(body) as PbRequest;
  } catch (err) {
    throw new OtlpDecodeError(
      `The body is not a protobuf ExportTraceServiceRequest (${err instanceof Error ? err.message : 'unreadable'}).`,
    );
  }
  const spans: OtlpSpan[] = [];
  for (const rs of message.resourceSpans ?? []) {
    const resource = pbAttributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? [])
      for (const s of ss.spans ?? [])
        spans.push({
          traceId: hex(s.traceId),
          spanId: hex(s.spanId),
          kind: s.kind ?? 0,
          startMs: int64(s.startTimeUnixNano) / 1e6,
          endMs: int64(s.endTimeUnixNano) / 1e6,
          statusCode: s.status?.code ?? 0,
          attributes: pbAttributes(s.attributes),
          resource,
        });
  }
  return spans;
}

// ── OTLP/JSON (the protobuf JSON mapping; ids as hex, 64-bit integers as strings or numbers) ──

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function list(v: unknown, where: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new OtlpDecodeError(`${where} must be an array.`);
  return v;
}
function object(v: unknown, where: string): Json {
  if (v === undefined || v === null) return {};
  if (!isObject(v)) throw new OtlpDecodeError(`${where} must be an object.`);
  return v;
}
function jsonInt(v: unknown, where: string): number {
  if (v === undefined || v === null) return 0;
  const n = typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw new OtlpDecodeError(`${where} must be an integer.`);
  return n;
}
// Enums are integers in OTLP/JSON; the protobuf JSON mapping also allows their names.
const KINDS: Record<string, number> = { SPAN_KIND_INTERNAL: 1, SPAN_KIND_SERVER: 2, SPAN_KIND_CLIENT: 3 };
const CODES: Record<string, number> = { STATUS_CODE_UNSET: 0, STATUS_CODE_OK: 1, STATUS_CODE_ERROR: 2 };
const jsonEnum = (v: unknown, names: Record<string, number>, where: string) =>
  typeof v === 'string' && !/^-?\d+$/.test(v) ? (names[v] ?? -1) : jsonInt(v, where);
const jsonId = (v: unknown, where: string) => {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new OtlpDecodeError(`${where} must be a hex string.`);
  return v.toLowerCase();
};

function jsonValue(v: unknown, where: string): AttrValue {
  const o = object(v, where);
  if (typeof o.stringValue === 'string') return o.stringValue;
  if (o.intValue !== undefined) return jsonInt(o.intValue, `${where}.intValue`);
  if (typeof o.boolValue === 'boolean') return o.boolValue;
  if (typeof o.doubleValue === 'number') return o.doubleValue;
  if (o.arrayValue !== undefined) return { other: 'array' };
  if (o.kvlistValue !== undefined) return { other: 'kvlist' };
  if (o.bytesValue !== undefined) return { other: 'bytes' };
  return { other: 'empty' };
}

function jsonAttributes(v: unknown, where: string): Attributes {
  const out: Attributes = new Map();
  list(v, where).forEach((item, i) => {
    const kv = object(item, `${where}[${i}]`);
    if (typeof kv.key !== 'string') throw new OtlpDecodeError(`${where}[${i}].key must be a string.`);
    if (DROPPED_ATTRIBUTES.has(kv.key) || out.has(kv.key)) return;
    out.set(kv.key, jsonValue(kv.value, `${where}[${i}].value`));
  });
  return out;
}

/** An `application/json` ExportTraceServiceRequest. */
export function decodeJson(text: string): OtlpSpan[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new OtlpDecodeError('The body is not valid JSON.');
  }
  if (!isObject(parsed)) throw new OtlpDecodeError('The body must be a JSON object (an ExportTraceServiceRequest).');
  const spans: OtlpSpan[] = [];
  list(parsed.resourceSpans, 'resourceSpans').forEach((rsv, r) => {
    const rs = object(rsv, `resourceSpans[${r}]`);
    const resource = jsonAttributes(
      object(rs.resource, `resourceSpans[${r}].resource`).attributes,
      `resourceSpans[${r}].resource.attributes`,
    );
    list(rs.scopeSpans, `resourceSpans[${r}].scopeSpans`).forEach((ssv, s) => {
      const at = `resourceSpans[${r}].scopeSpans[${s}]`;
      list(object(ssv, at).spans, `${at}.spans`).forEach((sv, n) => {
        const w = `${at}.spans[${n}]`;
        const span = object(sv, w);
        spans.push({
          traceId: jsonId(span.traceId, `${w}.traceId`),
          spanId: jsonId(span.spanId, `${w}.spanId`),
          kind: jsonEnum(span.kind, KINDS, `${w}.kind`),
          startMs: jsonInt(span.startTimeUnixNano, `${w}.startTimeUnixNano`) / 1e6,
          endMs: jsonInt(span.endTimeUnixNano, `${w}.endTimeUnixNano`) / 1e6,
          statusCode: jsonEnum(object(span.status, `${w}.status`).code, CODES, `${w}.status.code`),
          attributes: jsonAttributes(span.attributes, `${w}.attributes`),
          resource,
        });
      });
    });
  });
  return spans;
}
