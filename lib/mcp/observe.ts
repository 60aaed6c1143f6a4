// Runs one MCP tool call and says what happened as docs/api.md's `observed` object, from structured
// signals only: HTTP statuses and the WWW-Authenticate error the transport saw, McpError codes,
// `isError`, the category a tool declares, and output-schema validation. English messages are
// never read. On SDK v2's Client, both eras: a 2026-07-28 answer that reached us is `complete`
// (recorded as `resultType`), and an `input_required` the client did not fulfil is recorded as
// the server asking for input. One exception, on purpose: the SDK's McpServer folds protocol errors (unknown tool,
// invalid arguments, its own output check) into `isError` results whose only trace of the code is
// the text prefix `MCP error -32602:`. That prefix is the SDK's fixed rendering of a numeric
// JSON-RPC code (`McpError.message`), not prose, so it is read, strictly, and only when the
// result declares no structured category of its own.
import type { CallToolResult, Client, Tool } from '@modelcontextprotocol/client';
import type { Observed } from '../outcomes/schemas';
import { loadToolCatalog, type ToolCatalog } from './catalog';
import { callStatus, fromError, fromResult, withStatus } from './observed';
import { observeTaskCall, runsAsTask, type TaskCallOptions } from './observe-task';
import { isInputRequired, outputCheckError } from './sdk-v2';
import { hookTransportErrors, newTrace, traces, type Trace } from './trace';

export { observingFetch } from './trace';

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
  /**
   * Run the call as an MCP task (SDK experimental tasks API) when the tool supports it; a tool
   * whose `execution.taskSupport` is `required` always runs as one. `onStatus` sees the creation
   * and each status change; the answer is the terminal observation.
   */
  task?: TaskCallOptions | boolean;
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

  const preferTask = options.task === true || (typeof options.task === 'object' && options.task.prefer === true);
  if (runsAsTask(options.catalog, params.name, preferTask)) {
    try {
      return await observeTaskCall(
        client,
        params,
        {
          catalog: options.catalog,
          trace,
          signal: internal.signal,
          timeoutMs: options.timeoutMs,
          clock,
          abortedAs: () => aborted,
        },
        typeof options.task === 'object' ? options.task : {},
      );
    } finally {
      settled = true;
      clearTimeout(graceTimer);
      options.signal?.removeEventListener('abort', onCallerAbort);
    }
  }

  try {
    const result = await traces.run(trace, () =>
      client.callTool(params, {
        signal: internal.signal,
        timeout: options.timeoutMs,
        ...(tool?.outputSchema ? { toolDefinition: withoutOutputSchema(tool) } : {}),
      }),
    );
    const seen = fromResult(result, tool, callStatus(trace));
    const refused = result.isError ? undefined : outputCheckError(params.name, seen.observed.result?.outputValidation);
    return {
      ...clock.done(client, trace),
      ...seen,
      observed: complete(client, seen.observed),
      ...(refused ? { error: refused } : {}),
    };
  } catch (error) {
    const base = { ...clock.done(client, trace), error };
    if (aborted) return { ...base, observed: withStatus({ sent: true, clientError: aborted }, callStatus(trace)) };
    if (isInputRequired(error))
      return { ...base, observed: withStatus({ sent: true, resultType: 'input_required' }, callStatus(trace)) };
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
        observation: {
          ...clock.done(client, trace),
          error,
          observed: fromError(error, trace, 'initialize'),
        },
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
      observation: {
        ...clock.done(client, trace),
        error,
        observed: fromError(error, trace, 'tools/list'),
      },
    };
  }
}

// The SDK's own output check throws a ProtocolError that cannot be told apart from one the server
// sent; without the schema it lets the result through, and fromResult checks it (valid, invalid,
// missing) against the catalog's copy. The definition also feeds the SDK's Mcp-Param-* mirroring.
function withoutOutputSchema(tool: Tool): Tool {
  const { outputSchema: _checkedHere, ...rest } = tool;
  return rest;
}

// On a 2026-07-28 connection the SDK hands back only `complete` results (an `input_required` goes
// to its rounds, or is thrown): the result's type is recorded as the server stated it.
function complete(client: Client, observed: Observed): Observed {
  return client.getProtocolEra() === 'modern' ? { ...observed, resultType: 'complete' } : observed;
}

function startClock() {
  const startedAt = new Date();
  const t0 = performance.now();
  return {
    done(client: Client, trace?: Trace): Omit<Observation, 'observed'> {
      const transport = client.transport as { sessionId?: string } | undefined;
      const protocolVersion = client.getNegotiatedProtocolVersion();
      const call = trace?.exchanges.find((x) => x.rpcMethod === 'tools/call');
      return {
        startedAt,
        durationMs: Math.max(0, Math.round(performance.now() - t0)),
        ...(call?.rpcId != null ? { mcpRequestId: call.rpcId } : {}),
        ...(transport?.sessionId ? { sessionId: transport.sessionId } : {}),
        ...(protocolVersion ? { protocolVersion } : {}),
        ...(client.getServerVersion()?.version ? { serverVersion: client.getServerVersion()!.version } : {}),
      };
    },
  };
}
