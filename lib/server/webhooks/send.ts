import 'server-only';
import http from 'node:http';
import https from 'node:https';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { isForbiddenAddress, isSelf } from '@/lib/webhooks/address';
import { isRetryableStatus } from '@/lib/http-retry';
import { retryAfterMs, type AttemptOutcome } from '@/lib/webhooks/retry';

// One POST to a receiver. The address is checked after DNS resolution, on the connection itself
// (the lookup the socket uses), so a name that resolves, or rebinds, to a metadata address is
// refused. The answer's status and Retry-After are read, its body never: the socket is closed
// once the headers are in. A receiver that hangs is cut off after `timeoutMs`, all included.
// Errors are our own words (kind, status), never the receiver's text or the URL (a credential).

export type SendOptions = {
  timeoutMs: number;
  selfOrigins: readonly string[];
  retryAfterCapMs: number;
  /** The resolver (node:dns lookup unless a test gives another); its answers are checked. */
  resolve?: typeof dnsLookup;
};

class ForbiddenAddress extends Error {
  code = 'EFORBIDDEN';
}

const guardedLookup =
  (resolve: typeof dnsLookup): LookupFunction =>
  (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 4);
      const list = addresses.filter((a) => !isForbiddenAddress(a.address));
      if (list.length !== addresses.length || !list.length)
        return callback(new ForbiddenAddress('forbidden address'), '', 4);
      if ((options as { all?: boolean }).all) return (callback as (e: null, a: LookupAddress[]) => void)(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };

export function postWebhook(
  url: string,
  body: string,
  headers: Record<string, string>,
  options: SendOptions,
): Promise<AttemptOutcome> {
  const timeoutMs = options.timeoutMs;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return Promise.resolve({ ok: false, retry: false, error: 'the endpoint URL is invalid' });
  }
  if (isSelf(u, options.selfOrigins))
    return Promise.resolve({ ok: false, retry: false, error: 'the endpoint points at this console' });
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) && isForbiddenAddress(host))
    return Promise.resolve({ ok: false, retry: false, error: 'the endpoint resolves to a forbidden address' });
  const client = u.protocol === 'https:' ? https : http;
  return new Promise<AttemptOutcome>((resolve) => {
    let settled = false;
    const done = (o: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(o);
    };
    const req = client.request(
      u,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': 'Countersign-Webhooks/1',
          ...headers,
        },
        lookup: guardedLookup(options.resolve ?? dnsLookup),
        agent: false,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const after = res.headers['retry-after'];
        res.destroy(); // the body is never read
        req.destroy();
        if (status >= 200 && status < 300) return done({ ok: true, status });
        done({
          ok: false,
          status,
          retry: isRetryableStatus(status),
          error: `HTTP ${status}`,
          retryAfterMs: retryAfterMs(Array.isArray(after) ? after[0] : after, Date.now(), options.retryAfterCapMs),
        });
      },
    );
    const timer = setTimeout(() => {
      done({ ok: false, retry: true, error: `no answer within ${timeoutMs} ms` });
      req.destroy();
    }, timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err instanceof ForbiddenAddress || err.code === 'EFORBIDDEN')
        return done({ ok: false, retry: false, error: 'the endpoint resolves to a forbidden address' });
      done({ ok: false, retry: true, error: `network error (${err.code ?? err.name ?? 'unknown'})` });
    });
    req.end(body);
  });
}
