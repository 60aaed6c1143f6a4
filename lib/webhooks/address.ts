// Where a webhook may not go (docs/api.md "Webhooks"): cloud metadata services and link-local
// addresses, whose answers are credentials, and the console itself. Loopback and private ranges
// stay allowed: a receiver (a chat relay, a test) may well live there. Pure: the caller resolves.
import { BlockList, isIP } from 'node:net';
import { MAX_URL_LENGTH } from './events';

const blocked = new BlockList();
blocked.addSubnet('169.254.0.0', 16, 'ipv4'); // link-local, incl. 169.254.169.254 (AWS, GCP, Azure, OCI)
blocked.addSubnet('0.0.0.0', 8, 'ipv4'); // "this network": reaches the local machine on some systems
blocked.addAddress('100.100.100.200', 'ipv4'); // Alibaba Cloud metadata
blocked.addSubnet('224.0.0.0', 4, 'ipv4'); // multicast
blocked.addAddress('255.255.255.255', 'ipv4');
blocked.addSubnet('fe80::', 10, 'ipv6'); // link-local
blocked.addAddress('fd00:ec2::254', 'ipv6'); // AWS metadata over IPv6
blocked.addSubnet('ff00::', 8, 'ipv6'); // multicast
blocked.addAddress('::', 'ipv6');

const blockedNames = new Set(['metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data']);

/** An IPv4-mapped IPv6 address (::ffff:169.254.169.254 or ::ffff:a9fe:a9fe) as IPv4, else null. */
function mappedV4(address: string): string | null {
  const m = /^(?:0*:)*:?ffff:(.+)$/i.exec(address.replace(/^\[|\]$/g, ''));
  if (!m) return null;
  if (isIP(m[1]) === 4) return m[1];
  const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(m[1]);
  if (!hex) return null;
  const [a, b] = [parseInt(hex[1], 16), parseInt(hex[2], 16)];
  return `${a >> 8}.${a & 255}.${b >> 8}.${b & 255}`;
}

/** True when a resolved address is one a webhook may never reach. */
export function isForbiddenAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const v4 = isIP(bare) === 4 ? bare : mappedV4(bare);
  if (v4) return blocked.check(v4, 'ipv4');
  return isIP(bare) === 6 ? blocked.check(bare, 'ipv6') : false;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1', '0.0.0.0']);
const portOf = (u: URL) => u.port || (u.protocol === 'https:' ? '443' : '80');

/** Whether `u` is the console: the same origin as one of its own, or loopback on its port. */
export function isSelf(u: URL, selfOrigins: readonly string[]): boolean {
  return selfOrigins.some((o) => {
    let self: URL;
    try {
      self = new URL(o);
    } catch {
      return false;
    }
    if (self.origin === u.origin) return true;
    const bothLocal = LOOPBACK.has(u.hostname) && (LOOPBACK.has(self.hostname) || self.hostname === 'localhost');
    return bothLocal && portOf(self) === portOf(u);
  });
}

export type UrlCheck = { ok: true; url: URL } | { ok: false; message: string };

/** The checks a URL can pass before any DNS: the rest happens at each connection (webhook-send). */
export function checkEndpointUrl(raw: string, selfOrigins: readonly string[]): UrlCheck {
  if (raw.length > MAX_URL_LENGTH) return { ok: false, message: `at most ${MAX_URL_LENGTH} characters` };
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return { ok: false, message: 'not a URL' };
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return { ok: false, message: 'must be an http(s) URL' };
  if (u.username || u.password) return { ok: false, message: 'must not carry a user name or password' };
  const host = u.hostname.toLowerCase().replace(/\.$/, '');
  if (!host) return { ok: false, message: 'needs a host' };
  if (blockedNames.has(host) || isForbiddenAddress(host))
    return { ok: false, message: 'must not point at a link-local or cloud metadata address' };
  if (isSelf(u, selfOrigins)) return { ok: false, message: 'must not point at this console itself' };
  return { ok: true, url: u };
}

/** The variables the console's own address comes from (lib/config: the configuration has them). */
export type ConsoleAddressEnv = { COUNTERSIGN_PUBLIC_URL?: string; PORT?: string };

/** Where people open a request: COUNTERSIGN_PUBLIC_URL, else this machine's port. */
export function consoleBaseUrl(env: ConsoleAddressEnv): string {
  const base = env.COUNTERSIGN_PUBLIC_URL?.trim() || `http://localhost:${env.PORT?.trim() || '3000'}`;
  return base.replace(/\/+$/, '');
}

/** The console's own origins, which no endpoint may point at. */
export const consoleOrigins = (env: ConsoleAddressEnv) => [
  consoleBaseUrl(env),
  `http://localhost:${env.PORT?.trim() || '3000'}`,
];
