import { afterEach, describe, expect, it } from 'vitest';
import type { LookupAddress } from 'node:dns';
import { postWebhook, type SendOptions } from './send';
import { closeReceivers, receiver } from '@/testing/webhooks-fixtures';

const options: SendOptions = { timeoutMs: 500, selfOrigins: ['http://localhost:3000'], retryAfterCapMs: 60_000 };
afterEach(closeReceivers);

// A resolver that answers what a hostile DNS would: the name resolves (or rebinds) to `address`.
const resolvingTo =
  (address: string, family = 4) =>
  (_host: string, _o: unknown, cb: (e: null, a: LookupAddress[]) => void) =>
    cb(null, [{ address, family }]);

describe('postWebhook', () => {
  it('a receiver that hangs is cut off at the timeout', async () => {
    const r = await receiver(() => {}); // never answers
    const t = Date.now();
    const out = await postWebhook(r.url, '{}', {}, options);
    expect(out).toEqual({ ok: false, retry: true, error: 'no answer within 500 ms' });
    expect(Date.now() - t).toBeLessThan(1_500);
  });

  it('a receiver that sends its headers and then trickles is cut off too', async () => {
    const r = await receiver((_q, res) => {
      res.writeHead(200);
      res.write('x');
    });
    // Headers in: answered at once, the body never waited for.
    expect(await postWebhook(r.url, '{}', {}, options)).toEqual({ ok: true, status: 200 });
  });

  it('a huge answer is not read', async () => {
    let written = 0;
    let closed = false;
    const chunk = Buffer.alloc(64 * 1024, 'a');
    const r = await receiver((_q, res) => {
      res.writeHead(500, { 'content-length': String(1024 * 1024 * 1024) });
      res.on('close', () => (closed = true));
      const pump = () => {
        while (!closed && written < 1024 * 1024 * 1024 && res.write(chunk)) written += chunk.length;
        if (!closed) res.once('drain', pump);
      };
      pump();
    });
    const t = Date.now();
    expect(await postWebhook(r.url, '{}', {}, options)).toMatchObject({
      ok: false,
      retry: true,
      status: 500,
      error: 'HTTP 500',
    });
    expect(Date.now() - t).toBeLessThan(1_000);
    await new Promise((res) => setTimeout(res, 100));
    expect(closed).toBe(true);
    expect(written).toBeLessThan(64 * 1024 * 1024); // of the 1 GiB it meant to send
  });

  it('refuses a name that resolves to a metadata or link-local address, at connection time', async () => {
    for (const [address, family] of [
      ['169.254.169.254', 4],
      ['fd00:ec2::254', 6],
      ['::ffff:169.254.169.254', 6],
    ] as const) {
      const out = await postWebhook(
        'http://hooks.example.test/x',
        '{}',
        {},
        { ...options, resolve: resolvingTo(address, family) as never },
      );
      expect(out, address).toEqual({ ok: false, retry: false, error: 'the endpoint resolves to a forbidden address' });
    }
    // The same name resolving to the receiver: sent.
    const r = await receiver();
    const url = r.url.replace('127.0.0.1', 'hooks.example.test');
    expect(await postWebhook(url, '{}', {}, { ...options, resolve: resolvingTo('127.0.0.1') as never })).toEqual({
      ok: true,
      status: 200,
    });
  });

  it('refuses literal metadata addresses and the console itself without connecting', async () => {
    expect(await postWebhook('http://169.254.169.254/latest', '{}', {}, options)).toMatchObject({
      ok: false,
      retry: false,
    });
    expect(await postWebhook('http://[fd00:ec2::254]/', '{}', {}, options)).toMatchObject({ ok: false, retry: false });
    expect(await postWebhook('http://127.0.0.1:3000/api', '{}', {}, options)).toEqual({
      ok: false,
      retry: false,
      error: 'the endpoint points at this console',
    });
  });

  it('says what failed in its own words, never the receiver’s', async () => {
    const r = await receiver((_q, res) => {
      res.statusCode = 503;
      res.setHeader('retry-after', '7');
      res.end('Internal details: password=hunter2');
    });
    const out = await postWebhook(r.url, '{}', {}, options);
    expect(out).toEqual({ ok: false, retry: true, status: 503, error: 'HTTP 503', retryAfterMs: 7_000 });
    const refused = await postWebhook('http://127.0.0.1:9/x', '{}', {}, options);
    expect(refused).toEqual({ ok: false, retry: true, error: 'network error (ECONNREFUSED)' });
  });
});
