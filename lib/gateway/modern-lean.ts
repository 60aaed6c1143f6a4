// The lean path of the 2026-07-28 leg: a plain `tools/call` answered by the gateway itself, without
// SDK v2's per-request server and client, whose web Request/Response and streams per exchange cost
// more than the call (bench:gateway, the 2026-07-28 rows of docs/benchmarks.md).
//
// Plain: one request, as SDK v2's client sends it, that the SDK's path would serve at once: valid
// envelope and standard headers (the SDK's own classification, and its header checks), no
// `inputResponses` / `requestState` (not a retry), no progress token, no `task`; its server's era
// known to be 2026-07-28 for this Authorization and its tool catalog listed; and policy lets it run
// at once (no grant to wait for). Everything else is the SDK's path (http-modern.ts), which then
// also answers every malformed request with its own errors.
//
// The call is judged, guarded and recorded by the same code as on the SDK's path (modern-call.ts,
// modern-record.ts), and sent to the server as one POST on a kept-alive connection. Only a JSON
// result is answered here; any other answer (an SSE stream, a 401/403, an error status, a
// JSON-RPC error, an `input_required` round) is handed to the SDK's path with the call as judged,
// which gets the server's answer replayed instead of sending the call again (modern-exchange.ts
// `handed`), and so answers it exactly as it answers it there.
import { randomUUID } from 'node:crypto';
import {
  Agent as HttpAgent,
  request as httpRequest,
  type Agent,
  type IncomingHttpHeaders,
  type IncomingMessage,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  classifyInboundRequest,
  isCallToolResult,
  isJsonContentType,
  isSpecType,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
} from '@modelcontextprotocol/server';
import type { DiscoverResult } from '@modelcontextprotocol/client';
import { judge, newCall, trustedRead } from './modern-call';
import type { ModernExchange } from './modern-exchange';
import { answered, drop, record, refuse, type Call } from './modern-record';
import { GATEWAY_SERVER_INFO, type ModernGateway } from './modern-server';

const MODERN = '2026-07-28';
/** The envelope's members the lean path knows; a request whose `_meta` names another reserved one goes the SDK's way. */
const ENVELOPE = new Set([PROTOCOL_VERSION_META_KEY, CLIENT_INFO_META_KEY, CLIENT_CAPABILITIES_META_KEY]);
/** A tool name that goes in `Mcp-Name` as it is (no Base64 sentinel either way). */
const PLAIN_NAME = /^[A-Za-z0-9_.\-/]{1,128}$/;

/** Keep-alive connections to the server for the lean path, one pool per gateway. */
export function upstreamAgent(url: URL): Agent {
  const options = { keepAlive: true, keepAliveMsecs: 1000, maxFreeSockets: 256, scheduling: 'lifo' as const };
  return url.protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options);
}

/** A plain call, as the client sent it. */
export interface PlainCall {
  id: string | number;
  name: string;
  params: Record<string, unknown>;
}

/**
 * The request as a plain call, or null. Only what the SDK's path would dispatch to the gateway's
 * handler at once passes: the SDK's classification says 2026-07-28, and the standard headers agree
 * with the body exactly as the SDK checks them.
 */
export function plainCall(headers: IncomingHttpHeaders, parsed: unknown): PlainCall | null {
  if (!isRecord(parsed) || parsed.jsonrpc !== '2.0' || parsed.method !== 'tools/call') return null;
  const id = parsed.id;
  if (!(typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)))) return null;
  const params = parsed.params;
  if (!isRecord(params) || typeof params.name !== 'string' || !PLAIN_NAME.test(params.name)) return null;
  for (const key of Object.keys(params)) if (key !== 'name' && key !== 'arguments' && key !== '_meta') return null;
  if (params.arguments !== undefined && !isRecord(params.arguments)) return null;
  const meta = params._meta;
  if (!isRecord(meta) || meta[PROTOCOL_VERSION_META_KEY] !== MODERN || 'progressToken' in meta) return null;
  for (const key of Object.keys(meta))
    if (key.startsWith('io.modelcontextprotocol/') && !ENVELOPE.has(key)) return null;
  if (!isRecord(meta[CLIENT_CAPABILITIES_META_KEY])) return null;
  const info = meta[CLIENT_INFO_META_KEY];
  if (!isRecord(info) || typeof info.name !== 'string' || typeof info.version !== 'string') return null;
  if (
    !isJsonContentType(one(headers['content-type']) ?? null) ||
    !accepts(one(headers.accept)) ||
    one(headers['mcp-protocol-version']) !== MODERN ||
    one(headers['mcp-method']) !== 'tools/call' ||
    one(headers['mcp-name']) !== params.name
  )
    return null;
  const outcome = classifyInboundRequest({
    httpMethod: 'POST',
    protocolVersionHeader: MODERN,
    mcpMethodHeader: 'tools/call',
    mcpNameHeader: params.name,
    body: parsed,
  });
  return outcome.kind === 'modern' ? { id, name: params.name, params } : null;
}

/** The lean path's answer, written to the client's node response as it is (http.ts). */
export interface LeanAnswer {
  status: number;
  /** A JSON-RPC response, or null for a client that is gone. */
  body: string | null;
}

export interface LeanPath {
  /**
   * The plain call's answer, or null when the SDK's path is to answer the request: before anything
   * was done (the call is not one the lean path serves), or after the call was sent
   * (`exchange.handed` then carries it and the server's answer).
   */
  answer(plain: PlainCall, exchange: ModernExchange, signal: AbortSignal): Promise<LeanAnswer | null>;
}

export function leanPath(
  g: ModernGateway,
  url: URL,
  agent: Agent,
  /** What a 2026-07-28 server answered server/discover for an Authorization, if known (upstream-client.ts). */
  discovered: (authorization: string | null) => DiscoverResult | undefined,
): LeanPath {
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const target = {
    protocol: url.protocol,
    hostname,
    port: url.port,
    path: `${url.pathname}${url.search}`,
    ...(url.username || url.password
      ? { auth: `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` }
      : {}),
    agent,
  };
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;

  /** One POST of the call; retried once on a fresh connection only where it may run twice. */
  function post(headers: Record<string, string>, body: string, resendable: boolean, signal: AbortSignal) {
    return new Promise<IncomingMessage>((resolve, reject) => {
      const req = send({ ...target, method: 'POST', headers, signal });
      req.on('response', resolve);
      req.on('error', (error: NodeJS.ErrnoException) => {
        if (
          resendable &&
          req.reusedSocket &&
          (error.code === 'ECONNRESET' || error.code === 'EPIPE') &&
          !signal.aborted
        )
          return void post(headers, body, false, signal).then(resolve, reject);
        reject(error);
      });
      req.end(body);
    });
  }

  return {
    async answer(plain, exchange, signal) {
      const discover = discovered(exchange.authorization);
      if (!discover || !g.catalog.loaded) return null;
      // The identity the SDK's path shows: the server's own, from its discover answer, as SDK v2's client reads it.
      const own = discover._meta?.[SERVER_INFO_META_KEY];
      const serverInfo = isSpecType.Implementation(own) ? own : GATEWAY_SERVER_INFO;
      // As SDK v2's server encodes a 2026-07-28 result: `resultType` and the server's identity stamped.
      const encoded = (result: Record<string, unknown>) =>
        json(plain.id, stamped({ ...result, resultType: 'complete' }, serverInfo));
      const call = newCall(plain.name, plain.params, undefined);
      const judged = await judge(g, call, g.catalog.tools);
      // A call that waits for a grant streams its progress and may take rounds: the SDK's path.
      if (judged.gated && !judged.refusal) return null;
      if (signal.aborted) return (drop(g, call), gone());
      const refusal = judged.refusal ?? trustedRead(g, call, judged, false);
      if (refusal) return encoded(refuse(g, call, refusal));

      // The server gets the request as the SDK client sends it, under an id of the gateway's own.
      const upId = `gw-lean-${randomUUID()}`;
      const body = JSON.stringify({ jsonrpc: '2.0', id: upId, method: 'tools/call', params: plain.params });
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN,
        'mcp-method': 'tools/call',
        'mcp-name': plain.name,
        ...exchange.paramHeaders,
        ...(exchange.authorization ? { authorization: exchange.authorization } : {}),
      };
      const startedAt = Date.now();
      let res: IncomingMessage;
      try {
        res = await post(headers, body, call.read === true, signal);
      } catch (error) {
        if (signal.aborted) return cancelled(g, call, startedAt);
        return handOff(exchange, call, startedAt, () =>
          Promise.reject(new TypeError('fetch failed', { cause: error })),
        );
      }
      const token = JSON.stringify(upId);
      if (res.statusCode === 200 && isJsonContentType(one(res.headers['content-type']) ?? null)) {
        let text: string;
        try {
          text = await readAll(res);
        } catch (error) {
          if (signal.aborted) return cancelled(g, call, startedAt);
          return handOff(exchange, call, startedAt, () =>
            Promise.reject(new TypeError('fetch failed', { cause: error })),
          );
        }
        const message = parse(text);
        const result = isRecord(message) && message.id === upId ? message.result : undefined;
        // A result the SDK client would take as it is (its schema: anything else is its to answer).
        if (isCallToolResult(result) && (result.resultType === undefined || result.resultType === 'complete'))
          return encoded(answered(g, 'modern', call, result, startedAt));
        return handOff(exchange, call, startedAt, async (id) =>
          replayed(res, text.split(token).join(JSON.stringify(id))),
        );
      }
      // Nobody left to hand it to: the SDK's path would not ask for the answer.
      if (signal.aborted) return (res.destroy(), cancelled(g, call, startedAt));
      return handOff(exchange, call, startedAt, async (id) => replayed(res, streamed(res, token, JSON.stringify(id))));
    },
  };
}

/** The call goes on on the SDK's path, with the server's answer to replay (modern-exchange.ts `handed`). */
function handOff(
  exchange: ModernExchange,
  call: Call,
  startedAt: number,
  replay: (id: unknown) => Promise<Response>,
): null {
  exchange.handed = { call, startedAt, replay };
  return null;
}

/** The client went away while the call ran: recorded as on the SDK's path (modern-record.ts `failed`). */
function cancelled(g: ModernGateway, call: Call, startedAt: number): LeanAnswer {
  record(g, call, { sent: true, clientError: 'cancelled' }, startedAt, call.grantId);
  return gone();
}

/** The answer to a client that is gone: written to no one. */
const gone = (): LeanAnswer => ({ status: 499, body: null });

function stamped(result: Record<string, unknown>, serverInfo: unknown): Record<string, unknown> {
  const meta = result._meta;
  if (!isRecord(meta) || meta[SERVER_INFO_META_KEY] !== undefined) return result;
  return { ...result, _meta: { ...meta, [SERVER_INFO_META_KEY]: serverInfo } };
}

function json(id: string | number, result: Record<string, unknown>): LeanAnswer {
  return { status: 200, body: JSON.stringify({ jsonrpc: '2.0', id, result }) };
}

/** The server's answer as the SDK client's fetch would have it. */
function replayed(res: IncomingMessage, body: string | ReadableStream<Uint8Array>): Response {
  const headers = new Headers();
  for (const [k, v] of Object.entries(res.headers))
    if (v !== undefined && k !== 'content-length' && k !== 'transfer-encoding')
      headers.set(k, Array.isArray(v) ? v.join(', ') : v);
  const status = res.statusCode ?? 502;
  const empty = status === 204 || status === 304;
  return new Response(empty ? null : body, { status, statusText: res.statusMessage, headers });
}

/** The server's body as it streams, the gateway's id for the call (`from`) put back as the SDK client's (`to`). */
export function streamed(res: Readable, from: string, to: string): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let tail = '';
  const swap = (text: string, controller: TransformStreamDefaultController<Uint8Array>, end: boolean) => {
    // Held back: what could be the start of `from`, cut by the read.
    let cut = end ? text.length : Math.max(0, text.length - (from.length - 1));
    const last = text.lastIndexOf(from);
    if (last >= 0) cut = Math.max(cut, last + from.length);
    tail = text.slice(cut);
    const out = text.slice(0, cut).split(from).join(to);
    if (out) controller.enqueue(encoder.encode(out));
  };
  return (Readable.toWeb(res) as ReadableStream<Uint8Array>).pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform: (chunk, controller) => swap(tail + decoder.decode(chunk, { stream: true }), controller, false),
      flush: (controller) => swap(tail + decoder.decode(), controller, true),
    }),
  );
}

function readAll(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
    res.on('aborted', () => reject(new Error('aborted')));
    res.on('close', () => {
      if (!res.complete) reject(new Error('aborted'));
    });
  });
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Whether the client takes both answers the SDK's path may give (its transport's own check). */
function accepts(accept: string | undefined): boolean {
  return accept !== undefined && accept.includes('application/json') && accept.includes('text/event-stream');
}

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
