// POST /api/v1/otlp/v1/traces after the route wrapper has checked the credential, the rate and
// the permission: read, decode, map (lib/otlp), then store through the one outcome ingestion,
// which classifies, masks and deduplicates exactly as for POST /api/v1/outcomes.
import 'server-only';
import type { RemoteActor } from '@/lib/auth/actor';
import type { Outcome } from '@/lib/outcomes/schemas';
import { readOtlpBody } from '@/lib/otlp/body';
import { decodeJson, decodeProtobuf, OtlpDecodeError, type OtlpSpan } from '@/lib/otlp/decode';
import { ATTRIBUTE_OF, mapSpan } from '@/lib/otlp/map';
import { exportResponse, rejectionMessage, type Rejection } from '@/lib/otlp/response';
import { validateRecord } from '@/lib/otlp/validate';
import { ingestOutcomes } from '@/lib/server/outcomes';
import { MAX_BODY_BYTES, problem } from '@/lib/server/http/api-route';

/** The ingestion's own batch ceiling (outcomeBatchSchema). */
const INGEST_BATCH = 1000;
type Pending = { ref: string; record: Outcome };

function decode(encoding: 'protobuf' | 'json', bytes: Uint8Array): OtlpSpan[] | Response {
  try {
    if (encoding === 'protobuf') return decodeProtobuf(bytes);
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
    } catch {
      return problem('bad_request', 'The body is not valid UTF-8.');
    }
    return decodeJson(text);
  } catch (err) {
    if (err instanceof OtlpDecodeError) return problem('bad_request', err.message);
    throw err;
  }
}

// A refusal of the ingestion names records by index; it becomes the span's rejection.
function ingestReason(field: string, message: string): string {
  if (field === 'eventId') return 'this traceId and spanId were stored before with other content';
  return `${ATTRIBUTE_OF[field] ?? field}: ${message}`;
}

/**
 * Stores one chunk. The ingestion stores a batch whole or not at all: the records it refuses by
 * name are rejected and the rest sent again (a few rounds: a concurrent export can clash anew).
 */
async function store(actor: RemoteActor, chunk: Pending[], rejected: Rejection[]): Promise<Response | null> {
  let pending = chunk;
  for (let round = 0; pending.length && round < 3; round++) {
    const result = await ingestOutcomes(actor, { records: pending.map((p) => p.record) });
    if (result.ok) return null;
    const named = new Map<number, string>();
    for (const e of result.errors ?? []) {
      const m = /^records\.(\d+)\.?(.*)$/.exec(e.path);
      if (m && !named.has(Number(m[1]))) named.set(Number(m[1]), ingestReason(m[2], e.message));
    }
    if (!named.size) return problem(result.failure, result.detail, result.errors);
    pending.forEach((p, i) => {
      const reason = named.get(i);
      if (reason) rejected.push({ ref: p.ref, reason });
    });
    pending = pending.filter((_, i) => !named.has(i));
  }
  for (const p of pending) rejected.push({ ref: p.ref, reason: 'clashed with a concurrent export; export it again' });
  return null;
}

export async function exportTraces(actor: RemoteActor, request: Request): Promise<Response> {
  const body = await readOtlpBody(request, MAX_BODY_BYTES);
  if (!body.ok) return problem(body.failure === 'too_large' ? 'payload_too_large' : 'bad_request', body.detail);
  const spans = decode(body.encoding, body.bytes);
  if (spans instanceof Response) return spans;

  let skipped = 0;
  const rejected: Rejection[] = [];
  const records: Pending[] = [];
  for (const span of spans) {
    const mapped = mapSpan(span);
    if (mapped.kind === 'skipped') skipped++;
    else if (mapped.kind === 'rejected') rejected.push({ ref: mapped.ref, reason: mapped.reason });
    else {
      const valid = validateRecord(mapped.record);
      if (valid.ok) records.push({ ref: mapped.ref, record: valid.record });
      else rejected.push({ ref: mapped.ref, reason: valid.reason });
    }
  }
  for (let at = 0; at < records.length; at += INGEST_BATCH) {
    const refused = await store(actor, records.slice(at, at + INGEST_BATCH), rejected);
    if (refused) return refused;
  }
  return exportResponse(body.encoding, rejected.length, rejectionMessage(rejected, skipped));
}
