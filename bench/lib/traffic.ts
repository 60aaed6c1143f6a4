// Traffic for bench/load.ts: keep-alive posts and gets with node:http, closed-loop clients, and a
// person clicking through the console.
import http from 'node:http';
import { timedFetch } from './http';

export type Answer = { status: number; text: string };

/** A keep-alive POST with node:http (lighter than fetch at thousands of requests a second). */
export function poster(origin: string, apiKey: string, sockets: number) {
  const { hostname, port } = new URL(origin);
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets });
  const post = (body: string) =>
    new Promise<Answer>((resolve, reject) => {
      const req = http.request(
        {
          host: hostname,
          port,
          path: '/api/v1/outcomes',
          method: 'POST',
          agent,
          headers: {
            authorization: `Bearer ${apiKey}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const get = (path: string) =>
    new Promise<number>((resolve, reject) => {
      const req = http.request({ host: hostname, port, path, agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end();
    });
  return { post, get, close: () => agent.destroy() };
}

/** Requests a second that `clients` closed-loop clients get through `send` in `seconds`. */
export async function closedLoop(
  clients: number,
  seconds: number,
  send: (i: number) => Promise<boolean>,
): Promise<{ rate: number; failed: number }> {
  let done = 0;
  let failed = 0;
  let i = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < until) {
        if (await send(i++).catch(() => false)) done++;
        else failed++;
      }
    }),
  );
  return { rate: done / ((performance.now() - started) / 1000), failed };
}

export type People = { latencies: Map<string, number[]>; errors: number; firstError: string | null };

/** One person clicking through the console, page after page, until `stop` resolves. */
export async function browse(origin: string, cookie: string, stop: { done: boolean }): Promise<People> {
  const out: People = { latencies: new Map(), errors: 0, firstError: null };
  const get = async (name: string, url: string) => {
    const r = await timedFetch(`${origin}${url}`, { headers: { cookie } });
    if (r.status !== 200) {
      out.errors++;
      out.firstError ??= `${url}: HTTP ${r.status}`;
      return r.body;
    }
    out.latencies.set(name, [...(out.latencies.get(name) ?? []), r.ms]);
    return r.body;
  };
  while (!stop.done) {
    await get('overview', '/');
    const list = await get('outcome list', '/outcomes');
    await get('filtered list (unknown writes)', '/outcomes?delivery=unknown&readOnly=false');
    const record = /href="\/outcomes\/([0-9a-f-]{36})"/.exec(list)?.[1];
    if (record) {
      const page = await get('record page', `/outcomes/${record}`);
      const ref = /href="\/incidents\/([^"?]+)"/.exec(page)?.[1];
      if (ref) await get('incident page', `/incidents/${ref}`);
    }
  }
  return out;
}
