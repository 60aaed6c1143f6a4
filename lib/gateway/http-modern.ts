// Streamable HTTP mode, the 2026-07-28 leg (docs/gateway.md "Both eras"): a
// POST that opens no 2025 session and that SDK v2 classifies as 2026-07-28 is served by SDK v2's
// createMcpHandler (per request, strict: `legacy: 'reject'`), whose factory (modern-server.ts)
// relays it to the server through SDK v2's Client in the era the server offers; a plain
// `tools/call` is answered by the lean path instead (modern-lean.ts), which hands back to the
// handler whatever it does not serve itself. The 2025 leg
// (sessions: http.ts, relay.ts) serves every other request. The server's own 401/403 for the
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
} from '@modelcontextprotocol/server';
import type { GatewayContext } from './context';
import type { UpstreamHead } from './exchange';
import { carryingModern, modernExchange, refusalFor } from './modern-exchange';
import { HeldCalls } from './held-calls';
import { leanPath, plainCall, type PlainCall } from './modern-lean';
import { modernFactory, ToolCatalog, type ModernGateway } from './modern-server';
import { upstreamAgent } from './http-upstream';
import { OpenCalls } from './open-calls';
import { roundStateCodec, TTL_SECONDS } from './round-state';
import { Upstream } from './upstream-client';

export interface ModernLeg {
  /**
   * A 2025 client's session in front of a 2026-07-28 server: served by SDK v2's server over its
   * session transport, the requests relayed through SDK v2's client (null when the server speaks
   * 2025: the relay serves that pairing as it is).
   */
  legacySession(request: Request, parsed: unknown, authorization: string | null): Promise<Response | null>;
  /** A request of such a session (null: not one of them). */
  inSession(request: Request, parsed: unknown, authorization: string | null): Promise<Response | null>;
  /** Whether this request is the 2026 leg's (a POST without a 2025 session, classified 2026-07-28). */
  serves(req: IncomingMessage, request: Request, parsed: unknown): Promise<boolean>;
  /** Its answer: the handler's, or the server's refusal of it. */
  answer(request: Request, parsed: unknown, authorization: string | null): Promise<Response | UpstreamHead>;
  close(): Promise<void>;
}

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
  const agent = upstreamAgent(upstreamUrl);
  // The plain calls the lean path serves (modern-lean.ts), found as serves() classifies the request.
  const lean = ctx.modernLean === false ? null : leanPath(g, upstreamUrl, agent, (a) => upstream.discovered(a));
  const plains = new WeakMap<Request, PlainCall>();
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
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
    async serves(req, request, parsed) {
      if (req.method !== 'POST' || req.headers['mcp-session-id'] !== undefined) return false;
      const plain = lean ? plainCall(req.headers, parsed) : null;
      if (plain) {
        plains.set(request, plain);
        return true;
      }
      return !(await isLegacyRequest(request, parsed));
    },
    async answer(request, parsed, authorization) {
      const exchange = modernExchange(authorization, parsed, request.headers);
      const plain = lean && plains.get(request);
      if (plain) {
        const answer = await lean.answer(plain, exchange, request.signal);
        if (answer) return answer;
      }
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
      // The server could not be reached: the client's request gets the JSON-RPC error the relay gives.
      if (exchange.unreachable && response.status >= 500) {
        await response.body?.cancel().catch(() => undefined);
        return Response.json({
          jsonrpc: '2.0',
          id: exchange.id ?? null,
          error: { code: -32603, message: `The gateway could not reach the MCP server (${exchange.unreachable}).` },
        });
      }
      return response;
    },
    async legacySession(request, parsed, authorization) {
      const exchange = modernExchange(authorization, parsed, request.headers);
      // Not reachable now: the relay answers as it does for any server it cannot reach.
      if (!(await upstream.needsBridge(exchange).catch(() => false))) return null;
      const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (id) => void sessions.set(id, transport),
        onsessionclosed: (id) => void sessions.delete(id),
      });
      const server = await factory({ era: 'legacy', authInfo: carryingModern(exchange) });
      await server.connect(transport);
      return transport.handleRequest(request, { authInfo: carryingModern(exchange), parsedBody: parsed });
    },
    async inSession(request, parsed, authorization) {
      const id = request.headers.get('mcp-session-id');
      const transport = id ? sessions.get(id) : undefined;
      if (!transport) return null;
      const exchange = modernExchange(authorization, parsed, request.headers);
      return transport.handleRequest(request, {
        authInfo: carryingModern(exchange),
        ...(parsed !== undefined ? { parsedBody: parsed } : {}),
      });
    },
    async close() {
      for (const tell of Object.values(told)) tell.cancel();
      await Promise.allSettled([...sessions.values()].map((t) => t.close()));
      await handler.close();
      await upstream.close();
      agent.destroy();
      // Calls still waiting for their client's retry: recorded as left at their round (and cancelled).
      g.open.flush();
      held.cancelAll();
    },
  };
}

/** Within this long of a list change told, further ones of its kind are folded into one. */
export const COALESCE_MS = 250;

/**
 * A kind of list change, told to the clients that follow it (every open subscriptions/listen
 * stream, whose queues the SDK does not bound) at most once per `ms`. A list_changed
 * notification carries nothing but "this list changed, list it again", so the rule loses nothing:
 * the first change of a burst is told at once, every further one within the window is dropped,
 * and if any was dropped one more is told when the window ends (so the last change is never
 * lost). A server that floods the gateway's one subscription with 50,000 changes costs each
 * client a few notifications, and the gateway one pending flag per kind.
 */
export function coalesced(tell: () => void, ms = COALESCE_MS): { (): void; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  let pending = false;
  const tick = () => {
    if (!pending) return void (timer = undefined);
    pending = false;
    tell();
    timer = setTimeout(tick, ms).unref();
  };
  const told = () => {
    if (timer) return void (pending = true);
    tell();
    timer = setTimeout(tick, ms).unref();
  };
  told.cancel = () => {
    clearTimeout(timer);
    timer = undefined;
    pending = false;
  };
  return told;
}
