// Shared setup of the notification tests (lib/server/jobs/notify-*.test.ts): a real webhook receiver
// on 127.0.0.1, fast notifier options, and a request as the data layer returns it.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { vi } from 'vitest';
import { type NotifierOptions, type SlackMessage } from '@/lib/server/jobs/notify';
import type { ApprovalView } from '@/lib/approvals/view';

// ── A real receiver on 127.0.0.1 ────────────────────────────────────────────────────────────

export type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;
export type Receiver = { url: string; bodies: string[]; hits: number; times: number[]; close(): Promise<void> };

export async function receiver(handler: Handler = (_q, res) => res.end('ok')): Promise<Receiver> {
  const r = { bodies: [] as string[], hits: 0, times: [] as number[] };
  const server: Server = createServer((req, res) => {
    const n = ++r.hits;
    r.times.push(Date.now());
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      r.bodies.push(body);
      handler(req, res, n);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  opened.push(close);
  return Object.assign(r, { url: `http://127.0.0.1:${port}/services/T000/B000/hook-secret-path`, close });
}

export let opened: (() => Promise<void>)[] = [];
export async function closeReceivers() {
  await Promise.all(opened.map((c) => c()));
  opened = [];
}

export const quiet = () => ({ warn: vi.fn(), error: vi.fn() });
export const fast = (url: string, over: Partial<NotifierOptions> = {}): NotifierOptions => ({
  url,
  attempts: 5,
  timeoutMs: 500,
  baseDelayMs: 10,
  maxDelayMs: 40,
  deadlineMs: 5_000,
  random: () => 1,
  log: quiet(),
  ...over,
});

// ── A request as the data layer returns it ──────────────────────────────────────────────────

export const ARGS_DIGEST = 'sha256:' + 'ab'.repeat(32);
export const IDEMPOTENCY_KEY = 'refund-4411-v1-idem';
export const GRANT_ID = '0b7e4bde-0c3e-4d6b-9d8e-5f1a2b3c4d5e';
export const TOKEN = 'ghp_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';

export function makeView(over: Partial<ApprovalView> = {}): ApprovalView {
  const at = new Date('2026-11-30T12:00:00Z');
  return {
    id: '6f1c9a52-3d1e-4b7a-9c55-0a1b2c3d4e5f',
    status: 'pending',
    requiredApprovals: 2,
    decisions: [],
    version: 1,
    expiresAt: new Date('2026-11-30T13:00:00Z'),
    grant: null,
    requestRef: 'req_8f2c',
    idempotencyKey: IDEMPOTENCY_KEY,
    organization: 'acme',
    principal: 'user_193',
    agent: 'support-bot',
    server: 'billing-mcp',
    tool: { name: 'refund_payment', annotations: { readOnlyHint: false, destructiveHint: true } },
    annotationsTrusted: true,
    argsDigest: ARGS_DIGEST,
    summary: 'Refund 40.00 EUR on order 4411',
    resource: { type: 'order', id: '4411' },
    grantTtlSeconds: 900,
    createdAt: at,
    decidedAt: null,
    revoked: null,
    ...over,
  };
}

export const allText = (m: SlackMessage) => JSON.stringify(m);
