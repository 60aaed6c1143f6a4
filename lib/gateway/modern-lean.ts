// The lean paths: a plain `tools/call` answered by the gateway itself, without SDK v2's server
// and client, whose web Request/Response and streams per exchange cost more than the call
// (bench:gateway, docs/benchmarks.md). Two legs, one way:
// - a 2026-07-28 call (no session): one request as SDK v2's client sends it, valid envelope and
//   standard headers (the SDK's own classification, and its header checks), for an Authorization
//   whose server is known to speak 2026-07-28; answered in JSON as SDK v2's server encodes it;
// - a 2025 call inside a client's own session (http-modern.ts), whose upstream session it is sent
//   on (its Mcp-Session-Id and protocol version); answered as the session's transport answers a
//   POST: an SSE stream of one `message` event, with the session's id.
//
// Plain, on both: not a retry (no `inputResponses` / `requestState`), no progress token, no
// `task`, no other member in params; the tool catalog listed; and policy lets it run at once (no
// grant to wait for). Everything else is the SDK's path, which then also answers every malformed
// request with its own errors.
//
// The call is judged, guarded and recorded by the same code as on the SDK's path (modern-call.ts,
// modern-record.ts), and sent to the server as one POST on a kept-alive connection
// (lean-upstream.ts). Only a result the server sent as the one message of its answer (a JSON body,
// or an SSE stream of that one event) is answered here; any other answer (a stream with more in
// it, a 401/403, an error status, a JSON-RPC error, an `input_required` round) is handed to the
// SDK's path with the call as judged, which gets the server's answer replayed instead of sending
// the call again (modern-exchange.ts `handed`), and so answers it exactly as it answers it there.
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Pool } from 'undici';
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  classifyInboundRequest,
  isCallToolResult,
  isJsonContentType,
  isSpecType,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
  type EventStore,
  type JSONRPCMessage,
} from '@modelcontextprotocol/server';
import { StreamableHTTPClientTransport, type Client, type DiscoverResult } from '@modelcontextprotocol/client';
import { isRecord, one, poster, readAnswer, type Post, type Read } from './lean-upstream';
import { judge, newCall, trustedRead } from './modern-call';
import type { ModernExchange } from './modern-exchange';
import { answered, drop, record, refuse, type Call } from './modern-record';
import { GATEWAY_SERVER_INFO, upstreamParams, type ModernGateway } from './modern-server';

const MODERN = '2026-07-28';
/** The envelope's members the lean path knows; a request whose `_meta` names another reserved one goes the SDK's way. */
const ENVELOPE = new Set([PROTOCOL_VERSION_META_KEY, CLIENT_INFO_META_KEY, CLIENT_CAPABILITIES_META_KEY]);
/** A tool name that goes in `Mcp-Name` as it is (no Base64 sentinel either way). */
const PLAIN_NAME = /^[A-Za-z0-9_.\-/]{1,128}$/;

/** A plain call, as the client sent it. */
export interface PlainCall {
  id: string | number;
  name: string;
  params: Record<string, unknown>;
}

/**
 * The message as a plain call's, or null: one `tools/call` request whose params hold nothing but
 * the tool's name (one `Mcp-Name` takes as it is), its arguments and a `_meta` without a progress
 * token, of which `envelope` names the reserved members allowed.
 */
function callOf(parsed: unknown, envelope: ReadonlySet<string>): PlainCall | null {
  if (!isRecord(parsed) || parsed.jsonrpc !== '2.0' || parsed.method !== 'tools/call') return null;
  const id = parsed.id;
  if (!(typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)))) return null;
  const params = parsed.params;
  if (!isRecord(params) || typeof params.name !== 'string' || !PLAIN_NAME.test(params.name)) return null;
  for (const key of Object.keys(params)) if (key !== 'name' && key !== 'arguments' && key !== '_meta') return null;
  if (params.arguments !== undefined && !isRecord(params.arguments)) return null;
  const meta = params._meta;
  if (meta === undefined) return { id, name: params.name, params };
  if (!isRecord(meta) || 'progressToken' in meta) return null;
  for (const key of Object.keys(meta))
    if (key.startsWith('io.modelcontextprotocol/') && !envelope.has(key)) return null;
  return { id, name: params.name, params };
}

/**
 * The request as a plain 2026-07-28 call, or null. Only what the SDK's path would dispatch to the
 * gateway's handler at once passes: the SDK's classification says 2026-07-28, and the standard
 * headers agree with the body exactly as the SDK checks them.
 */
export function plainCall(headers: IncomingHttpHeaders, parsed: unknown): PlainCall | null {
  const call = callOf(parsed, ENVELOPE);
  const meta = call?.params._meta;
  if (!call || !isRecord(meta) || meta[PROTOCOL_VERSION_META_KEY] !== MODERN) return null;
  if (!isRecord(meta[CLIENT_CAPABILITIES_META_KEY])) return null;
  const info = meta[CLIENT_INFO_META_KEY];
  if (!isRecord(info) || typeof info.name !== 'string' || typeof info.version !== 'string') return null;
  if (
    !postable(headers) ||
    one(headers['mcp-protocol-version']) !== MODERN ||
    one(headers['mcp-method']) !== 'tools/call' ||
    one(headers['mcp-name']) !== call.name
  )
    return null;
  const outcome = classifyInboundRequest({
    httpMethod: 'POST',
    protocolVersionHeader: MODERN,
    mcpMethodHeader: 'tools/call',
    mcpNameHeader: call.name,
    body: parsed,
  });
  return outcome.kind === 'modern' ? call : null;
}

/**
 * The request as a plain call inside a 2025 session, or null: no envelope (a 2025 request has
 * none), the headers the session's transport checks (Accept, Content-Type) and the protocol version
 * the session negotiated with its client (`version`).
 */
export function sessionCall(headers: IncomingHttpHeaders, parsed: unknown, version: string | undefined) {
  const call = callOf(parsed, NONE);
  if (!call || !postable(headers) || version === undefined) return null;
  return one(headers['mcp-protocol-version']) === version ? call : null;
}

const NONE: ReadonlySet<string> = new Set();

/** The lean path's answer, written to the client's node response as it is (http.ts). */
export interface LeanAnswer {
  status: number;
  headers: Record<string, string>;
  /** The response's body, or null for a client that is gone. */
  body: string | null;
}

/** A 2025 client's own session, as the lean path sends its calls (http-modern.ts). */
export interface LeanSession {
  /** The session's view of the gateway: its hidden-set notice is the session's own. */
  g: ModernGateway;
  /** Its own upstream session (upstream-client.ts `Upstream.own`). */
  client: Client;
  /** The session's id towards its client. */
  id: string;
  /** The Authorization the session was opened with, sent for a request that carries none. */
  authorization: string | null;
  /** Its lean calls running, by the client's id: a `notifications/cancelled` naming one cancels it. */
  running: Map<string | number, AbortController>;
  /** The protocol version the session negotiated with its client. */
  version: string;
  /** The event store of the session's transport, and the `retry` it tells clients, if it keeps one. */
  events?: { store: EventStore; retryMs?: number };
}

export interface LeanPath {
  /**
   * The plain 2026-07-28 call's answer, or null when the SDK's path is to answer the request:
   * before anything was done (the call is not one the lean path serves), or after the call was
   * sent (`exchange.handed` then carries it and the server's answer).
   */
  answer(plain: PlainCall, exchange: ModernExchange, signal: AbortSignal): Promise<LeanAnswer | null>;
  /** The same for a plain call inside a 2025 session. */
  inSession(plain: PlainCall, exchange: ModernExchange, session: LeanSession): Promise<LeanAnswer | null>;
}

/** What differs between the legs once a call is plain. */
interface Leg {
  g: ModernGateway;
  /** The session's own upstream client (2025); none for a 2026-07-28 call. */
  client?: Client;
  /** The POST's headers and params, as the SDK's client sends the call. */
  headers: Record<string, string>;
  params: Record<string, unknown> | undefined;
  /** The server's result, if the SDK's client takes it as it is, as the SDK's server encodes it. */
  encode(result: unknown): Record<string, unknown> | null;
  /** The client's answer carrying the result. */
  reply(result: Record<string, unknown>): LeanAnswer | Promise<LeanAnswer>;
  /** Aborted when the client cancels the call: the POST is abandoned, `cancel` tells the server. */
  signal: AbortSignal;
  cancel?(upId: string): void;
  /** What a cancelled call's request gets: nothing more. */
  ended(): LeanAnswer;
}

export function leanPath(
  g: ModernGateway,
  url: URL,
  pool: Pool,
  /** What a 2026-07-28 server answered server/discover for an Authorization, if known (upstream-client.ts). */
  discovered: (authorization: string | null) => DiscoverResult | undefined,
): LeanPath {
  const post = poster(url, pool);
  return {
    async answer(plain, exchange, signal) {
      const discover = discovered(exchange.authorization);
      if (!discover || !g.catalog.loaded) return null;
      // The identity the SDK's path shows: the server's own, from its discover answer, as SDK v2's client reads it.
      const own = discover._meta?.[SERVER_INFO_META_KEY];
      const serverInfo = isSpecType.Implementation(own) ? own : GATEWAY_SERVER_INFO;
      return sent(post, plain, exchange, {
        g,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': MODERN,
          'mcp-method': 'tools/call',
          'mcp-name': plain.name,
          ...exchange.paramHeaders,
          ...(exchange.authorization ? { authorization: exchange.authorization } : {}),
        },
        params: plain.params,
        // A result the SDK client would take as it is (its schema: anything else is its to answer).
        encode: (result) =>
          isCallToolResult(result) && (result.resultType === undefined || result.resultType === 'complete')
            ? result
            : null,
        // As SDK v2's server encodes a 2026-07-28 result: `resultType` and the server's identity stamped.
        reply: (result) => json(plain.id, stamped({ ...result, resultType: 'complete' }, serverInfo)),
        signal,
        // Its client closed the request's stream: nothing is written to it.
        ended: () => ({ status: 499, headers: {}, body: null }),
      });
    },

    async inSession(plain, exchange, session) {
      const { g: mine, client } = session;
      const transport = client.transport;
      if (!mine.catalog.loaded || !client.getServerCapabilities()?.tools) return null;
      if (!(transport instanceof StreamableHTTPClientTransport)) return null;
      const authorization = exchange.authorization ?? session.authorization;
      // The client's cancel, by notifications/cancelled: its connection closing cancels nothing in 2025.
      const cancel = new AbortController();
      session.running.set(plain.id, cancel);
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(transport.sessionId ? { 'mcp-session-id': transport.sessionId } : {}),
        ...(transport.protocolVersion ? { 'mcp-protocol-version': transport.protocolVersion } : {}),
        ...exchange.paramHeaders,
        ...(authorization ? { authorization } : {}),
      };
      try {
        return await sent(post, plain, exchange, {
          g: mine,
          client,
          headers,
          params: upstreamParams(client, plain.params, undefined),
          // What SDK v2's server answers to a 2025 client: the result its 2025 schema takes, as it is.
          encode: (result) => (isCallToolResult(result) && result.resultType === undefined ? result : null),
          reply: (result) => sessionAnswer(session, { result, jsonrpc: '2.0', id: plain.id }),
          signal: cancel.signal,
          // The stream ends without an answer, which the client no longer waits for.
          ended: () => ({ status: 200, headers: sseHeaders(session.id), body: '' }),
          // As SDK v2's client tells the server of a request it gave up.
          cancel: (upId) => {
            const body = JSON.stringify({
              jsonrpc: '2.0',
              method: 'notifications/cancelled',
              params: { requestId: upId, reason: String(cancel.signal.reason) },
            });
            post(headers, body, false, AbortSignal.timeout(10_000)).then(
              (res) => res.body.drop(),
              () => undefined,
            );
          },
        });
      } finally {
        session.running.delete(plain.id);
      }
    },
  };
}

/** The call judged, guarded, sent and answered on one leg; null where the SDK's path answers it. */
async function sent(post: Post, plain: PlainCall, exchange: ModernExchange, leg: Leg): Promise<LeanAnswer | null> {
  const { g, signal } = leg;
  const call = newCall(plain.name, plain.params, undefined);
  const judged = await judge(g, call, g.catalog.tools);
  // A call that waits for a grant streams its progress and may take rounds: the SDK's path.
  if (judged.gated && !judged.refusal) return null;
  if (signal.aborted) return (drop(g, call), leg.ended());
  const refusal = judged.refusal ?? trustedRead(g, call, judged, false);
  if (refusal) return leg.reply(refuse(g, call, refusal));

  // The server gets the request as the SDK client sends it, under an id of the gateway's own.
  const upId = `gw-lean-${randomUUID()}`;
  const body = JSON.stringify({ jsonrpc: '2.0', id: upId, method: 'tools/call', params: leg.params });
  const startedAt = Date.now();
  const failed = (error: unknown) =>
    signal.aborted
      ? cancelled(leg, call, startedAt, upId)
      : handOff(exchange, call, startedAt, upId, () => Promise.reject(new TypeError('fetch failed', { cause: error })));
  let read: Read;
  try {
    read = await readAnswer(await post(leg.headers, body, call.read === true, signal), upId);
  } catch (error) {
    return failed(error);
  }
  const result = read.message && 'result' in read.message ? leg.encode(read.message.result) : null;
  if (result) {
    read.taken();
    return leg.reply(answered(g, call, result, startedAt, leg.client));
  }
  // Nobody left to hand it to: the SDK's path would not ask for the answer.
  if (signal.aborted) return cancelled(leg, call, startedAt, upId);
  return handOff(exchange, call, startedAt, upId, read.replay);
}

/** The call goes on on the SDK's path, with the server's answer to replay (modern-exchange.ts `handed`). */
function handOff(
  exchange: ModernExchange,
  call: Call,
  startedAt: number,
  upId: string,
  replay: (id: unknown) => Promise<Response>,
): null {
  exchange.handed = { call, startedAt, replay, upId };
  return null;
}

/** The client cancelled the call while it ran: the server told, recorded as on the SDK's path (modern-record.ts `failed`). */
function cancelled(leg: Leg, call: Call, startedAt: number, upId: string): LeanAnswer {
  leg.cancel?.(upId);
  record(leg.g, call, { sent: true, clientError: 'cancelled' }, startedAt, call.grantId);
  return leg.ended();
}

function stamped(result: Record<string, unknown>, serverInfo: unknown): Record<string, unknown> {
  const meta = result._meta;
  if (!isRecord(meta) || meta[SERVER_INFO_META_KEY] !== undefined) return result;
  return { ...result, _meta: { ...meta, [SERVER_INFO_META_KEY]: serverInfo } };
}

function json(id: string | number, result: Record<string, unknown>): LeanAnswer {
  return {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id, result }),
  };
}

/**
 * As SDK v2's session transport answers a POST with one request: its SSE stream of one event, with
 * the session's id. A transport with an event store opens the stream with a priming event (for a
 * client whose version allows empty data) and stores each event under the id it sends it with, so
 * that a client whose stream broke resumes it with Last-Event-ID as on the SDK's path.
 */
export async function sessionAnswer(
  session: Pick<LeanSession, 'id' | 'version' | 'events'>,
  message: Record<string, unknown>,
): Promise<LeanAnswer> {
  const answer = { status: 200, headers: sseHeaders(session.id) };
  const sent = JSON.stringify(message);
  if (!session.events) return { ...answer, body: `event: message\ndata: ${sent}\n\n` };
  const { store, retryMs } = session.events;
  const stream = randomUUID();
  let body = '';
  if (SUPPORTED_PROTOCOL_VERSIONS.includes(session.version) && session.version >= '2025-11-25') {
    const priming = await store.storeEvent(stream, {} as JSONRPCMessage);
    body = `id: ${priming}\n${retryMs !== undefined ? `retry: ${retryMs}\n` : ''}data: \n\n`;
  }
  const id = await store.storeEvent(stream, message as JSONRPCMessage);
  return { ...answer, body: `${body}event: message\nid: ${id}\ndata: ${sent}\n\n` };
}

const sseHeaders = (session: string) => ({
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
  'mcp-session-id': session,
});

/** Whether the request's body and Accept are the ones the SDK's transports take (both answers accepted). */
function postable(headers: IncomingHttpHeaders): boolean {
  const accept = one(headers.accept);
  return (
    isJsonContentType(one(headers['content-type']) ?? null) &&
    accept !== undefined &&
    accept.includes('application/json') &&
    accept.includes('text/event-stream')
  );
}
