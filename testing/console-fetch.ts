// The console's /api/v1 route handlers behind a fetch, routed by docs/api.md's paths: the real console
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

/**
 * A console that can be switched off: while down, every request fails as a refused connection does.
 * `slow(path)`: the next request to a matching path is answered by the console at once (what it
 * changes is changed) but its answer reaches the caller only at `release()`; `reached` resolves
 * when the console has answered. As everywhere in this in-process console, the caller's abort
 * signal does not cut the answer short: it arrives whatever the caller did meanwhile.
 */
export function switchableConsole() {
  let up = true;
  const calls: { method: string; path: string }[] = [];
  const slowed: { path: RegExp; reached: () => void; released: Promise<void> }[] = [];
  const fetch: Fetch = async (input, init) => {
    const path = new URL(input).pathname;
    calls.push({ method: init?.method ?? 'GET', path });
    if (!up) throw Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
    const at = slowed.findIndex((s) => s.path.test(path));
    if (at < 0) return consoleFetch(input, init);
    const [slow] = slowed.splice(at, 1);
    const answer = await consoleFetch(input, init);
    slow.reached();
    await slow.released;
    return answer;
  };
  const slow = (path: RegExp) => {
    let reached!: () => void;
    let release!: () => void;
    const gate = {
      path,
      reached: () => reached(),
      released: new Promise<void>((resolve) => (release = resolve)),
    };
    const answered = new Promise<void>((resolve) => (reached = resolve));
    slowed.push(gate);
    return { reached: answered, release };
  };
  return {
    fetch,
    calls,
    slow,
    down: () => void (up = false),
    up: () => void (up = true),
  };
}
