import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  approvalRequestedMessage,
  consoleBaseUrl,
  createNotifier,
  decisionMessage,
  flushNotifications,
  notificationsEnabled,
  notifyApprovalRequested,
  notifyDecision,
  type NotifierOptions,
  type SlackMessage,
} from './notify';
import type { ApprovalView } from '@/lib/approvals/view';

// ── A real receiver on 127.0.0.1 ────────────────────────────────────────────────────────────

type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;
type Receiver = { url: string; bodies: string[]; hits: number; times: number[]; close(): Promise<void> };

async function receiver(handler: Handler = (_q, res) => res.end('ok')): Promise<Receiver> {
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

let opened: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(opened.map((c) => c()));
  opened = [];
});

const quiet = () => ({ warn: vi.fn(), error: vi.fn() });
const fast = (url: string, over: Partial<NotifierOptions> = {}): NotifierOptions => ({
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

const ARGS_DIGEST = 'sha256:' + 'ab'.repeat(32);
const IDEMPOTENCY_KEY = 'refund-4411-v1-idem';
const GRANT_ID = '0b7e4bde-0c3e-4d6b-9d8e-5f1a2b3c4d5e';
const TOKEN = 'ghp_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';

function makeView(over: Partial<ApprovalView> = {}): ApprovalView {
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

const allText = (m: SlackMessage) => JSON.stringify(m);

// ── Messages ────────────────────────────────────────────────────────────────────────────────

describe('messages', () => {
  it('a new request: who asks on whose behalf, tool, server, summary, approvals, link', () => {
    const m = approvalRequestedMessage(makeView(), 'https://countersign.example.com');
    expect(typeof m.text).toBe('string');
    expect(Array.isArray(m.blocks)).toBe(true);
    const text = allText(m);
    for (const part of [
      'support-bot',
      'user_193',
      'acme',
      'refund_payment',
      'billing-mcp',
      'Refund 40.00 EUR on order 4411',
      'needs 2 approvals',
    ]) {
      expect(m.text).toContain(part);
    }
    expect(text).toContain('https://countersign.example.com/approvals/6f1c9a52-3d1e-4b7a-9c55-0a1b2c3d4e5f');
    expect(m.blocks![0]).toMatchObject({
      type: 'header',
      text: { type: 'plain_text', text: 'Approval needed: refund_payment on billing-mcp' },
    });
    // Every block is one Slack accepts from an incoming webhook.
    for (const b of m.blocks!) expect(['header', 'section', 'context']).toContain(b.type);
  });

  it('never carries the argument digest, the idempotency key, a grant id or a secret', () => {
    const view = makeView({
      summary: `Refund 40.00 EUR, token ${TOKEN}`,
      status: 'approved',
      grant: {
        id: GRANT_ID,
        issuedAt: new Date(),
        expiresAt: new Date(),
        redeemedAt: null,
        revokedAt: null,
        state: 'active',
      },
      decisions: [{ reviewer: 'rui@example.test', decision: 'approve', reason: 'ok', at: new Date() }],
    });
    for (const m of [
      approvalRequestedMessage(view, 'http://x'),
      decisionMessage(view, { reviewer: 'rui@example.test', decision: 'approve', reason: `fine ${TOKEN}` }, 'http://x'),
    ]) {
      const text = allText(m);
      for (const forbidden of [
        ARGS_DIGEST,
        IDEMPOTENCY_KEY,
        GRANT_ID,
        TOKEN,
        'argsDigest',
        'idempotencyKey',
        'grant"',
        'requestHash',
      ]) {
        expect(text).not.toContain(forbidden);
      }
      expect(text).toContain('[masked:github_token]');
      expect(Object.keys(m).sort()).toEqual(['blocks', 'text']);
    }
  });

  it('escapes Slack markup in caller text, so a summary cannot mention @channel or forge a link', () => {
    const m = approvalRequestedMessage(
      makeView({ summary: 'Refund <!channel> & <https://evil.example|click>' }),
      'http://x',
    );
    expect(allText(m)).not.toContain('<!channel>');
    expect(allText(m)).not.toContain('<https://evil.example');
    expect(m.text).toContain('&lt;!channel&gt; &amp; &lt;https://evil.example|click&gt;');
  });

  it('decisions: one of two approvals, the last approval, a denial with its reason', () => {
    const first = decisionMessage(
      makeView({
        decisions: [{ reviewer: 'rui@example.test', decision: 'approve', reason: 'checked', at: new Date() }],
        version: 2,
      }),
      { reviewer: 'rui@example.test', decision: 'approve', reason: 'checked' },
      'http://x',
    );
    expect(first.text).toContain('rui@example.test approved "checked" (1 of 2)');
    expect(first.text).toContain('waits for 1 approval more');

    const last = decisionMessage(
      makeView({
        status: 'approved',
        decisions: [
          { reviewer: 'rui@example.test', decision: 'approve', reason: 'checked', at: new Date() },
          { reviewer: 'rita@example.test', decision: 'approve', reason: 'agreed', at: new Date() },
        ],
      }),
      { reviewer: 'rita@example.test', decision: 'approve', reason: 'agreed' },
      'http://x',
    );
    expect(last.text).toContain('Approved (2 of 2), last by rita@example.test');
    expect(last.blocks![0]).toMatchObject({ text: { text: 'Approved: refund_payment on billing-mcp' } });

    const denied = decisionMessage(
      makeView({ status: 'denied' }),
      { reviewer: 'rui@example.test', decision: 'deny', reason: 'amount too high' },
      'http://x',
    );
    expect(denied.text).toContain('Denied by rui@example.test: "amount too high"');
    expect(denied.text).toContain('/approvals/6f1c9a52-3d1e-4b7a-9c55-0a1b2c3d4e5f');
  });

  it('links to COUNTERSIGN_PUBLIC_URL, else localhost and PORT', () => {
    expect(consoleBaseUrl({ COUNTERSIGN_PUBLIC_URL: 'https://cs.example.com/', PORT: '4000' })).toBe(
      'https://cs.example.com',
    );
    expect(consoleBaseUrl({ PORT: '4000' })).toBe('http://localhost:4000');
    expect(consoleBaseUrl({})).toBe('http://localhost:3000');
  });
});

// ── Delivery against a real receiver ────────────────────────────────────────────────────────

describe('delivery', () => {
  it('posts the message as JSON', async () => {
    const r = await receiver();
    const n = createNotifier(fast(r.url));
    n.send(approvalRequestedMessage(makeView(), 'http://x'), 'a');
    await n.idle();
    expect(r.bodies).toHaveLength(1);
    const body = JSON.parse(r.bodies[0]);
    expect(body).toEqual(JSON.parse(JSON.stringify(approvalRequestedMessage(makeView(), 'http://x'))));
    expect(n.stats()).toMatchObject({ delivered: 1, failed: 0, dropped: 0 });
  });

  it('retries after 500s with growing waits, then succeeds', async () => {
    const r = await receiver((_q, res, n) => {
      res.statusCode = n <= 3 ? 500 : 200;
      res.end();
    });
    const n = createNotifier(fast(r.url, { baseDelayMs: 40, maxDelayMs: 1_000 }));
    n.send({ text: 'hello' }, 'a');
    await n.idle();
    expect(r.hits).toBe(4);
    expect(n.stats()).toMatchObject({ delivered: 1, failed: 0 });
    const gaps = r.times.slice(1).map((t, i) => t - r.times[i]);
    // 40, 80, 160 ms (random() = 1: no jitter), each at least as long as the one before.
    expect(gaps[0]).toBeGreaterThanOrEqual(35);
    expect(gaps[1]).toBeGreaterThanOrEqual(75);
    expect(gaps[2]).toBeGreaterThanOrEqual(150);
    expect(r.bodies.every((b) => b === r.bodies[0])).toBe(true);
  });

  it('gives up after the bounded number of attempts, and logs it without the URL', async () => {
    const r = await receiver((_q, res) => {
      res.statusCode = 503;
      res.end();
    });
    const log = quiet();
    const n = createNotifier(fast(r.url, { attempts: 5, log }));
    n.send({ text: 'hello' }, 'approval X requested');
    await n.idle();
    expect(r.hits).toBe(5);
    expect(n.stats()).toMatchObject({ delivered: 0, failed: 1 });
    expect(log.error).toHaveBeenCalledTimes(1);
    const line = String(log.error.mock.calls[0][0]);
    expect(line).toContain('approval X requested');
    expect(line).toContain('5 attempts');
    expect(line).toContain('HTTP 503');
    expect(line).not.toContain('hook-secret-path');
  });

  it('gives up within the total time bound, whatever the attempts left', async () => {
    const r = await receiver((_q, res) => {
      res.statusCode = 500;
      res.end();
    });
    const n = createNotifier(fast(r.url, { attempts: 50, baseDelayMs: 100, maxDelayMs: 100, deadlineMs: 450 }));
    const started = Date.now();
    n.send({ text: 'hello' }, 'a');
    await n.idle();
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(r.hits).toBeGreaterThanOrEqual(2);
    expect(r.hits).toBeLessThanOrEqual(5);
    expect(n.stats().failed).toBe(1);
  });

  it('does not retry a refusal that will not change (404)', async () => {
    const r = await receiver((_q, res) => {
      res.statusCode = 404;
      res.end();
    });
    const n = createNotifier(fast(r.url));
    n.send({ text: 'hello' }, 'a');
    await n.idle();
    expect(r.hits).toBe(1);
    expect(n.stats().failed).toBe(1);
  });

  it('a hanging receiver never blocks the caller: the attempt times out and is retried', async () => {
    const r = await receiver((_q, res, n) => {
      if (n === 1) return; // never answers
      res.end('ok');
    });
    const n = createNotifier(fast(r.url, { timeoutMs: 200 }));
    const started = Date.now();
    n.send({ text: 'hello' }, 'a');
    expect(Date.now() - started).toBeLessThan(20);
    await n.idle();
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(r.hits).toBe(2);
    expect(n.stats()).toMatchObject({ delivered: 1, failed: 0 });
  });

  it('a slow receiver gives up within timeout × attempts, and the next message still goes out', async () => {
    const r = await receiver((_q, res) => {
      if (r.bodies.at(-1)?.includes('slow')) return; // hangs
      res.end('ok');
    });
    const n = createNotifier(fast(r.url, { attempts: 3, timeoutMs: 100 }));
    const started = Date.now();
    n.send({ text: 'slow' }, 'slow');
    n.send({ text: 'fast' }, 'fast');
    await n.idle();
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(n.stats()).toMatchObject({ delivered: 1, failed: 1 });
    expect(r.bodies.filter((b) => b.includes('slow'))).toHaveLength(3);
    expect(JSON.parse(r.bodies.at(-1)!)).toEqual({ text: 'fast' });
  });

  it('keeps the queue bounded: the oldest waiting messages are dropped and counted', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const r = await receiver((_q, res) => void gate.then(() => res.end('ok')));
    const log = quiet();
    const n = createNotifier(fast(r.url, { queueSize: 3, timeoutMs: 5_000, log }));
    for (let i = 0; i < 8; i++) n.send({ text: `m${i}` }, `m${i}`);
    // m0 is in flight; of m1..m7 only the newest three wait.
    expect(n.stats()).toMatchObject({ queued: 3, dropped: 4 });
    expect(log.warn).toHaveBeenCalledTimes(4);
    expect(String(log.warn.mock.calls[3][0])).toContain('4 dropped since start');
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    await n.idle();
    expect(r.bodies.map((b) => JSON.parse(b).text)).toEqual(['m0', 'm5', 'm6', 'm7']);
    expect(n.stats()).toMatchObject({ queued: 0, delivered: 4, dropped: 4 });
  });
});

// ── The exported entry points, configured by the environment ────────────────────────────────

describe('notifyApprovalRequested / notifyDecision', () => {
  const saved = { ...process.env };
  beforeEach(() => {
    delete process.env.COUNTERSIGN_WEBHOOK_URL;
    process.env.COUNTERSIGN_PUBLIC_URL = 'https://cs.example.com';
  });
  afterEach(() => {
    process.env = { ...saved };
  });

  it('do nothing without COUNTERSIGN_WEBHOOK_URL', async () => {
    const r = await receiver();
    expect(notificationsEnabled()).toBe(false);
    notifyApprovalRequested(makeView());
    await flushNotifications();
    expect(r.hits).toBe(0);
  });

  it('send a pending request and a decision in order, returning at once', async () => {
    const r = await receiver();
    process.env.COUNTERSIGN_WEBHOOK_URL = r.url;
    expect(notificationsEnabled()).toBe(true);
    const started = Date.now();
    notifyApprovalRequested(makeView());
    notifyApprovalRequested(makeView({ status: 'approved', requiredApprovals: 0 })); // born approved: nobody to ask
    notifyDecision(makeView({ status: 'denied' }), { reviewer: 'rui@example.test', decision: 'deny', reason: 'no' });
    expect(Date.now() - started).toBeLessThan(20);
    await flushNotifications();
    expect(r.bodies).toHaveLength(2);
    const [requested, decided] = r.bodies.map((b) => JSON.parse(b) as SlackMessage);
    expect(requested.text).toContain('Approval needed');
    expect(requested.text).toContain('https://cs.example.com/approvals/');
    expect(decided.text).toContain('Denied by rui@example.test');
  });

  it('never throw, even for a view that is not one', () => {
    process.env.COUNTERSIGN_WEBHOOK_URL = 'http://127.0.0.1:9/hook';
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    expect(() => notifyApprovalRequested({ status: 'pending' } as ApprovalView)).not.toThrow();
    expect(() => notifyDecision(null as unknown as ApprovalView, { reviewer: 'x', decision: 'deny' })).not.toThrow();
    errors.mockRestore();
  });
});
