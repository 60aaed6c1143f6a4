// Streamable HTTP mode, 2026-07-28 leg: what one incoming HTTP request carries through SDK v2's
// per-request server (createMcpHandler) to the gateway's handlers, beside the message. The SDK
// hands `authInfo` to the factory and to every handler as given, so it rides there; nothing of
// the client's credentials is put in its token, and it never leaves the process.
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { UpstreamHead } from './exchange';

export interface ModernExchange {
  /** The client's Authorization header, sent to the server as it came. Memory only. */
  authorization: string | null;
  /**
   * The request's params exactly as the client sent them. The SDK lifts the envelope, the
   * retry's `inputResponses` and `requestState` out of params (and drops malformed responses)
   * before a handler runs; the server must get them as the client sent them.
   */
  params: Record<string, unknown> | undefined;
  /** The server's 401/403 for this request, answered to the client instead of the handler's response. */
  refusal: UpstreamHead | null;
}

export function modernExchange(authorization: string | null, body: unknown): ModernExchange {
  const params =
    isRecord(body) && isRecord(body.params) ? (body.params as Record<string, unknown>) : undefined;
  return { authorization, params, refusal: null };
}

export function carryingModern(exchange: ModernExchange): AuthInfo {
  return { token: '', clientId: '', scopes: [], extra: { modernExchange: exchange } };
}

export function carriedModern(authInfo: AuthInfo | undefined): ModernExchange | undefined {
  return authInfo?.extra?.modernExchange as ModernExchange | undefined;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
