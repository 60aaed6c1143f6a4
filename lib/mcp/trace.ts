// What the transport saw during one observed operation: each HTTP status and WWW-Authenticate
// error (through our fetch), and broken response streams (through the client's onerror). Carried
// by AsyncLocalStorage through the SDK's promise chains, so calls made concurrently on one client
// never see each other's responses.
import { AsyncLocalStorage } from 'node:async_hooks';
import { extractWWWAuthenticateParams, type Client } from '@modelcontextprotocol/client';
import type { AuthError } from '../outcomes/schemas';
import type { FetchLike } from './countersign-http';

export interface HttpExchange {
  status: number;
  authError: AuthError | null;
  /** The JSON-RPC request this POST carried (notifications and GETs have none). */
  rpcMethod: string | null;
  rpcId: string | number | null;
}

export interface Trace {
  exchanges: HttpExchange[];
  transportErrors: number;
  onTransportError?: () => void;
}

export const traces = new AsyncLocalStorage<Trace>();
export const newTrace = (): Trace => ({ exchanges: [], transportErrors: 0 });

/**
 * A `fetch` for `StreamableHTTPClientTransport` that records, for the call being observed, each
 * HTTP status and the `error` of a `WWW-Authenticate: Bearer` challenge (parsed by the SDK's own
 * `extractWWWAuthenticateParams`). The SDK's errors carry the status but not the challenge.
 *
 *     new StreamableHTTPClientTransport(url, { fetch: observingFetch(), requestInit: { headers } })
 */
export function observingFetch(base: FetchLike = fetch): FetchLike {
  return async (input, init) => {
    const response = await base(input, init);
    const trace = traces.getStore();
    if (trace)
      trace.exchanges.push({ status: response.status, authError: authErrorOf(response), ...rpcRequestOf(init?.body) });
    return response;
  };
}

function authErrorOf(response: Response): AuthError | null {
  if (response.status !== 401 && response.status !== 403) return null;
  const { error } = extractWWWAuthenticateParams(response);
  return error === 'invalid_token' || error === 'insufficient_scope' ? error : null;
}

// Our own outgoing body (it never leaves the process through this path), read for its id/method.
function rpcRequestOf(body: unknown): Pick<HttpExchange, 'rpcMethod' | 'rpcId'> {
  if (typeof body !== 'string') return { rpcMethod: null, rpcId: null };
  try {
    const parsed: unknown = JSON.parse(body);
    const message = (Array.isArray(parsed) ? parsed : [parsed]).find(
      (m): m is { method: string; id: string | number } =>
        isRecord(m) && typeof m.method === 'string' && (typeof m.id === 'string' || typeof m.id === 'number'),
    );
    return message ? { rpcMethod: message.method, rpcId: message.id } : { rpcMethod: null, rpcId: null };
  } catch {
    return { rpcMethod: null, rpcId: null };
  }
}

// The SDK reports a broken response stream ("SSE stream disconnected") only through the client's
// onerror. Wrapped once, as an accessor, so a handler the application sets later still runs.
const hooked = new WeakSet<Client>();
export function hookTransportErrors(client: Client): void {
  if (hooked.has(client)) return;
  hooked.add(client);
  let own = client.onerror;
  const wrapped = (error: Error) => {
    const trace = traces.getStore();
    if (trace) {
      trace.transportErrors++;
      trace.onTransportError?.();
    }
    own?.(error);
  };
  Object.defineProperty(client, 'onerror', {
    configurable: true,
    enumerable: true,
    get: () => wrapped,
    set: (fn: ((error: Error) => void) | undefined) => {
      own = fn;
    },
  });
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
