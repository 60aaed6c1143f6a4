// fromError, one row per error SDK v2 throws at a caller (what the wrapper's Client and the
// gateway's upstream client raise), each constructed for real from its package. Expected observations are written by hand from docs/api.md's `observed`, and
// expected verdicts from docs/design.md's table, for a write (the strictest reading).
import { describe, expect, it } from 'vitest';
import {
  InsufficientScopeError,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  UnauthorizedError,
  UnsupportedProtocolVersionError,
  UrlElicitationRequiredError,
} from '@modelcontextprotocol/client';
import { classifyOutcome } from '../outcomes/classify';
import type { Observed } from '../outcomes/schemas';
import { fromError } from './observed';
import { newTrace, type HttpExchange, type Trace } from './trace';

type Row = {
  what: string;
  error: unknown;
  /** What the transport saw (observingFetch): the statuses of this call's POSTs. */
  saw?: Partial<HttpExchange>[];
  brokenStreams?: number;
  observed: Observed;
  /** boundary, delivery, category, retry (docs/design.md, for a write). */
  verdict: string;
};

const elicitation = { mode: 'url' as const, elicitationId: 'e1', url: 'https://example.test/consent', message: 'Sign' };
const refused = (code: string) => Object.assign(new Error('connect failed'), { code });
const fetchFailed = (code: string) => new TypeError('fetch failed', { cause: refused(code) });
const http = (status: number, code = SdkErrorCode.ClientHttpNotImplemented) =>
  new SdkHttpError(code, `HTTP ${status}`, { status, statusText: '' });

const V2: Row[] = [
  ...([-32700, -32600, -32601] as const).map((code): Row => ({
    what: `ProtocolError ${code}`,
    error: new ProtocolError(code, 'no'),
    observed: { sent: true, jsonRpcErrorCode: code },
    verdict: 'protocol rejected protocol_error no',
  })),
  {
    what: 'ProtocolError -32602',
    error: new ProtocolError(-32602, 'bad input'),
    observed: { sent: true, jsonRpcErrorCode: -32602 },
    verdict: 'protocol rejected invalid_arguments after_correction',
  },
  {
    what: 'ProtocolError -32603',
    error: new ProtocolError(-32603, 'internal'),
    observed: { sent: true, jsonRpcErrorCode: -32603 },
    verdict: 'protocol unknown internal after_state_check',
  },
  {
    what: 'UrlElicitationRequiredError (-32042)',
    error: new UrlElicitationRequiredError([elicitation]),
    observed: { sent: true, jsonRpcErrorCode: -32042 },
    verdict: 'protocol rejected input_required after_input',
  },
  {
    what: 'ProtocolError -32020 (header mismatch, in-memory)',
    error: new ProtocolError(-32020, 'header mismatch'),
    observed: { sent: true, jsonRpcErrorCode: -32020 },
    verdict: 'protocol rejected protocol_error no',
  },
  {
    what: 'MissingRequiredClientCapabilityError (-32021)',
    error: new MissingRequiredClientCapabilityError({ requiredCapabilities: { elicitation: {} } }),
    observed: { sent: true, jsonRpcErrorCode: -32021 },
    verdict: 'protocol rejected protocol_error no',
  },
  {
    what: 'UnsupportedProtocolVersionError (-32022) answered with HTTP 400: the status is the first match',
    error: new UnsupportedProtocolVersionError({ supported: ['2026-07-28'], requested: '2099-01-01' }),
    saw: [{ status: 400, rpcMethod: 'tools/call' }],
    observed: { sent: true, httpStatus: 400, jsonRpcErrorCode: -32022 },
    verdict: 'admission rejected protocol_error no',
  },
  {
    what: 'SdkError REQUEST_TIMEOUT',
    error: new SdkError(SdkErrorCode.RequestTimeout, 'timed out'),
    observed: { sent: true, clientError: 'timeout' },
    verdict: 'client unknown timeout after_state_check',
  },
  {
    what: 'SdkError REQUEST_TIMEOUT after a broken stream',
    error: new SdkError(SdkErrorCode.RequestTimeout, 'timed out'),
    brokenStreams: 1,
    observed: { sent: true, clientError: 'connection_lost' },
    verdict: 'client unknown connection_lost after_state_check',
  },
  {
    what: 'SdkError CONNECTION_CLOSED, the POST answered 200',
    error: new SdkError(SdkErrorCode.ConnectionClosed, 'closed'),
    saw: [{ status: 200, rpcMethod: 'tools/call' }],
    observed: { sent: true, httpStatus: 200, clientError: 'connection_lost' },
    verdict: 'client unknown connection_lost after_state_check',
  },
  {
    what: 'SdkError SEND_FAILED, the connection refused (ECONNREFUSED)',
    error: new SdkError(SdkErrorCode.SendFailed, 'send failed', undefined, { cause: fetchFailed('ECONNREFUSED') }),
    observed: { sent: false, clientError: 'connection_lost' },
    verdict: 'client never_sent connection_lost backoff',
  },
  {
    what: 'SdkHttpError 401 after re-authentication, with the challenge seen',
    error: http(401, SdkErrorCode.ClientHttpAuthentication),
    saw: [{ status: 401, authError: 'invalid_token', rpcMethod: 'tools/call' }],
    observed: { sent: true, httpStatus: 401, authError: 'invalid_token' },
    verdict: 'admission rejected unauthenticated after_reauth',
  },
  {
    what: 'SdkHttpError 403 (step-up limit)',
    error: http(403, SdkErrorCode.ClientHttpForbidden),
    saw: [{ status: 403, authError: 'insufficient_scope', rpcMethod: 'tools/call' }],
    observed: { sent: true, httpStatus: 403, authError: 'insufficient_scope' },
    verdict: 'admission rejected forbidden after_approval',
  },
  {
    what: 'SdkHttpError 404 (a session the server forgot)',
    error: http(404),
    observed: { sent: true, httpStatus: 404, authError: null },
    verdict: 'admission rejected session_expired after_reauth',
  },
  {
    what: 'SdkHttpError 429',
    error: http(429),
    observed: { sent: true, httpStatus: 429, authError: null },
    verdict: 'admission rejected rate_limited backoff',
  },
  {
    what: 'SdkHttpError 503',
    error: http(503),
    observed: { sent: true, httpStatus: 503, authError: null },
    verdict: 'admission rejected unavailable backoff',
  },
  {
    what: 'SdkHttpError 502',
    error: http(502),
    observed: { sent: true, httpStatus: 502, authError: null },
    verdict: 'admission unknown upstream_failure after_state_check',
  },
  {
    what: 'SdkError CLIENT_HTTP_UNEXPECTED_CONTENT (an answer it could not read)',
    error: new SdkError(SdkErrorCode.ClientHttpUnexpectedContent, 'unexpected content type', {
      contentType: 'text/html',
    }),
    observed: { sent: true },
    verdict: 'client unknown no_response after_state_check',
  },
  {
    what: 'UnauthorizedError while connecting: the 401 and its challenge from the trace',
    error: new UnauthorizedError(),
    saw: [{ status: 401, authError: 'invalid_token', rpcMethod: 'initialize' }],
    observed: { sent: true, httpStatus: 401, authError: 'invalid_token' },
    verdict: 'admission rejected unauthenticated after_reauth',
  },
  {
    what: 'InsufficientScopeError: the 403 insufficient_scope from the trace',
    error: new InsufficientScopeError({ requiredScope: 'orders:write' }),
    saw: [{ status: 403, authError: 'insufficient_scope', rpcMethod: 'tools/call' }],
    observed: { sent: true, httpStatus: 403, authError: 'insufficient_scope' },
    verdict: 'admission rejected forbidden after_approval',
  },
  {
    what: "InsufficientScopeError, the trace empty (the gateway's upstream call): a 403",
    error: new InsufficientScopeError({ requiredScope: 'orders:write' }),
    observed: { sent: true, httpStatus: 403, authError: null },
    verdict: 'admission rejected forbidden after_approval',
  },
  {
    what: 'UnauthorizedError, the trace empty: a 401',
    error: new UnauthorizedError(),
    observed: { sent: true, httpStatus: 401, authError: null },
    verdict: 'admission rejected unauthenticated after_reauth',
  },
];

const NEITHER: Row[] = [
  {
    what: "Node's fetch failed, the connection refused",
    error: fetchFailed('ECONNREFUSED'),
    observed: { sent: false, clientError: 'connection_lost' },
    verdict: 'client never_sent connection_lost backoff',
  },
  {
    what: "Node's fetch failed, the connection reset after the POST was answered",
    error: fetchFailed('ECONNRESET'),
    saw: [{ status: 200, rpcMethod: 'tools/call' }],
    observed: { sent: true, httpStatus: 200, clientError: 'connection_lost' },
    verdict: 'client unknown connection_lost after_state_check',
  },
  {
    what: 'an Error with a numeric code of its own is no HTTP answer',
    error: Object.assign(new Error('boom'), { code: 500 }),
    observed: { sent: true },
    verdict: 'client unknown no_response after_state_check',
  },
  {
    what: 'something else thrown',
    error: 'boom',
    observed: { sent: true },
    verdict: 'client unknown no_response after_state_check',
  },
];

function traceOf(row: Row): Trace {
  const trace = newTrace();
  for (const x of row.saw ?? []) trace.exchanges.push({ status: 0, authError: null, rpcMethod: null, rpcId: 1, ...x });
  trace.transportErrors = row.brokenStreams ?? 0;
  return trace;
}

describe.each([
  ['SDK v2', V2],
  ['neither SDK', NEITHER],
])('fromError: %s', (_, rows) => {
  it.each(rows)('$what', (row) => {
    const observed = fromError(row.error, traceOf(row), 'tools/call');
    expect(observed).toEqual(row.observed);
    const c = classifyOutcome({ observed, annotations: null, serverTrusted: false });
    expect([c.boundary, c.delivery, c.category, c.retry].join(' ')).toBe(row.verdict);
  });
});
