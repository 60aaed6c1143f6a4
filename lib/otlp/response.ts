// OTLP's ExportTraceServiceResponse, in the request's encoding, with partialSuccess saying how
// many spans were rejected and why (grouped by reason, each with one span to look for). Pure.
import { ExportTraceServiceResponse } from './proto';

export type Rejection = { ref: string; reason: string };
export type OtlpEncoding = 'protobuf' | 'json';

const MESSAGE_MAX = 2000;

/** "2 spans rejected: missing required attribute countersign.principal (2 spans, e.g. <trace>:<span>); …" */
export function rejectionMessage(rejected: Rejection[], skipped: number): string {
  const parts: string[] = [];
  if (rejected.length) {
    const byReason = new Map<string, Rejection[]>();
    for (const r of rejected) byReason.set(r.reason, [...(byReason.get(r.reason) ?? []), r]);
    const groups = [...byReason].map(
      ([reason, rs]) => `${reason} (${rs.length} span${rs.length > 1 ? 's' : ''}, e.g. ${rs[0].ref})`,
    );
    parts.push(`${rejected.length} span${rejected.length > 1 ? 's' : ''} rejected: ${groups.join('; ')}`);
  }
  if (skipped) parts.push(`${skipped} span${skipped > 1 ? 's' : ''} skipped: not MCP tools/call client spans`);
  const message = parts.join('. ');
  return message.length > MESSAGE_MAX ? `${message.slice(0, MESSAGE_MAX - 1)}…` : message;
}

export function exportResponse(encoding: OtlpEncoding, rejectedSpans: number, errorMessage: string): Response {
  // OTLP: a fully accepted export has an empty partial_success (SDKs warn about any other), in
  // protobuf because proto3 writes no zero values, in JSON because the mapping omits them too.
  if (encoding === 'json') {
    const body = JSON.stringify({
      partialSuccess: rejectedSpans || errorMessage ? { rejectedSpans, errorMessage } : {},
    });
    return new Response(body, {
      status: 200,
      headers: { 'content-type': 'application/json', 'cache-control': 'no-store, no-transform' },
    });
  }
  const partialSuccess: Record<string, unknown> = {};
  if (rejectedSpans) partialSuccess.rejectedSpans = rejectedSpans;
  if (errorMessage) partialSuccess.errorMessage = errorMessage;
  const bytes = ExportTraceServiceResponse.encode({ partialSuccess }).finish();
  return new Response(new Uint8Array(bytes), {
    status: 200,
    headers: { 'content-type': 'application/x-protobuf', 'cache-control': 'no-store, no-transform' },
  });
}
