// The console's /api/v1 route handlers behind a fetch, routed by API.md's paths: the real console
// in-process on the real database, for agent-side code that takes a `fetch` (lib/mcp, the gateway).
// `down()` makes it answer as an unreachable console does (fetch rejects), `up()` restores it.
import { api } from './api-harness';

export type Fetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

export const consoleFetch: Fetch = async (input, init) => {
  const url = new URL(input);
  for (const e of Object.values(api)) {
    const names: string[] = [];
    const pattern = e.path.replace(/\{(\w+)\}/g, (_m, name: string) => (names.push(name), '([^/]+)'));
    const m = new RegExp(`^${pattern}$`).exec(url.pathname);
    if (e.method !== (init?.method ?? 'GET') || !m) continue;
    const params = Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(m[i + 1])]));
    return e.handler(new Request(url, init), { params: Promise.resolve(params as never) });
  }
  throw new Error(`no route for ${url.pathname}`);
};

/** A console that can be switched off: while down, every request fails as a refused connection does. */
export function switchableConsole() {
  let up = true;
  const calls: { method: string; path: string }[] = [];
  const fetch: Fetch = async (input, init) => {
    calls.push({ method: init?.method ?? 'GET', path: new URL(input).pathname });
    if (!up) throw Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
    return consoleFetch(input, init);
  };
  return {
    fetch,
    calls,
    down: () => void (up = false),
    up: () => void (up = true),
  };
}
