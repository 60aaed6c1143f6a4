// From what came back (a result, an error the SDK threw, the HTTP exchanges the transport saw)
// to docs/api.md's `observed` object. See observe.ts for what is read and what never is.
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Observed, ObservedResult } from '../outcomes/schemas';
import { matchesOutputSchema } from './catalog';
import type { Observation } from './observe';
import type { Trace } from './trace';

export function fromResult(
  result: CallToolResult,
  tool: Tool | undefined,
  httpStatus: number | null,
): Pick<Observation, 'observed' | 'result'> {
  if (result.isError) {
    const errorCategory = declaredCategory(result);
    const folded = errorCategory ? null : foldedJsonRpcCode(result);
    // MCP says "unknown tool" with -32602 too; only the catalog tells the two apart.
    const unknownTool = folded === ErrorCode.InvalidParams && !tool;
    const observedResult: ObservedResult = {
      isError: true,
      errorCategory: errorCategory ?? (unknownTool ? 'unknown_tool' : null),
    };
    return {
      result,
      observed: withStatus({ sent: true, jsonRpcErrorCode: folded, result: observedResult }, httpStatus),
    };
  }
  const outputValidation = !tool?.outputSchema
    ? 'not_declared'
    : result.structuredContent == null
      ? 'missing'
      : matchesOutputSchema(tool, result.structuredContent)
        ? 'valid'
        : 'invalid';
  const trusted = outputValidation === 'valid' || outputValidation === 'not_declared';
  return {
    ...(trusted ? { result } : {}),
    observed: withStatus({ sent: true, result: { isError: false, outputValidation } }, httpStatus),
  };
}

// The response arrived, then the client's own check threw (McpError -32602 for content that breaks
// the schema, -32600 for content missing). The SDK also checks an error result's structured
// content against the success schema; an error result has no output contract, so it counts as
// the error it is.
export function fromReceivedButRefused(
  received: CallToolResult,
  tool: Tool | undefined,
  httpStatus: number | null,
): Pick<Observation, 'observed' | 'result'> {
  if (received.isError) return fromResult(received, tool, httpStatus);
  const outputValidation = received.structuredContent == null ? 'missing' : 'invalid';
  return { observed: withStatus({ sent: true, result: { isError: false, outputValidation } }, httpStatus) };
}

// Connection failures where the request provably never left: no connection was ever made.
const NOT_CONNECTED = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

export function fromError(error: unknown, trace: Trace, rpcMethod: string): Observed {
  const status = statusOf(trace, rpcMethod);
  if (error instanceof StreamableHTTPError) {
    const code = error.code;
    if (code != null && code >= 100 && code <= 599) return httpObserved(code, trace);
    // The server answered something the transport could not read (e.g. another content type).
    return withStatus({ sent: true }, status);
  }
  if (error instanceof UnauthorizedError) {
    const refused = [...trace.exchanges].reverse().find((x) => x.status === 401 || x.status === 403);
    return httpObserved(refused?.status ?? 401, trace);
  }
  if (error instanceof McpError) {
    // The SDK's local codes: it gave up waiting, or the connection closed under the request.
    if (error.code === ErrorCode.RequestTimeout) {
      return withStatus({ sent: true, clientError: trace.transportErrors > 0 ? 'connection_lost' : 'timeout' }, status);
    }
    if (error.code === ErrorCode.ConnectionClosed)
      return withStatus({ sent: true, clientError: 'connection_lost' }, status);
    return withStatus({ sent: true, jsonRpcErrorCode: error.code }, status);
  }
  const networkCode = errnoCode(error);
  if (networkCode) {
    const neverConnected = NOT_CONNECTED.has(networkCode) && status == null;
    return neverConnected
      ? { sent: false, clientError: 'connection_lost' }
      : withStatus({ sent: true, clientError: 'connection_lost' }, status);
  }
  // Anything else: it may have been sent, and nothing trustworthy came back.
  return withStatus({ sent: true }, status);
}

function httpObserved(status: number, trace: Trace): Observed {
  const exchange = [...trace.exchanges].reverse().find((x) => x.status === status);
  const authError = status === 401 || status === 403 ? (exchange?.authError ?? null) : null;
  return { sent: true, httpStatus: status, authError };
}

export function withStatus(observed: Observed, httpStatus: number | null): Observed {
  return httpStatus == null ? observed : { ...observed, httpStatus };
}

// The HTTP status of the POST that carried this JSON-RPC request (null in-memory, or never answered).
export function statusOf(trace: Trace, rpcMethod: string): number | null {
  return [...trace.exchanges].reverse().find((x) => x.rpcMethod === rpcMethod)?.status ?? null;
}
export const callStatus = (trace: Trace) => statusOf(trace, 'tools/call');

// Node's fetch fails with TypeError('fetch failed') whose cause (or its cause) carries the errno.
function errnoCode(error: unknown): string | null {
  for (
    let e: unknown = error, depth = 0;
    e && typeof e === 'object' && depth < 4;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^(E[A-Z]+|UND_ERR_[A-Z_]+)$/.test(code)) return code;
  }
  return null;
}

/**
 * The category a tool declares for its own error: `structuredContent.error.category`, else
 * `_meta.errorCategory` (for tools with an output schema, whose structured content the SDK
 * client checks against the success schema even on errors). Raw spelling; the classifier maps it.
 */
export function declaredCategory(result: CallToolResult): string | null {
  const sc = result.structuredContent;
  const meta = result._meta;
  const raw =
    (isRecord(sc) && isRecord(sc.error) && typeof sc.error.category === 'string' ? sc.error.category : null) ??
    (isRecord(meta) && typeof meta.errorCategory === 'string' ? meta.errorCategory : null);
  const trimmed = raw?.trim();
  // The record's limit; a longer or NUL-carrying value is not a category anyone declared for us.
  return trimmed && trimmed.length <= 100 && !trimmed.includes('\u0000') ? trimmed : null;
}

const FOLDED = /^MCP error (-32[0-9]{3}):/;

/** The JSON-RPC code McpServer folded into an error result's first text, if it did. */
export function foldedJsonRpcCode(result: CallToolResult): number | null {
  const first = result.content?.[0];
  if (!first || first.type !== 'text') return null;
  const match = FOLDED.exec(first.text);
  return match ? Number(match[1]) : null;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
