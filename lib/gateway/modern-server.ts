// The gateway's side towards 2026-07-28 clients over HTTP: SDK v2's createMcpHandler builds one
// low-level Server per client request (this factory), in front of a Client towards the server
// (upstream-client.ts). The Server shows the server's own identity, capabilities and
// instructions (server/discover answers with them), and relays every request as the client sent
// it (its params taken from the request itself: modern-exchange.ts), except:
// - `tools/list`: remembered as the tool catalog and shown without the tools policy hides (blocked,
//   or held: changed since accepted; such a list is marked `cacheScope: "private"`); when the
//   hidden set changes, clients are told the list changed (`hiddenChanged`);
// - `tools/call`: enforced and observed (modern-call.ts).
// An `input_required` answer goes back with the gateway's own requestState wrapped around the
// server's (round-state.ts), so a retry is checked before anything is relayed.
import {
  PROTOCOL_VERSION_META_KEY,
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  LOG_LEVEL_META_KEY,
  type Client,
  type RequestOptions,
} from '@modelcontextprotocol/client';
import {
  Server,
  type JSONRPCRequest,
  type McpServerFactory,
  type RequestStateCodec,
  type Result,
  type ServerContext,
  type Tool,
} from '@modelcontextprotocol/server';
import { shiftedProgress } from './approval-gate';
import type { GatewayContext } from './context';
import type { HeldCalls } from './held-calls';
import { callTool } from './modern-call';
import { carriedModern, type ModernExchange } from './modern-exchange';
import type { OpenCalls } from './open-calls';
import type { RoundState } from './round-state';
import { createdTask, observedTaskAnswer } from './task-records';
import { exchangeHeaders, forward, type Opened } from './upstream-client';

/** What every request of the 2026 leg shares: the upstream, the catalog, the state codec. */
export interface ModernGateway {
  ctx: GatewayContext;
  /** The server: over HTTP `Upstream` (upstream-client.ts), over stdio the child's one client (stdio-modern.ts). */
  upstream: { open(exchange: ModernExchange | undefined): Promise<Opened> };
  catalog: ToolCatalog;
  codec: RequestStateCodec<RoundState>;
  /** Calls answered with a round whose client has not come back yet (recorded if it never does). */
  open: OpenCalls;
  /** Calls to a 2025 server held open upstream for its requests mid-call (held-calls.ts). */
  held: HeldCalls;
  /**
   * The request's exchange where no HTTP request carries one (stdio: recorded by the transport
   * from the message as it arrived, looked up by the request's id).
   */
  exchangeOf?: (ctx: ServerContext) => ModernExchange | undefined;
  /** The hidden set (policy.ts `hiddenKey`) lists were last shown without; undefined before any list. */
  shownHidden?: string;
  /** Tells clients the tool list changed (their subscriptions): the hidden set did. */
  hiddenChanged?: () => void;
}

/** After a policy answer: clients are told the list changed when the set of hidden tools did. */
export function noticeHidden(g: ModernGateway, hiddenKey: string): void {
  if (g.shownHidden === undefined || g.shownHidden === hiddenKey) return;
  g.shownHidden = hiddenKey;
  g.hiddenChanged?.();
}

/** The server's tools as last listed, shared by every request of the 2026 leg. */
export class ToolCatalog {
  readonly tools = new Map<string, Tool>();
  loaded = false;
  private list: Tool[] | null = null;

  replace(tools: Iterable<Tool>, complete: boolean): void {
    this.tools.clear();
    for (const t of tools) this.tools.set(t.name, t);
    this.list = null;
    this.loaded = complete;
  }

  add(tools: Iterable<Tool>, complete: boolean): void {
    for (const t of tools) this.tools.set(t.name, t);
    this.list = null;
    if (complete) this.loaded = true;
  }

  toolList(): Tool[] {
    return (this.list ??= [...this.tools.values()]);
  }
}

/** Who the gateway's server says it is when the server behind it names itself nowhere. */
export const GATEWAY_SERVER_INFO = { name: 'countersign-gateway', version: '1.0.0' };

export function modernFactory(g: ModernGateway): McpServerFactory {
  return async ({ authInfo }) => {
    const exchange = carriedModern(authInfo);
    let opened: Opened;
    try {
      opened = await g.upstream.open(exchange);
    } catch (error) {
      if (exchange) exchange.unreachable = describe(rootCause(error));
      throw error;
    }
    const { client, release } = opened;
    const capabilities = client.getServerCapabilities() ?? {};
    const server = new GatewayServer(client.getServerVersion() ?? GATEWAY_SERVER_INFO, {
      capabilities,
      ...(client.getInstructions() ? { instructions: client.getInstructions() } : {}),
      requestState: { verify: g.codec.verify },
    });
    // A 2025 session's instance serves many requests: each carries its own exchange.
    const of = (ctx: ServerContext) => {
      const mine = carriedModern(ctx.http?.authInfo) ?? g.exchangeOf?.(ctx) ?? exchange;
      const declared = server.getClientCapabilities();
      if (mine && declared) mine.declared = declared;
      return mine;
    };
    const relay = (method: string, request: { params?: unknown }, ctx: ServerContext) =>
      relayRequest(g, client, of(ctx), method, request.params, ctx);
    if (capabilities.tools) {
      // The server's answers as they came (typed loosely: the client's SDK validates them).
      server.setRequestHandler(
        'tools/list',
        (request, ctx) => listTools(g, client, of(ctx), request.params, ctx) as never,
      );
      server.setRequestHandler(
        'tools/call',
        (request, ctx) => callTool(g, client, of(ctx), request.params, ctx) as never,
      );
    }
    server.fallbackRequestHandler = (request, ctx) => relay(request.method, request, ctx);
    server.onclose = release;
    return server;
  };
}

/**
 * SDK v2's Server, except that a 2025 client's task-augmented `tools/call` may be answered with the
 * server's CreateTaskResult (task-records.ts), which the SDK's check of a tools/call result refuses
 * (it takes a result without `content` for another family's). Every other answer is checked as the
 * SDK checks it.
 */
class GatewayServer extends Server {
  protected override _wrapHandler(
    method: string,
    handler: (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>,
  ): (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result> {
    if (method !== 'tools/call') return super._wrapHandler(method, handler);
    const checked = super._wrapHandler(method, async (request, ctx) => {
      const result = await handler(request, ctx);
      if (isRecord(request.params?.task) && createdTask(result)) throw new TaskCreated(result);
      return result;
    });
    return (request, ctx) =>
      checked(request, ctx).catch((error: unknown) => {
        if (error instanceof TaskCreated) return error.result;
        throw error;
      });
  }
}

/** Carries a CreateTaskResult past the SDK's tools/call result check (GatewayServer). */
class TaskCreated {
  constructor(readonly result: Result) {}
}

/** Any request other than the tools': relayed, its rounds wrapped. */
async function relayRequest(
  g: ModernGateway,
  client: Client,
  exchange: ModernExchange | undefined,
  method: string,
  params: unknown,
  ctx: ServerContext,
): Promise<Record<string, unknown>> {
  const state = ctx.mcpReq.requestState<RoundState>();
  const raw = sent(exchange, params);
  const result = await observedTaskAnswer(client, method, raw, ctx, () =>
    forward(
      client,
      method,
      upstreamParams(client, raw, state, ctx, exchange?.declared),
      relayOptions(ctx, raw, exchange),
    ),
  );
  return wrapRound(g, result, {}, ctx);
}

async function listTools(
  g: ModernGateway,
  client: Client,
  exchange: ModernExchange | undefined,
  params: unknown,
  ctx: ServerContext,
): Promise<Record<string, unknown>> {
  const raw = sent(exchange, params);
  const result = await forward(
    client,
    'tools/list',
    upstreamParams(client, raw, undefined, ctx, exchange?.declared),
    relayOptions(ctx, raw, exchange),
  );
  const tools = Array.isArray(result.tools) ? (result.tools as Tool[]) : [];
  const complete = typeof result.nextCursor !== 'string';
  if (raw?.cursor === undefined) g.catalog.replace(tools, complete);
  else g.catalog.add(tools, complete);
  const policy = await g.ctx.policy.get(g.catalog.toolList());
  // This answer shows the current set: the change is told to others (subscribed), then recorded.
  if (policy) {
    noticeHidden(g, policy.hiddenKey);
    g.shownHidden = policy.hiddenKey;
  }
  const hidden = new Set(policy?.hidden ?? []);
  if (!tools.some((t) => hidden.has(t.name))) return result;
  return { ...result, tools: tools.filter((t) => !hidden.has(t.name)), cacheScope: 'private' };
}

/** The request's params as the client sent them (the SDK lifted the envelope and retry fields out). */
export function sent(exchange: ModernExchange | undefined, params: unknown): Record<string, unknown> | undefined {
  return exchange?.params ?? (params as Record<string, unknown> | undefined);
}

const RESERVED_META = [
  PROTOCOL_VERSION_META_KEY,
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  LOG_LEVEL_META_KEY,
];

/**
 * The params the server gets: the client's, with the server's own requestState of the last round
 * in place of the gateway's, and the progress token left to the SDK client (relayOptions). A 2025
 * server gets no 2026 envelope, retry fields or `task`: its era has none of them.
 */
export function upstreamParams(
  client: Client,
  raw: Record<string, unknown> | undefined,
  state: RoundState | string | undefined,
  ctx?: ServerContext,
  declared?: Record<string, unknown>,
): Record<string, unknown> | undefined {
  if (!raw) return raw;
  const { requestState: _ours, _meta, ...rest } = raw;
  // A 2025 client's round answered in-process by the SDK's legacy shim: its answers are the context's.
  const inputResponses = raw.inputResponses ?? ctx?.mcpReq.inputResponses;
  delete rest.inputResponses;
  const legacy = client.getProtocolEra() === 'legacy';
  // A 2025 client's `task` goes to a 2025 server (task-records.ts observes it). 2026-07-28 has no
  // tasks: a 2026-07-28 client's (its request carries the envelope) is left out and the call runs
  // as an ordinary one, as the spec treats a feature the other side does not support.
  if (legacy && ctx?.mcpReq.envelope !== undefined) delete rest.task;
  const params: Record<string, unknown> = rest;
  if (!legacy && inputResponses !== undefined) params.inputResponses = inputResponses;
  const up = typeof state === 'object' ? state.up : undefined;
  if (!legacy && up !== undefined) params.requestState = up;
  if (isRecord(_meta)) {
    const meta: Record<string, unknown> = { ..._meta };
    delete meta.progressToken;
    if (legacy) for (const key of RESERVED_META) delete meta[key];
    if (Object.keys(meta).length) params._meta = meta;
  }
  // A 2025 client in front of a 2026-07-28 server: what it declared at initialize, per request.
  if (!legacy && declared) params._meta = { [CLIENT_CAPABILITIES_META_KEY]: declared, ...(params._meta as object) };
  return params;
}

/**
 * Progress from the server goes to the client on its own token (raised by `progressShift` above
 * the gateway's own progress of a call it held for a grant: approval-gate.ts); the client's
 * cancel reaches the server; its Mcp-Param-* headers go with it (the server checks them against
 * the arguments).
 */
export function relayOptions(
  ctx: ServerContext,
  raw: Record<string, unknown> | undefined,
  exchange: ModernExchange | undefined,
  progressShift = 0,
): RequestOptions {
  const token = isRecord(raw?._meta) ? raw._meta.progressToken : undefined;
  return {
    signal: ctx.mcpReq.signal,
    ...(exchange ? { headers: { ...exchange.paramHeaders, ...exchangeHeaders(exchange) } } : {}),
    ...(typeof token === 'string' || typeof token === 'number'
      ? {
          onprogress: (progress) =>
            void ctx.mcpReq
              .notify({
                method: 'notifications/progress',
                params: { ...shiftedProgress(progress, progressShift), progressToken: token },
              })
              .catch(() => undefined),
        }
      : {}),
  };
}

/** An `input_required` answer with the gateway's state around the server's; any other answer as is. */
export async function wrapRound(
  g: ModernGateway,
  result: Record<string, unknown>,
  mine: Omit<RoundState, 'up'>,
  ctx: ServerContext,
): Promise<Record<string, unknown>> {
  if (result.resultType !== 'input_required') return result;
  const up = typeof result.requestState === 'string' ? result.requestState : undefined;
  return { ...result, requestState: await g.codec.mint({ ...mine, ...(up !== undefined ? { up } : {}) }, ctx) };
}

/** A failure's name and code, for the client's error and the log: never its message (which may carry a URL). */
export function describe(error: unknown): string {
  if (error && typeof error === 'object') {
    const e = error as { name?: unknown; code?: unknown; cause?: { code?: unknown } };
    const code = e.code ?? e.cause?.code;
    return [typeof e.name === 'string' ? e.name : 'Error', code != null ? String(code) : null]
      .filter(Boolean)
      .join(' ');
  }
  return 'Error';
}

/** What an SDK error wraps: the network's error under a failed probe (the one with an errno code). */
export function rootCause(error: unknown): unknown {
  let e = error;
  for (let depth = 0; depth < 5 && e instanceof Error && e.cause !== undefined; depth++) {
    e = e.cause;
    if (typeof (e as { code?: unknown }).code === 'string' && /^E[A-Z]+$/.test((e as { code: string }).code)) break;
  }
  return e;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
