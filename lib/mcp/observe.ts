// Runs one MCP tool call and says what happened as API.md's `observed` object, from structured
// signals only: HTTP statuses and the WWW-Authenticate error the transport saw, McpError codes,
// `isError`, the category a tool declares, and output-schema validation. English messages are
// never read. One exception, on purpose: the SDK's McpServer folds protocol errors (unknown tool,
// invalid arguments, its own output check) into `isError` results whose only trace of the code is
// the text prefix `MCP error -32602:`. That prefix is the SDK's fixed rendering of a numeric
// JSON-RPC code (`McpError.message`), not prose, so it is read, strictly, and only when the
// result declares no structured category of its own.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  ErrorCode,
  McpError,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { Observed, ObservedResult } from '../outcomes/schemas';
import { hookTransportErrors, newTrace, traces, type Trace } from './trace';

export { observingFetch } from './trace';

// ── The tool catalog ─────────────────────────────────────────────────────────────────────────

export interface ToolCatalog {
  tools: ReadonlyMap<string, Tool>;
}

/**
 * Lists every tool (all pages). Calling `listTools()` also makes the SDK validate structured
 * results against each tool's `outputSchema`; we validate again ourselves because the SDK keeps
 * the validators of the last page only.
 */
export async function loadToolCatalog(
  client: Client,
  options: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<ToolCatalog> {
  const tools = new Map<string, Tool>();
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined, {
      timeout: options.timeoutMs,
      signal: options.signal,
    });
    for (const tool of page.tools) tools.set(tool.name, tool);
    cursor = page.nextCursor;
  } while (cursor);
  return { tools };
}

const validator = new AjvJsonSchemaValidator();
const compiled = new WeakMap<object, (value: unknown) => boolean>();
function matchesOutputSchema(tool: Tool, value: unknown): boolean {
  const schema = tool.outputSchema as object;
  let check = compiled.get(schema);
  if (!check) {
    const validate = validator.getValidator(schema as Parameters<typeof validator.getValidator>[0]);
    check = (v) => validate(v).valid;
    compiled.set(schema, check);
  }
  return check(value);
}

// ── Observations ─────────────────────────────────────────────────────────────────────────────

export interface Observation {
  observed: Observed;
  /**
   * The tool's result, for the caller only (never reported). Withheld when its structured content
   * broke the declared output schema: such content is no evidence of anything.
   */
  result?: CallToolResult;
  startedAt: Date;
  durationMs: number;
  /** Display only: JSON-RPC ids are per-connection counters. Known over HTTP. */
  mcpRequestId?: string | number;
  sessionId?: string;
  protocolVersion?: string;
  serverVersion?: string;
  /** The error the SDK threw, if any, for the caller's own logs. */
  error?: unknown;
}

export interface ObserveCallOptions {
  /** From `loadToolCatalog`: declared output schemas, and which tools exist. */
  catalog: ToolCatalog;
  /** The SDK's request timeout (its default: 60 s). */
  timeoutMs?: number;
  /** Cancels the call: before sending, nothing is sent; after, the outcome is unknown. */
  signal?: AbortSignal;
  /**
   * After the transport reports a broken stream, how long to wait for a resumed response before
   * calling the connection lost (default 1 s).
   */
  lostConnectionGraceMs?: number;
}

/** Runs `client.callTool(params)` once and observes it. Never throws for the call's own failures. */
export async function observeToolCall(
  client: Client,
  params: { name: string; arguments?: Record<string, unknown> },
  options: ObserveCallOptions,
): Promise<Observation> {
  const clock = startClock();
  hookTransportErrors(client);
  if (options.signal?.aborted) return { ...clock.done(client), observed: { sent: false, clientError: 'cancelled' } };
  if (!client.transport) return { ...clock.done(client), observed: { sent: false, clientError: 'connection_lost' } };

  const tool = options.catalog.tools.get(params.name);
  const trace = newTrace();
  const internal = new AbortController();
  let aborted: 'cancelled' | 'connection_lost' | null = null;
  let settled = false;
  let graceTimer: ReturnType<typeof setTimeout> | undefined;
  const onCallerAbort = () => {
    aborted ??= 'cancelled';
    internal.abort(options.signal?.reason);
  };
  options.signal?.addEventListener('abort', onCallerAbort, { once: true });
  trace.onTransportError = () => {
    if (settled || graceTimer) return;
    graceTimer = setTimeout(() => {
      if (settled) return;
      aborted ??= 'connection_lost';
      internal.abort(new Error('connection lost'));
    }, options.lostConnectionGraceMs ?? 1000);
  };

  // The SDK parses the result with the schema we pass: capturing it here tells a result that
  // arrived and failed the client's own output check apart from an error the server sent.
  let received: CallToolResult | undefined;
  const capture = CallToolResultSchema.refine((r) => {
    received = r as CallToolResult;
    return true;
  });

  try {
    const result = (await traces.run(trace, () =>
      client.callTool(params, capture, { signal: internal.signal, timeout: options.timeoutMs }),
    )) as CallToolResult;
    return { ...clock.done(client, trace), ...fromResult(result, tool, callStatus(trace)) };
  } catch (error) {
    const base = { ...clock.done(client, trace), error };
    if (aborted) return { ...base, observed: withStatus({ sent: true, clientError: aborted }, callStatus(trace)) };
    if (received) return { ...base, ...fromReceivedButRefused(received, tool, callStatus(trace)) };
    return { ...base, observed: fromError(error, trace, 'tools/call') };
  } finally {
    settled = true;
    clearTimeout(graceTimer);
    options.signal?.removeEventListener('abort', onCallerAbort);
  }
}

export type SessionReady = { ok: true; catalog: ToolCatalog } | { ok: false; observation: Observation };

/**
 * Makes sure the client is connected (with `connect` when it is not) and has its tool catalog.
 * A refusal on the way (401 while initializing, a refused connection) is the observation of the
 * call that needed the session: the tool call itself was then never sent.
 */
export async function prepareSession(
  client: Client,
  options: {
    connect?: () => Promise<void>;
    catalog?: ToolCatalog | null;
    timeoutMs?: number;
    signal?: AbortSignal;
  } = {},
): Promise<SessionReady> {
  const clock = startClock();
  hookTransportErrors(client);
  if (options.signal?.aborted)
    return { ok: false, observation: { ...clock.done(client), observed: { sent: false, clientError: 'cancelled' } } };
  if (!client.transport) {
    if (!options.connect)
      return {
        ok: false,
        observation: { ...clock.done(client), observed: { sent: false, clientError: 'connection_lost' } },
      };
    const trace = newTrace();
    try {
      await traces.run(trace, options.connect);
    } catch (error) {
      return {
        ok: false,
        observation: { ...clock.done(client, trace), error, observed: fromError(error, trace, 'initialize') },
      };
    }
  }
  if (options.catalog) return { ok: true, catalog: options.catalog };
  const trace = newTrace();
  try {
    const catalog = await traces.run(trace, () =>
      loadToolCatalog(client, { timeoutMs: options.timeoutMs, signal: options.signal }),
    );
    return { ok: true, catalog };
  } catch (error) {
    return {
      ok: false,
      observation: { ...clock.done(client, trace), error, observed: fromError(error, trace, 'tools/list') },
    };
  }
}

// ── From what came back to `observed` ────────────────────────────────────────────────────────

function fromResult(
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
function fromReceivedButRefused(
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

function fromError(error: unknown, trace: Trace, rpcMethod: string): Observed {
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

function withStatus(observed: Observed, httpStatus: number | null): Observed {
  return httpStatus == null ? observed : { ...observed, httpStatus };
}

// The HTTP status of the POST that carried this JSON-RPC request (null in-memory, or never answered).
function statusOf(trace: Trace, rpcMethod: string): number | null {
  return [...trace.exchanges].reverse().find((x) => x.rpcMethod === rpcMethod)?.status ?? null;
}
const callStatus = (trace: Trace) => statusOf(trace, 'tools/call');

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

function startClock() {
  const startedAt = new Date();
  const t0 = performance.now();
  return {
    done(client: Client, trace?: Trace): Omit<Observation, 'observed'> {
      const transport = client.transport as { sessionId?: string; protocolVersion?: string } | undefined;
      const call = trace?.exchanges.find((x) => x.rpcMethod === 'tools/call');
      return {
        startedAt,
        durationMs: Math.max(0, Math.round(performance.now() - t0)),
        ...(call?.rpcId != null ? { mcpRequestId: call.rpcId } : {}),
        ...(transport?.sessionId ? { sessionId: transport.sessionId } : {}),
        ...(transport?.protocolVersion ? { protocolVersion: transport.protocolVersion } : {}),
        ...(client.getServerVersion()?.version ? { serverVersion: client.getServerVersion()!.version } : {}),
      };
    },
  };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
