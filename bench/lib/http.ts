// HTTP for bench:approvals: requests over node:http on shared keep-alive connections (far less
// CPU per request than fetch, which builds streams and a Request and a Response around every call:
// this process shares the machine with the console), an open-loop schedule, a console session
// signed in through Auth.js, and a webhook receiver on loopback.
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { prng } from './report';
import { onCleanup } from './setup';

// The most recently used connection first, so a steady rate keeps few busy and the rest close on
// the server's keep-alive timeout (5 s) before a reuse races it.
const agent = new Agent({ keepAlive: true, maxSockets: 512, scheduling: 'lifo', timeout: 4_000 });

export type Answer = { status: number; ms: number; body: string };

export function timedHttp(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
) {
  const t0 = performance.now();
  return new Promise<Answer>((resolve, reject) => {
    const headers: Record<string, string | number> = { ...init.headers };
    if (init.body !== undefined) headers['content-length'] = Buffer.byteLength(init.body);
    const req = request(url, { method: init.method ?? 'GET', headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, ms: performance.now() - t0, body: Buffer.concat(chunks).toString() }),
      );
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

/**
 * Sends `count` requests at `rate` a second, Poisson arrivals, whatever the answers do: a slow
 * answer does not delay the next send, so a stall shows in the latencies (each from its scheduled
 * send time to its last byte) instead of hiding in a lower rate.
 */
export async function openLoop(rate: number, count: number, seed: number, send: (i: number) => Promise<Answer>) {
  const random = prng(seed);
  const latencies: number[] = [];
  const failures: string[] = [];
  const pending: Promise<void>[] = [];
  const t0 = performance.now();
  let due = 0;
  for (let i = 0; i < count; i++) {
    const at = t0 + due;
    if (at - performance.now() > 1) await new Promise((r) => setTimeout(r, at - performance.now()));
    pending.push(
      send(i).then(
        (a) =>
          void (a.status < 400
            ? latencies.push(performance.now() - at)
            : failures.push(`HTTP ${a.status}: ${a.body.slice(0, 300)}`)),
        (err: Error) => void failures.push(err.message),
      ),
    );
    due += -Math.log(1 - random()) * (1000 / rate);
  }
  await Promise.all(pending);
  return { latencies, failures, achieved: latencies.length / ((performance.now() - t0) / 1000) };
}

const cookies = (res: Response, jar: Map<string, string>) => {
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(';');
    jar.set(pair.slice(0, pair.indexOf('=')).trim(), pair.slice(pair.indexOf('=') + 1).trim());
  }
  return [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
};

/** Signs in as a browser's form post does (Auth.js credentials); answers the session's Cookie header. */
export async function signIn(origin: string, email: string, password: string): Promise<string> {
  const jar = new Map<string, string>();
  const csrf = await fetch(`${origin}/api/auth/csrf`);
  let cookie = cookies(csrf, jar);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const res = await fetch(`${origin}/api/auth/callback/credentials`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin, 'x-auth-return-redirect': '1' },
    body: new URLSearchParams({ csrfToken, email, password, callbackUrl: `${origin}/approvals` }).toString(),
  });
  await res.arrayBuffer();
  cookie = cookies(res, jar);
  const me = await fetch(`${origin}/api/v1/me`, { headers: { cookie } });
  if (me.status !== 200) throw new Error(`sign-in as ${email} failed: GET /api/v1/me answered ${me.status}`);
  return cookie;
}

/** Answers 204 at once; records each event's commit time (its body's timestamp) and arrival, once per id. */
export async function webhookReceiver() {
  const arrivals = new Map<string, { committedAt: number; arrivedAt: number }>();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const arrivedAt = Date.now();
      res.writeHead(204).end();
      const id = req.headers['webhook-id'];
      if (typeof id === 'string' && !arrivals.has(id))
        arrivals.set(id, { committedAt: Date.parse((JSON.parse(body) as { timestamp: string }).timestamp), arrivedAt });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  onCleanup(
    'close the webhook receiver',
    () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  );
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  /** Plain POSTs of a delivery-sized body to it, `concurrency` at a time on fresh connections (as the worker sends). */
  const plainPosts = async (total: number, concurrency: number) => {
    const body = JSON.stringify({ type: 'approval.requested', timestamp: new Date().toISOString(), data: {} });
    const one = () =>
      new Promise<void>((resolve, reject) =>
        request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (r) =>
          r.resume().on('end', resolve),
        )
          .on('error', reject)
          .end(body),
      );
    let left = total;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (left-- > 0) await one();
      }),
    );
    return total / ((performance.now() - t0) / 1000);
  };
  return { url, arrivals, plainPosts };
}
