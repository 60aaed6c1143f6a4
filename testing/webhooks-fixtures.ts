// Shared setup of the webhook tests (lib/server/webhooks/worker*.test.ts, lib/webhooks/*.test.ts):
// a real receiver on 127.0.0.1 whose answers a test scripts, fast worker options, and an event.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WebhookEventData } from '@/lib/webhooks/events';

export type Hit = { n: number; body: string; headers: IncomingHttpHeaders; at: number };
export type Handler = (req: IncomingMessage, res: ServerResponse, hit: Hit) => void;
export type Receiver = {
  url: string;
  port: number;
  hits: Hit[];
  /** Bodies accepted (2xx) once per webhook-id: what a deduplicating receiver keeps. */
  kept: Map<string, string>;
  close(): Promise<void>;
};

let opened: (() => Promise<void>)[] = [];

export async function receiver(handler: Handler = (_q, res) => res.end('ok'), port = 0): Promise<Receiver> {
  const hits: Hit[] = [];
  const kept = new Map<string, string>();
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const hit = { n: hits.length + 1, body, headers: req.headers, at: Date.now() };
      hits.push(hit);
      res.on('finish', () => {
        const id = String(req.headers['webhook-id'] ?? `n${hit.n}`);
        if (res.statusCode < 300 && !kept.has(id)) kept.set(id, body);
      });
      handler(req, res, hit);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const actual = (server.address() as AddressInfo).port;
  const close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  opened.push(close);
  return { url: `http://127.0.0.1:${actual}/services/T000/B000/hook-secret-path`, port: actual, hits, kept, close };
}

export async function closeReceivers() {
  const all = opened;
  opened = [];
  await Promise.allSettled(all.map((c) => c()));
}

/** A port nothing listens on (yet): bound and released at once. */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

export const quietLog = () => ({ log: () => {}, error: () => {} });

/** Worker options for tests: quick polls, millisecond backoff, no jitter. */
export const fastWorker = {
  pollMs: 20,
  batch: 16,
  timeoutMs: 1_000,
  leaseMs: 5_000,
  retry: { maxAttempts: 6, initialMs: 20, maxMs: 200, random: () => 1 },
  baseUrl: 'https://countersign.example.com',
  selfOrigins: ['https://countersign.example.com'],
  log: quietLog(),
};

export const eventData = (over: Partial<WebhookEventData> = {}): WebhookEventData => ({
  approvalId: '6f1c9a52-3d1e-4b7a-9c55-0a1b2c3d4e5f',
  requestRef: 'req_8f2c',
  organization: 'acme',
  principal: 'user_193',
  server: 'billing-mcp',
  tool: 'refund_payment',
  annotationsTrusted: true,
  status: 'pending',
  requiredApprovals: 2,
  expiresAt: '2026-11-30T13:00:00.000Z',
  ...over,
});

export async function waitFor<T>(probe: () => Promise<T> | T, ok: (v: T) => boolean, ms = 15_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (ok(v) || Date.now() > until) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
}
