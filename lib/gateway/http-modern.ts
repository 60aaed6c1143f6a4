// Streamable HTTP mode, the 2026-07-28 leg (docs/gateway.md "Both eras"): a
// POST that opens no 2025 session and that SDK v2 classifies as 2026-07-28 is served by SDK v2's
// createMcpHandler (per request, strict: `legacy: 'reject'`), whose factory (modern-server.ts)
// relays it to the server through SDK v2's Client in the era the server offers; a plain
// `tools/call` is answered by the lean path instead (modern-lean.ts), which hands back to the
// handler whatever it does not serve itself. The 2025 leg (sessions: http.ts, the factory's 2025
// instance) serves every other request, but for a plain `tools/call` in a session with its own
// upstream session, which the lean path answers too (`inSession`). The server's own 401/403 for the
// request goes back as it was sent, instead of the handler's answer, unless that answer already
// streams: a call held for its grant streams its progress from the first notification, and the
// head is not held back for the server's (that would silence the progress the client asked for
// while a reviewer decides), so a later refusal ends the call on the stream (docs/gateway.md
// "Authorization passthrough").
import type { IncomingMessage } from 'node:http';
import { randomUUID } from 'node:crypto';
import {
  createMcpHandler,
  isLegacyRequest,
  WebStandardStreamableHTTPServerTransport,
  type Server,
} from '@modelcontextprotocol/server';
import type { Client } from '@modelcontextprotocol/client';
import type { GatewayContext } from './context';
import type { UpstreamHead } from './exchange';
import { carryingModern, modernExchange, refusalFor, type ModernExchange } from './modern-exchange';
import { HeldCalls, KIND, SERVER_ASKS } from './held-calls';
import { upstreamPool } from './lean-upstream';
import { leanPath, plainCall, sessionCall, type LeanAnswer, type LeanSession } from './modern-lean';
import { isPrimingEvent, RECONNECT_MS, SessionEvents } from './event-store';
import { describe, modernFactory, rootCause, ToolCatalog, type ModernGateway } from './modern-server';
import { Activity, IdleSessions, SESSION_IDLE_MS, terminated } from './idle-sessions';
import { coalesced } from './list-changes';
import { OpenCalls } from './open-calls';
import { roundStateCodec, TTL_SECONDS } from './round-state';
import { introduction, NO_TIMEOUT_MS, PASSTHROUGH, relatedExchange, Upstream } from './upstream-client';

export interface ModernLeg {
  /**
   * A 2025 client's session, opened by its `initialize`: served by SDK v2's server (the factory's
   * 2025 instance) over its session transport. In front of a server that accepts the 2025
   * handshake, the session has its own upstream session, opened with the client's `initialize`
   * (`Upstream.own`); in front of one that speaks only 2026-07-28 it is bridged (each request
   * relayed in 2026-07-28 through SDK v2's client). The server's refusal comes back as it was sent.
   */
  legacySession(request: Request, parsed: unknown, authorization: string | null): Promise<Response | UpstreamHead>;
  /** A request of such a session (null: not one of them); `exchange` is the lean path's when it handed the call on. */
  inSession(
    request: Request,
    parsed: unknown,
    authorization: string | null,
    exchange?: ModernExchange,
  ): Promise<Response | UpstreamHead | null>;
  /**
   * A plain `tools/call` answered by the lean path (modern-lean.ts) from the node request, before
   * any web Request is built (a 2026-07-28 one, or a 2025 one inside a session with its own
   * upstream session): its answer, or the exchange the SDK's path is to go on with (`handed` set
   * when the call was sent), or null for a request that is not a plain call.
   */
  lean(req: IncomingMessage, parsed: unknown, authorization: string | null, signal: AbortSignal): Promise<Lean | null>;
  /** Whether this request is the 2026 leg's (a POST without a 2025 session, classified 2026-07-28). */
  serves(req: IncomingMessage, request: Request, parsed: unknown): Promise<boolean>;
  /** Its answer: the handler's, or the server's refusal of it; `exchange` is the lean path's when it handed the call on. */
  answer(
    request: Request,
    parsed: unknown,
    authorization: string | null,
    exchange?: ModernExchange,
  ): Promise<Response | UpstreamHead>;
  close(): Promise<void>;
}

export type Lean = { answer: LeanAnswer } | { exchange: ModernExchange };

export function modernLeg(ctx: GatewayContext, upstreamUrl: URL): ModernLeg {
  const held = new HeldCalls();
  const upstream = new Upstream(upstreamUrl, ctx.log, held);
  const g: ModernGateway = {
    ctx,
    upstream,
    held,
    catalog: new ToolCatalog(),
    codec: roundStateCodec(ctx.endpoint.apiKey, ctx),
    open: new OpenCalls(ctx.reporter, ctx.roundAbandonMs ?? TTL_SECONDS * 1000),
  };
  const factory = modernFactory(g);
  const pool = upstreamPool(upstreamUrl);
  const lean = ctx.modernLean === false ? null : leanPath(g, upstreamUrl, pool, (a) => upstream.discovered(a));
  const sessions = new IdleSessions(ctx.sessionIdleMs ?? SESSION_IDLE_MS, ctx.log);
  // The sessions with their own upstream session, as the lean path sends their calls.
  const leanSessions = new WeakMap<WebStandardStreamableHTTPServerTransport, LeanSession>();
  const handler = createMcpHandler(factory, {
    legacy: 'reject',
    onerror: (error) => ctx.log(`2026-07-28 leg: ${error.name}: ${error.message.slice(0, 200)}`),
  });
  const told = {
    tools: coalesced(() => handler.notify.toolsChanged()),
    prompts: coalesced(() => handler.notify.promptsChanged()),
    resources: coalesced(() => handler.notify.resourcesChanged()),
  };
  // Clients following list changes (subscriptions/listen) learn of a tool hidden or shown again.
  g.hiddenChanged = told.tools;
  const changes = {
    tools: () => {
      g.catalog.loaded = false;
      told.tools();
    },
    prompts: told.prompts,
    resources: told.resources,
  };
  return {
    async lean(req, parsed, authorization, signal) {
      if (!lean || req.method !== 'POST') return null;
      const id = req.headers['mcp-session-id'];
      if (id !== undefined) {
        const open = typeof id === 'string' ? sessions.get(id) : undefined;
        const session = open && leanSessions.get(open.transport);
        if (!session) return null;
        // The client's cancel of a lean call (the session's server knows nothing of it); then the SDK's path as always.
        const cancelled = cancelOf(parsed);
        if (cancelled) return (void session.running.get(cancelled.requestId)?.abort(cancelled.reason), null);
        const plain = sessionCall(req.headers, parsed, session.version);
        if (!plain) return null;
        const exchange = modernExchange(authorization, parsed, req.headers);
        // The session is in use while its lean call runs (idle-sessions.ts).
        const leave = open.activity.enter();
        const answer = await lean.inSession(plain, exchange, session).finally(leave);
        return answer ? { answer } : { exchange };
      }
      const plain = plainCall(req.headers, parsed);
      if (!plain) return null;
      const exchange = modernExchange(authorization, parsed, req.headers);
      const answer = await lean.answer(plain, exchange, signal);
      return answer ? { answer } : { exchange };
    },
    async serves(req, request, parsed) {
      if (req.method !== 'POST' || req.headers['mcp-session-id'] !== undefined) return false;
      return !(await isLegacyRequest(request, parsed));
    },
    async answer(request, parsed, authorization, given) {
      const exchange = given ?? modernExchange(authorization, parsed, request.headers);
      // A client's subscription is served by the gateway's handler, fed by the gateway's own one.
      if (exchange.method === 'subscriptions/listen')
        await upstream.watch(exchange, changes).catch((error: unknown) => {
          ctx.log(`could not follow the server's list changes: ${error instanceof Error ? error.name : 'Error'}`);
        });
      const response = await handler.fetch(request, { authInfo: carryingModern(exchange), parsedBody: parsed });
      // The server refused the request (its probe included: a 401 to server/discover): as it was sent.
      // Known here unless the handler began to stream first (see the top of this file).
      const refusal = refusalFor(exchange);
      if (refusal) {
        await response.body?.cancel().catch(() => undefined);
        return refusal;
      }
      // The server could not be reached: the client's request gets a JSON-RPC error saying so.
      if (exchange.unreachable && response.status >= 500) {
        await response.body?.cancel().catch(() => undefined);
        return failedAnswer(exchange)!;
      }
      return response;
    },
    async legacySession(request, parsed, authorization) {
      const exchange = modernExchange(authorization, parsed, request.headers);
      let own: Client | null;
      let server: Server;
      // Each session tells its client of a change of the hidden set, as its own calls meet it.
      const mine: ModernGateway = { ...g, shownHidden: undefined };
      try {
        own = await upstream.own(exchange, introduction(parsed));
        if (own) {
          const client = own;
          mine.upstream = { open: async () => ({ client, release: () => void client.close().catch(() => undefined) }) };
        }
        server = (await modernFactory(mine)({ era: 'legacy', authInfo: carryingModern(exchange) })) as Server;
        mine.hiddenChanged = () => void server.sendToolListChanged().catch(() => undefined);
      } catch (error) {
        if (!exchange.refusal) exchange.unreachable ??= describe(rootCause(error));
        const failed = failedAnswer(exchange);
        if (failed) return failed;
        throw error;
      }
      if (own) {
        // The server's notifications outside a request (logging, resource updates, list changes)
        // reach this session's client as they came.
        // One the server sent on a request's stream goes on the client's request's stream.
        own.fallbackNotificationHandler = async (notification) => {
          if (notification.method === 'notifications/tools/list_changed') g.catalog.loaded = false;
          const { related, sent } = relatedExchange(notification);
          const to = related?.id;
          await server
            .notification(sent, typeof to === 'string' || typeof to === 'number' ? { relatedRequestId: to } : undefined)
            .catch(() => undefined);
        };
        // Its requests are put to this session's client, on the stream of the request they came with.
        const declared = introduction(parsed)?.capabilities ?? {};
        for (const method of SERVER_ASKS.filter((m) => declared[KIND[m]] !== undefined))
          own.setRequestHandler(method, async (asked, ctx) => {
            const { related, sent } = relatedExchange(asked);
            const to = related?.id;
            return (await server.request(sent as never, PASSTHROUGH, {
              signal: ctx.mcpReq.signal,
              timeout: NO_TIMEOUT_MS,
              ...(typeof to === 'string' || typeof to === 'number' ? { relatedRequestId: to } : {}),
            })) as never;
          });
      }
      // A client whose stream broke resumes it with Last-Event-ID (event-store.ts): the lean path's answers too.
      const events = new SessionEvents();
      const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        eventStore: events,
        retryInterval: RECONNECT_MS,
        onsessioninitialized: (id) => sessions.set(id, { transport, activity, ending: () => terminated(own) }),
        // The client's DELETE ends its upstream session too, before it is answered.
        onsessionclosed: async (id) => {
          await sessions
            .take(id)
            ?.ending()
            .catch(() => undefined);
        },
      });
      await server.connect(transport);
      const activity = new Activity(transport);
      const response = await transport.handleRequest(request, {
        authInfo: carryingModern(exchange),
        parsedBody: parsed,
      });
      const answered = await headed(response, exchange);
      // A session the server refused at once is not kept.
      if (!(answered instanceof Response) || !transport.sessionId) void server.close().catch(() => undefined);
      else if (own) {
        // A plain call of this session may take the lean path, its answer stored as the transport stores its own.
        leanSessions.set(transport, {
          g: mine,
          client: own,
          id: transport.sessionId,
          authorization: exchange.authorization,
          running: new Map(),
          version: server.getNegotiatedProtocolVersion() ?? '',
          events: { store: events, retryMs: RECONNECT_MS },
        });
      }
      return answered;
    },
    async inSession(request, parsed, authorization, given) {
      const id = request.headers.get('mcp-session-id');
      const session = id ? sessions.get(id) : undefined;
      if (!session) return null;
      const exchange = given ?? modernExchange(authorization, parsed, request.headers);
      const leave = session.activity.enter();
      const response = await session.transport
        .handleRequest(request, {
          authInfo: carryingModern(exchange),
          ...(parsed !== undefined ? { parsedBody: parsed } : {}),
        })
        .finally(leave);
      if (request.method === 'POST') return headed(response, exchange);
      // A GET stream open keeps the session in use (idle-sessions.ts).
      return request.method === 'GET' && response.ok ? session.activity.streaming(response, request.signal) : response;
    },
    async close() {
      for (const tell of Object.values(told)) tell.cancel();
      await sessions.close();
      await handler.close();
      await upstream.close();
      void pool.destroy();
      // Calls still waiting for their client's retry: recorded as left at their round (and cancelled).
      g.open.flush();
      held.cancelAll();
    },
  };
}

/** A `notifications/cancelled` message's request id and reason, or null. */
function cancelOf(parsed: unknown): { requestId: string | number; reason: unknown } | null {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
  const { method, params } = parsed as { method?: unknown; params?: { requestId?: unknown; reason?: unknown } };
  if (method !== 'notifications/cancelled' || typeof params !== 'object' || params === null) return null;
  const { requestId, reason } = params;
  return typeof requestId === 'string' || typeof requestId === 'number' ? { requestId, reason } : null;
}

/**
 * The answer to a 2025 session's POST, its head held until its first event: by then the server
 * has answered the request upstream (or sent its first progress), and a refusal of it (401/403
 * with its challenge) goes back as the server sent it instead. A call held for its grant streams
 * its progress from the first notification, so a later refusal ends it on the stream, as on the
 * 2026-07-28 leg.
 */
async function headed(response: Response, exchange: ModernExchange): Promise<Response | UpstreamHead> {
  if (!response.body || !response.ok) return failedAnswer(exchange) ?? response;
  const reader = response.body.getReader();
  const read = () => reader.read().catch(() => ({ done: true, value: undefined }) as const);
  // A resumable stream opens with its priming event (event-store.ts), before the server said anything.
  const primed = await read();
  const first = primed.value && isPrimingEvent(primed.value) ? await read() : primed;
  const failed = failedAnswer(exchange);
  if (failed) {
    await reader.cancel().catch(() => undefined);
    return failed;
  }
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      if (first !== primed) controller.enqueue(primed.value!);
      if (first.value) controller.enqueue(first.value);
      if (first.done) controller.close();
    },
    async pull(controller) {
      const next = await reader.read();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** The server's refusal of the request as it sent it, or the JSON-RPC error for a server not reached. */
function failedAnswer(exchange: ModernExchange): Response | UpstreamHead | null {
  const refusal = refusalFor(exchange);
  if (refusal) return refusal;
  if (!exchange.unreachable) return null;
  return Response.json({
    jsonrpc: '2.0',
    id: exchange.id ?? null,
    error: { code: -32603, message: `The gateway could not reach the MCP server (${exchange.unreachable}).` },
  });
}
