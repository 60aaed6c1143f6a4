// Streamable HTTP mode, 2026-07-28 leg: what one incoming HTTP request carries through SDK v2's
// per-request server (createMcpHandler) to the gateway's handlers, beside the message. The SDK
// hands `authInfo` to the factory and to every handler as given, so it rides there; nothing of
// the client's credentials is put in its token, and it never leaves the process.
import type { IncomingHttpHeaders } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { UpstreamHead } from './exchange';
import type { Call } from './modern-record';

export interface ModernExchange {
  /** The client's Authorization header, sent to the server as it came. Memory only. */
  authorization: string | null;
  /**
   * The request's params exactly as the client sent them. The SDK lifts the envelope, the
   * retry's `inputResponses` and `requestState` out of params (and drops malformed responses)
   * before a handler runs; the server must get them as the client sent them.
   */
  params: Record<string, unknown> | undefined;
  /** The request's method and id, as the client sent them. */
  method: string | undefined;
  id: unknown;
  /** The request's SEP-2243 `Mcp-Param-*` headers, sent to the server as they came. */
  paramHeaders: Record<string, string> | undefined;
  /**
   * The server's HTTP-level refusal of this request (401/403 with its challenge, or another
   * status the server answered it with instead of a result): answered to the client as the
   * server sent it, instead of the handler's response.
   */
  refusal: UpstreamHead | null;
  /** Set when the server could not be reached for this request: why (error name and code only). */
  unreachable?: string;
  /** A 2025 client's capabilities from its initialize, for a 2026-07-28 server's envelope. */
  declared?: Record<string, unknown>;
  /**
   * A `tools/call` the lean path (modern-lean.ts) judged and sent, whose answer from the server it
   * does not serve itself: the call, when it went, and the server's answer, replayed once to the
   * SDK client's request for it (upstream-client.ts) instead of sending the call again.
   */
  handed?: {
    call: Call;
    startedAt: number;
    replay?: (id: unknown) => Promise<Response>;
    /** The id the server knows the call by: the client's cancel of it must name that one. */
    upId?: string;
  };
}

export function modernExchange(
  authorization: string | null,
  body: unknown,
  headers: Headers | IncomingHttpHeaders,
): ModernExchange {
  const message = isRecord(body) ? body : {};
  const params = isRecord(message.params) ? message.params : undefined;
  let paramHeaders: Record<string, string> | undefined;
  // The node request's headers where the lean path reads them before any web Request is built (http.ts).
  for (const [name, value] of headers instanceof Headers ? headers : Object.entries(headers))
    if (value !== undefined && name.startsWith('mcp-param-'))
      (paramHeaders ??= {})[name] = Array.isArray(value) ? value.join(', ') : value;
  return {
    authorization,
    params,
    method: typeof message.method === 'string' ? message.method : undefined,
    id: message.id,
    paramHeaders,
    refusal: null,
  };
}

/**
 * The server's refusal as the client gets it: a JSON-RPC error in it answers the client's request
 * (the server named the id the gateway's client gave it).
 */
export function refusalFor(exchange: ModernExchange): UpstreamHead | null {
  const refusal = exchange.refusal;
  if (!refusal || !refusal.headers.get('content-type')?.includes('application/json')) return refusal;
  try {
    const message: unknown = JSON.parse(refusal.body);
    // An OAuth error body ({"error": "invalid_token"}) is not JSON-RPC: it goes back untouched.
    if (!isRecord(message) || message.jsonrpc !== '2.0' || !('error' in message)) return refusal;
    return { ...refusal, body: JSON.stringify({ ...message, id: exchange.id ?? null }) };
  } catch {
    return refusal;
  }
}

export function carryingModern(exchange: ModernExchange): AuthInfo {
  return { token: '', clientId: '', scopes: [], extra: { modernExchange: exchange } };
}

export function carriedModern(authInfo: AuthInfo | undefined): ModernExchange | undefined {
  return authInfo?.extra?.modernExchange as ModernExchange | undefined;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
