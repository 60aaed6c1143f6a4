// Parts of bench/webhooks.ts: a healthy receiver on loopback that records when each event
// arrived, the ceiling of plain POSTs to it, and the people and keys the run acts as.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';

export type Arrival = { id: string; type: string; committedAt: number; arrivedAt: number };

/** Answers 204 at once; records the event's time (the body's `timestamp`) and the arrival. */
export async function benchReceiver() {
  const arrivals: Arrival[] = [];
  const seen = new Set<string>();
  let duplicates = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const arrivedAt = Date.now();
      const id = String(req.headers['webhook-id'] ?? '');
      res.statusCode = 204;
      res.end();
      if (!id) return; // the ceiling's plain POSTs
      if (seen.has(id)) return void duplicates++;
      seen.add(id);
      const { type, timestamp } = JSON.parse(body) as { type: string; timestamp: string };
      arrivals.push({ id, type, committedAt: Date.parse(timestamp), arrivedAt });
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    arrivals,
    duplicates: () => duplicates,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

/** Plain POSTs of a body like a delivery's, `concurrency` at a time, one connection each (as the worker). */
export async function postCeiling(url: string, total: number, concurrency: number): Promise<number> {
  const { default: http } = await import('node:http');
  const body = JSON.stringify({ type: 'approval.requested', timestamp: new Date().toISOString(), data: {} });
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const req = http.request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } });
      req.on('response', (res) => (res.resume(), res.on('end', resolve)));
      req.on('error', reject);
      req.end(body);
    });
  let left = total;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) await one();
    }),
  );
  return total / ((performance.now() - t0) / 1000);
}

export const benchSecret = () => randomBytes(32).toString('base64url');
