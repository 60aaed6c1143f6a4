// DNS-rebinding protection for the HTTP listener (docs/gateway.md "Streamable HTTP: clients that
// connect by URL"). A web page whose name an attacker points at 127.0.0.1 reaches a loopback
// listener from the user's browser, but its requests still carry the attacker's name in `Host` and
// its own origin in `Origin`; both must be a name the gateway is reached by. A request without
// `Origin` (every client that is not a browser) is judged by its `Host` alone. The refusal is the
// one the MCP SDK's own guards give: 403 with a JSON-RPC error body.
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';

/** Names that can only mean this machine: a page served under one of them is local already. */
export const LOOPBACK_NAMES: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

// A Host header is a name or an address, and a port: nothing else (no user, no path).
const HOST_HEADER = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/;

/** An address the listener may bind to that only this machine can reach. */
export function isLoopbackAddress(host: string): boolean {
  const h = host.toLowerCase();
  return (
    h === 'localhost' ||
    h === '::1' ||
    h === '[::1]' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) ||
    /^(\[)?::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3}(\])?$/.test(h)
  );
}

/** `host` as it appears in a URL's hostname: lower case, an IPv6 address in brackets. */
export function hostnameOf(host: string): string {
  const h = host.toLowerCase();
  return h.includes(':') && !h.startsWith('[') ? `[${h}]` : h;
}

/** The hostname of a Host header value (its port dropped), or null if it is not one. */
function hostHeaderName(value: string): string | null {
  if (!HOST_HEADER.test(value)) return null;
  try {
    return new URL(`http://${value}`).hostname;
  } catch {
    return null;
  }
}

export type HostCheck = (headers: IncomingHttpHeaders) => string | null;

/**
 * The check for a listener bound to `bindHost`: loopback names always pass (a page under one is
 * local already), so does the bound loopback address itself, and so do the names in
 * `allowedHosts`. Returns why a request is refused, or null.
 */
export function hostCheck(bindHost: string, allowedHosts: readonly string[] = []): HostCheck {
  const allowed = new Set([...LOOPBACK_NAMES, ...allowedHosts.map(hostnameOf)]);
  if (isLoopbackAddress(bindHost)) allowed.add(hostnameOf(bindHost));
  // Host values already admitted, so that the common request is not parsed again (bounded: ports vary).
  const admitted = new Set<string>();
  return (headers) => {
    const host = headers.host;
    if (!host) return 'Missing Host header';
    if (!admitted.has(host)) {
      const name = hostHeaderName(host);
      if (name === null) return `Invalid Host header: ${host}`;
      if (!allowed.has(name)) return `Invalid Host: ${name}`;
      if (admitted.size >= 256) admitted.clear();
      admitted.add(host);
    }
    const origin = headers.origin;
    if (origin === undefined) return null;
    let originName: string | null;
    try {
      originName = new URL(origin).hostname;
    } catch {
      originName = null; // `null` (a sandboxed page, a file) is an origin no listed name matches
    }
    return originName !== null && allowed.has(originName) ? null : `Invalid Origin header: ${origin}`;
  };
}

/** 403 with the JSON-RPC error body the SDK's guards answer with. */
export function refuseHost(res: ServerResponse, message: string): void {
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });
  res.writeHead(403, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
