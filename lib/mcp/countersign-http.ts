// The few HTTP calls the agent side makes to Countersign's API (docs/api.md): JSON in, JSON out, an
// API key, a deadline. Expected failures are values, never exceptions: the caller decides whether
// to retry.
import { isRetryableStatus, parseRetryAfter } from '../http-retry';

export type FetchLike = (input: string | URL, init?: RequestInit) => Promise<Response>;

export interface CountersignEndpoint {
  /** Countersign's base URL, e.g. `https://countersign.example.com` (a path prefix is kept). */
  url: string | URL;
  /** `cs_live_…` with the scopes the caller needs. */
  apiKey: string;
  fetch?: FetchLike;
  /** Per request; default 10 s. */
  requestTimeoutMs?: number;
}

export type ApiResponse =
  | { kind: 'response'; status: number; body: unknown; retryAfterMs: number | null }
  | { kind: 'network_error'; error: unknown };

export function apiUrl(base: string | URL, path: string): URL {
  const root = new URL(base);
  if (!root.pathname.endsWith('/')) root.pathname += '/';
  return new URL(path.replace(/^\//, ''), root);
}

export async function callApi(
  endpoint: CountersignEndpoint,
  method: 'GET' | 'POST',
  path: string,
  options: { body?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<ApiResponse> {
  const timeout = AbortSignal.timeout(endpoint.requestTimeoutMs ?? 10_000);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  try {
    const res = await (endpoint.fetch ?? fetch)(apiUrl(endpoint.url, path), {
      method,
      headers: {
        authorization: `Bearer ${endpoint.apiKey}`,
        accept: 'application/json',
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...options.headers,
      },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal,
    });
    const text = await res.text();
    let body: unknown = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = null;
    }
    const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'), Date.now()) ?? null;
    return { kind: 'response', status: res.status, body, retryAfterMs };
  } catch (error) {
    return { kind: 'network_error', error };
  }
}

/** Worth another try later: the request may succeed once the server or network recovers. */
export function isTransient(r: ApiResponse): boolean {
  return r.kind === 'network_error' || isRetryableStatus(r.status);
}

export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

export const problemCode = (body: unknown): string | null =>
  body && typeof body === 'object' && typeof (body as { code?: unknown }).code === 'string'
    ? (body as { code: string }).code
    : null;
