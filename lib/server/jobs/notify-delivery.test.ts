import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  approvalRequestedMessage,
  createNotifier,
  flushNotifications,
  notificationsEnabled,
  notifyApprovalRequested,
  notifyDecision,
  type SlackMessage,
} from './notify';
import type { ApprovalView } from '@/lib/approvals/view';
import { receiver, closeReceivers, quiet, fast, makeView } from '@/testing/notify-fixtures';

afterEach(closeReceivers);

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
