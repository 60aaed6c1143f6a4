// One MCP client span → one outcome record, exactly as docs/api.md "OpenTelemetry in" maps it. Pure.
// The record is not validated here (validate.ts runs the outcome schema over it); a span that
// lacks what a record needs, or carries an attribute of the wrong type, is rejected, naming why.
import type { AttrValue, OtlpSpan } from './decode';

export type Mapped =
  | { kind: 'record'; ref: string; record: Record<string, unknown> }
  | { kind: 'skipped' }
  | { kind: 'rejected'; ref: string; reason: string };

const SPAN_KIND_CLIENT = 3;
const STATUS_ERROR = 2;
const LATEST_MS = Date.UTC(9999, 11, 31, 23, 59, 59);

/** The record field each attribute becomes, for naming attributes in rejections (validate.ts). */
export const ATTRIBUTE_OF: Record<string, string> = {
  eventId: 'traceId/spanId',
  occurredAt: 'startTimeUnixNano',
  durationMs: 'endTimeUnixNano',
  requestRef: 'countersign.request_ref',
  principal: 'countersign.principal',
  organization: 'countersign.organization',
  idempotencyKey: 'countersign.idempotency_key',
  argsDigest: 'countersign.args_digest',
  summary: 'countersign.summary',
  grantId: 'countersign.grant_id',
  agent: 'service.name',
  server: 'countersign.server (else server.address)',
  'tool.name': 'gen_ai.tool.name',
  'tool.annotations.readOnlyHint': 'countersign.tool.read_only_hint',
  'tool.annotations.destructiveHint': 'countersign.tool.destructive_hint',
  'tool.annotations.idempotentHint': 'countersign.tool.idempotent_hint',
  'tool.annotations.openWorldHint': 'countersign.tool.open_world_hint',
  mcpRequestId: 'jsonrpc.request.id',
  sessionId: 'mcp.session.id',
  protocolVersion: 'mcp.protocol.version',
  'observed.httpStatus': 'http.response.status_code',
  'observed.jsonRpcErrorCode': 'rpc.response.status_code (or error.type)',
  'observed.result.errorCategory': 'countersign.error_category',
  'observed.result.outputValidation': 'countersign.output_validation',
  'observed.task': 'countersign.task.id / countersign.task.status',
  'observed.task.id': 'countersign.task.id',
  'observed.task.status': 'countersign.task.status',
};

const REQUIRED = ['countersign.request_ref', 'countersign.principal', 'countersign.organization', 'gen_ai.tool.name'];
const INTEGER = /^-?\d+$/;
const NOT_A_STRING = { empty: 'an empty value', array: 'an array', kvlist: 'a key-value list', bytes: 'bytes' };

/** Reads a span's attributes (span first, else its resource), collecting type problems. */
function reader(span: OtlpSpan) {
  const problems = new Set<string>();
  const raw = (key: string): AttrValue | undefined => span.attributes.get(key) ?? span.resource.get(key);
  const absent = (key: string) => {
    const value = raw(key);
    return value === undefined || value === '';
  };
  const str = (key: string, value = raw(key)): string | undefined => {
    if (value === undefined) return undefined;
    if (typeof value === 'string') return value === '' ? undefined : value;
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    problems.add(`${key} must be a string, not ${NOT_A_STRING[value.other]}`);
    return undefined;
  };
  const int = (key: string): number | undefined => {
    const value = raw(key);
    if (value === undefined) return undefined;
    if (typeof value === 'number' && Number.isInteger(value)) return value;
    if (typeof value === 'string' && INTEGER.test(value)) return Number(value);
    problems.add(`${key} must be an integer`);
    return undefined;
  };
  const bool = (key: string): boolean | undefined => {
    const value = raw(key);
    if (value === undefined) return undefined;
    if (typeof value === 'boolean') return value;
    if (value === 'true' || value === 'false') return value === 'true';
    problems.add(`${key} must be a boolean`);
    return undefined;
  };
  return { problems, raw, absent, str, int, bool };
}

/**
 * Only the keys whose value is set: absent attributes leave the field out. A copy, not `delete`:
 * deleting turns an object into a slow dictionary for everything that reads it later (the
 * schema, the classifier, the row's JSON).
 */
function defined(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k in o) if (o[k] !== undefined) out[k] = o[k];
  return out;
}

function observedOf(span: OtlpSpan, a: ReturnType<typeof reader>): Record<string, unknown> {
  const errorType = a.str('error.type');
  const httpStatus = a.int('http.response.status_code');
  let jsonRpcErrorCode = a.int('rpc.response.status_code');
  const resultFields = {
    errorCategory: a.str('countersign.error_category'),
    outputValidation: a.str('countersign.output_validation'),
  };
  let result: Record<string, unknown> | undefined;
  let clientError: string | undefined;
  const ended = span.endMs > 0 && span.endMs >= span.startMs;

  if (errorType === undefined) {
    // A span marked as failed without saying how is not a result: nothing else is known.
    if (ended && span.statusCode !== STATUS_ERROR) result = { isError: false, ...resultFields };
  } else if (errorType === 'tool_error') {
    result = { isError: true, ...resultFields };
  } else if (errorType === '-32001' || errorType === '-32000') {
    clientError = errorType === '-32001' ? 'timeout' : 'connection_lost';
    // The SDK's own code for what the client saw, not an answer from the server.
    if (jsonRpcErrorCode === Number(errorType)) jsonRpcErrorCode = undefined;
  } else if (INTEGER.test(errorType) && Number(errorType) !== httpStatus) {
    // A number repeating the HTTP status is that status (HTTP instrumentation's error.type).
    jsonRpcErrorCode ??= Number(errorType);
  }
  // Any other error.type (`_OTHER`, an exception's name): sent, nothing else observed.

  const taskId = a.str('countersign.task.id');
  const taskStatus = a.str('countersign.task.status');
  return defined({
    sent: true,
    httpStatus,
    jsonRpcErrorCode,
    clientError,
    result: result && defined(result),
    task: taskId !== undefined || taskStatus !== undefined ? defined({ id: taskId, status: taskStatus }) : undefined,
  });
}

export function mapSpan(span: OtlpSpan): Mapped {
  if (span.kind !== SPAN_KIND_CLIENT || span.attributes.get('mcp.method.name') !== 'tools/call')
    return { kind: 'skipped' };
  const ref = `${span.traceId}:${span.spanId}`;
  if (!/^[0-9a-f]{32}$/.test(span.traceId) || /^0+$/.test(span.traceId))
    return { kind: 'rejected', ref, reason: 'traceId must be 16 bytes, not all zero' };
  if (!/^[0-9a-f]{16}$/.test(span.spanId) || /^0+$/.test(span.spanId))
    return { kind: 'rejected', ref, reason: 'spanId must be 8 bytes, not all zero' };

  const a = reader(span);
  const missing = REQUIRED.filter(a.absent);
  const server = a.str(a.absent('countersign.server') ? 'server.address' : 'countersign.server');
  if (a.absent('countersign.server') && a.absent('server.address'))
    missing.push('countersign.server (or server.address)');
  if (missing.length)
    return {
      kind: 'rejected',
      ref,
      reason: `missing required attribute${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`,
    };
  if (!(span.startMs > 0 && span.startMs <= LATEST_MS))
    return { kind: 'rejected', ref, reason: 'startTimeUnixNano must be set (a time between 1970 and 9999)' };

  const annotations = defined({
    readOnlyHint: a.bool('countersign.tool.read_only_hint'),
    destructiveHint: a.bool('countersign.tool.destructive_hint'),
    idempotentHint: a.bool('countersign.tool.idempotent_hint'),
    openWorldHint: a.bool('countersign.tool.open_world_hint'),
  });
  const requestId = a.raw('jsonrpc.request.id');
  const record = defined({
    eventId: `otel:${span.traceId}:${span.spanId}`,
    occurredAt: new Date(span.startMs).toISOString(),
    durationMs: span.endMs >= span.startMs ? Math.round(span.endMs - span.startMs) : undefined,
    requestRef: a.str('countersign.request_ref'),
    idempotencyKey: a.str('countersign.idempotency_key'),
    organization: a.str('countersign.organization'),
    principal: a.str('countersign.principal'),
    agent: a.str('service.name', span.resource.get('service.name')),
    server,
    protocolVersion: a.str('mcp.protocol.version'),
    tool: defined({
      name: a.str('gen_ai.tool.name'),
      annotations: Object.keys(annotations).length ? annotations : undefined,
    }),
    mcpRequestId:
      typeof requestId === 'number' && Number.isInteger(requestId) ? requestId : a.str('jsonrpc.request.id'),
    sessionId: a.str('mcp.session.id'),
    grantId: a.str('countersign.grant_id'),
    argsDigest: a.str('countersign.args_digest'),
    summary: a.str('countersign.summary'),
    observed: observedOf(span, a),
  });
  if (a.problems.size) return { kind: 'rejected', ref, reason: [...a.problems].join('; ') };
  return { kind: 'record', ref, record };
}
