// From what came back (a result, an error the SDK threw, the HTTP exchanges the transport saw)
// to docs/api.md's `observed` object. See observe.ts for what is read and what never is.
//
// Errors are read natively as SDK v2 raises them (its error classes match by brand, across copies
// of the SDK).
import {
  InsufficientScopeError,
  ProtocolError,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import type { Observed, ObservedResult } from '../outcomes/schemas';
import { matchesOutputSchema } from './catalog';
import type { Trace } from './trace';

/** What `fromResult` reads of a tool result: the wire shape. */
interface ToolResultShape {
  isError?: boolean;
  content?: ReadonlyArray<{ type: string; text?: unknown }>;
  structuredContent?: unknown;
  _meta?: unknown;
}
/** What `fromResult` reads of a tool's declaration. */
type ToolShape = { outputSchema?: object };

export function fromResult<R extends ToolResultShape>(
  result: R,
  tool: ToolShape | undefined,
  httpStatus: number | null,
): { observed: Observed; result?: R } {
  if (result.isError) {
    const errorCategory = declaredCategory(result);
    const folded = errorCategory ? null : foldedJsonRpcCode(result);
    // MCP says "unknown tool" with -32602 too; only the catalog tells the two apart.
    const unknownTool = folded === ProtocolErrorCode.InvalidParams && !tool;
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
  const said = fromV2(error);
  switch (said?.kind) {
    case 'http':
      if (said.status != null && said.status >= 100 && said.status <= 599) return httpObserved(said.status, trace);
      // The server answered something the transport could not read (e.g. another content type).
      return withStatus({ sent: true }, status);
    case 'unauthorized': {
      // Refused while connecting (401, or 403 insufficient_scope): the status and challenge are
      // the trace's; without one (a caller that traced nothing), the status the error stands for.
      const refused = [...trace.exchanges].reverse().find((x) => x.status === 401 || x.status === 403);
      return httpObserved(refused?.status ?? said.status, trace);
    }
    case 'jsonrpc':
      // The SDKs' local codes (SDK v1 raised its own this way): it gave up waiting, or the
      // connection closed under the request. A JSON-RPC error with either code says the same.
      if (said.code === LOCAL_TIMEOUT)
        return withStatus(
          { sent: true, clientError: trace.transportErrors > 0 ? 'connection_lost' : 'timeout' },
          status,
        );
      if (said.code === LOCAL_CLOSED) return withStatus({ sent: true, clientError: 'connection_lost' }, status);
      return withStatus({ sent: true, jsonRpcErrorCode: said.code }, status);
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

/** What an SDK's error says, in the terms `fromError` decides on. */
type Said =
  /** An HTTP answer refused the request (`status` undefined: the answer could not be read). */
  | { kind: 'http'; status: number | undefined }
  /** Refused for want of (sufficient) authorization (401, or 403 for a scope), before or instead of a status of its own. */
  | { kind: 'unauthorized'; status: 401 | 403 }
  /** A JSON-RPC error, or a local failure the SDK reports with a JSON-RPC code. */
  | { kind: 'jsonrpc'; code: number };

// The codes SDK v1 gave its own timeout and closed connection, which SDK v2's are read as
// (SdkErrorCode); a server that relays either says the same.
const LOCAL_TIMEOUT = -32001;
const LOCAL_CLOSED = -32000;

function fromV2(error: unknown): Said | null {
  if (error instanceof ProtocolError) return { kind: 'jsonrpc', code: error.code };
  if (error instanceof InsufficientScopeError) return { kind: 'unauthorized', status: 403 };
  if (error instanceof UnauthorizedError) return { kind: 'unauthorized', status: 401 };
  if (error instanceof SdkHttpError) {
    const status: unknown = (error.data as { status?: unknown } | undefined)?.status;
    return { kind: 'http', status: typeof status === 'number' ? status : undefined };
  }
  if (error instanceof SdkError) {
    if (error.code === SdkErrorCode.RequestTimeout) return { kind: 'jsonrpc', code: LOCAL_TIMEOUT };
    if (error.code === SdkErrorCode.ConnectionClosed) return { kind: 'jsonrpc', code: LOCAL_CLOSED };
  }
  return null;
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
export function declaredCategory(result: ToolResultShape): string | null {
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

/** The JSON-RPC code an SDK's McpServer folded into an error result's first text, if it did. */
export function foldedJsonRpcCode(result: ToolResultShape): number | null {
  const first = result.content?.[0];
  if (!first || first.type !== 'text' || typeof first.text !== 'string') return null;
  const match = FOLDED.exec(first.text);
  return match ? Number(match[1]) : null;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
