import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { createWebhookWorker, type Worker } from './worker';
import { db } from '../db/db';
import { createWebhookEndpoint, listWebhookDeliveries, redeliverWebhook, updateWebhookEndpoint } from './webhooks';
import { decideApproval, expireStaleApprovals, revokeApproval } from '../approvals';
import { redeemGrant } from '../approvals/grants';
import {
  admin,
  approvedGrant,
  makeApproval,
  redeemBody,
  redeemer,
  reviewer,
  reviewer2,
  setUpApprovalActors,
  TWO,
} from '@/testing/approvals-fixtures';
import { closeReceivers, fastWorker, freePort, receiver, waitFor } from '@/testing/webhooks-fixtures';
import { value } from '@/testing/factories';
import { webhookEventTypes } from '@/lib/webhooks/events';

beforeAll(setUpApprovalActors);
let workers: Worker[] = [];
afterEach(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  workers = [];
  await closeReceivers();
  // Each test's endpoints only: the next test starts with none.
  await db.webhookEndpoint.deleteMany({});
});
const start = (over = {}) => {
  const w = createWebhookWorker({ ...fastWorker, ...over });
  workers.push(w);
  w.start();
  return w;
};
const allEvents = [...webhookEventTypes];
const statuses = async (endpointId: string) => value(await listWebhookDeliveries(admin, endpointId, 200));

describe('the outbox', () => {
  it('writes each state change’s events in its transaction, one delivery per subscribed endpoint', async () => {
    const all = value(
      await createWebhookEndpoint(admin, { url: 'http://127.0.0.1:9/a', format: 'slack', events: allEvents }),
    );
    const decisions = value(
      await createWebhookEndpoint(admin, {
        url: 'http://127.0.0.1:9/b',
        format: 'slack',
        events: ['approval.approved', 'approval.denied'],
      }),
    );
    value(
      await createWebhookEndpoint(admin, {
        url: 'http://127.0.0.1:9/c',
        format: 'slack',
        events: allEvents,
        enabled: false,
      }),
    );
    const two = await makeApproval(TWO); // needs 2
    value(await decideApproval(reviewer, { id: two.id, decision: 'approve', reason: 'ok', version: 1 }));
    value(await decideApproval(reviewer2, { id: two.id, decision: 'approve', reason: 'ok', version: 2 }));
    const denied = await makeApproval();
    value(await decideApproval(reviewer, { id: denied.id, decision: 'deny', reason: 'no', version: 1 }));
    const revoked = await makeApproval();
    value(await revokeApproval(admin, { id: revoked.id, reason: 'stop' }));
    const expiring = await makeApproval({ pendingTtlSeconds: 1 });
    await new Promise((r) => setTimeout(r, 1_100));
    expect(await expireStaleApprovals()).toBeGreaterThanOrEqual(1);
    const { approvalId, grantId } = await approvedGrant();
    value(await redeemGrant(redeemer, grantId, redeemBody()));

    const types = async (id: string) =>
      (await db.webhookEvent.findMany({ where: { approvalId: id }, orderBy: { createdAt: 'asc' } })).map((e) => e.type);
    expect(await types(two.id)).toEqual([
      'approval.requested',
      'approval.decided',
      'approval.decided',
      'approval.approved',
    ]);
    expect(await types(denied.id)).toEqual(['approval.requested', 'approval.decided', 'approval.denied']);
    // Each event tells the status the request had once its change was made.
    const data = async (id: string) =>
      (await db.webhookEvent.findMany({ where: { approvalId: id }, orderBy: { createdAt: 'asc' } })).map((e) => {
        const d = e.data as Record<string, unknown>;
        return [e.type, d.status, d.decision ?? null, d.reviewer ?? null, d.approvals ?? null];
      });
    expect(await data(two.id)).toEqual([
      ['approval.requested', 'pending', null, null, null],
      ['approval.decided', 'pending', 'approve', reviewer.email, 1],
      ['approval.decided', 'approved', 'approve', reviewer2.email, 2],
      ['approval.approved', 'approved', null, null, 2],
    ]);
    expect(await data(denied.id)).toEqual([
      ['approval.requested', 'pending', null, null, null],
      ['approval.decided', 'denied', 'deny', reviewer.email, null],
      ['approval.denied', 'denied', null, null, null],
    ]);
    expect(await types(revoked.id)).toEqual(['approval.requested', 'approval.revoked']);
    expect(await types(expiring.id)).toEqual(['approval.requested', 'approval.expired']);
    expect(await types(approvalId)).toEqual(['approval.requested', 'approval.approved', 'grant.redeemed']);
    const redeemed = await db.webhookEvent.findFirstOrThrow({ where: { approvalId, type: 'grant.redeemed' } });
    expect(redeemed.data).toMatchObject({ status: 'redeemed', approvalId, server: 'trusted-mcp', tool: 'get_order' });
    // Never the digest, the summary, the arguments (testing/approvals-arguments.ts) or a grant id.
    const text = JSON.stringify(await db.webhookEvent.findMany({ select: { data: true } }));
    for (const forbidden of [
      'sha256:',
      'Refund 40.00',
      grantId,
      'argsDigest',
      'summary',
      'arguments',
      'order_id',
      '40.00',
    ])
      expect(text).not.toContain(forbidden);

    expect((await statuses(all.id)).length).toBe(4 + 3 + 2 + 2 + 3);
    expect((await statuses(decisions.id)).map((d) => d.eventType).sort()).toEqual([
      'approval.approved',
      'approval.approved',
      'approval.denied',
    ]);
  });

  it('a rolled-back change leaves no event', async () => {
    value(await createWebhookEndpoint(admin, { url: 'http://127.0.0.1:9/a', format: 'slack', events: allEvents }));
    const before = await db.webhookEvent.count();
    const created = await makeApproval();
    // The second decision of the same reviewer is refused by the database: nothing of it is kept.
    value(await decideApproval(reviewer, { id: created.id, decision: 'approve', reason: 'ok', version: 1 }));
    expect((await decideApproval(reviewer, { id: created.id, decision: 'approve', reason: 'ok', version: 2 })).ok).toBe(
      false,
    );
    expect(await db.webhookEvent.count()).toBe(before + 3); // requested, decided, approved
  });
});

describe('delivery', () => {
  it('down, then 500, then 200: every event delivered, one webhook-id per event and endpoint, signed', async () => {
    const port = await freePort();
    const made = value(
      await createWebhookEndpoint(admin, {
        url: `http://127.0.0.1:${port}/hook`,
        format: 'standard',
        events: allEvents,
      }),
    );
    const secret = made.secret!;
    expect(secret).toMatch(/^whsec_/);
    const a = await makeApproval(TWO);
    value(await decideApproval(reviewer, { id: a.id, decision: 'approve', reason: 'ok', version: 1 }));
    start();
    // Down: attempts fail with a refused connection.
    await waitFor(
      () => statuses(made.id),
      (l) => l.every((d) => d.attempts >= 2),
    );
    expect(
      (await statuses(made.id)).every((d) => d.status === 'pending' && /network error/.test(d.lastError ?? '')),
    ).toBe(true);
    // Up, 500 for the first answers of each id, then 200.
    const seen = new Map<string, number>();
    const r = await receiver((req, res) => {
      const id = String(req.headers['webhook-id']);
      const n = (seen.get(id) ?? 0) + 1;
      seen.set(id, n);
      res.statusCode = n <= 1 ? 500 : 200;
      res.end(n <= 1 ? 'receiver stack trace: secret-ish' : 'ok');
    }, port);
    const done = await waitFor(
      () => statuses(made.id),
      (l) => l.every((d) => d.status === 'delivered'),
    );
    expect(done.map((d) => d.status)).toEqual(['delivered', 'delivered']);
    expect(done.every((d) => d.attempts >= 4 && d.lastError === null)).toBe(true);
    // Every attempt of one delivery carried the same id; ids are the deliveries'.
    expect([...seen.keys()].sort()).toEqual(done.map((d) => d.id).sort());
    for (const n of seen.values()) expect(n).toBe(2);
    for (const hit of r.hits) {
      const payload = new Webhook(secret).verify(hit.body, hit.headers as Record<string, string>) as {
        type: string;
        data: { approvalId: string; url: string };
      };
      expect(payload.data.approvalId).toBe(a.id);
      expect(payload.data.url).toBe(`https://countersign.example.com/approvals/${a.id}`);
    }
    expect(r.kept.size).toBe(2);
    expect([...r.kept.values()].map((b) => JSON.parse(b).type).sort()).toEqual([
      'approval.decided',
      'approval.requested',
    ]);

    // Redelivered: the same id again, so a deduplicating receiver keeps one.
    value(await redeliverWebhook(admin, done[0].id));
    await waitFor(
      () => r.hits.length,
      (n) => n === 5,
    );
    expect(r.hits.length).toBe(5);
    expect(r.hits[4].headers['webhook-id']).toBe(done[0].id);
    expect(r.kept.size).toBe(2);
    const audit = await db.auditEntry.findMany({ where: { action: 'webhook.redeliver', targetId: done[0].id } });
    expect(audit).toHaveLength(1);
  });

  it('the dead letter after the last attempt; a final answer (4xx) at once; Retry-After honoured', async () => {
    const r = await receiver((req, res) => {
      if (req.url === '/gone') res.statusCode = 410;
      else if (req.url === '/later') {
        res.statusCode = r.hits.filter((h) => h.n).length === 1 ? 429 : 200;
        res.setHeader('retry-after', '1');
      } else res.statusCode = 503;
      res.end();
    });
    const base = r.url.replace(/\/services.*/, '');
    const failing = value(
      await createWebhookEndpoint(admin, { url: `${base}/fail`, format: 'slack', events: ['approval.requested'] }),
    );
    await makeApproval();
    start({ retry: { ...fastWorker.retry, maxAttempts: 3 } });
    const dead = await waitFor(
      () => statuses(failing.id),
      (l) => l[0]?.status === 'dead',
    );
    expect(dead[0]).toMatchObject({
      status: 'dead',
      attempts: 3,
      lastError: 'HTTP 503',
      lastStatus: 503,
      nextAttemptAt: null,
    });
    await db.webhookEndpoint.deleteMany({});

    const gone = value(
      await createWebhookEndpoint(admin, { url: `${base}/gone`, format: 'slack', events: ['approval.requested'] }),
    );
    await makeApproval();
    const once = await waitFor(
      () => statuses(gone.id),
      (l) => l[0]?.status === 'dead',
    );
    expect(once[0]).toMatchObject({ status: 'dead', attempts: 1, lastError: 'HTTP 410' });
    await db.webhookEndpoint.deleteMany({});

    r.hits.length = 0;
    const later = value(
      await createWebhookEndpoint(admin, { url: `${base}/later`, format: 'slack', events: ['approval.requested'] }),
    );
    await makeApproval();
    await waitFor(
      () => statuses(later.id),
      (l) => l[0]?.status === 'delivered',
    );
    expect(r.hits).toHaveLength(2);
    // Backoff alone would wait 20 ms; the receiver asked for a second.
    expect(r.hits[1].at - r.hits[0].at).toBeGreaterThanOrEqual(950);
  });

  it('two workers on one database: each delivery sent once', async () => {
    const r = await receiver((_q, res) => setTimeout(() => res.end('ok'), 5));
    const made = value(
      await createWebhookEndpoint(admin, { url: r.url, format: 'slack', events: ['approval.requested'] }),
    );
    await Promise.all(Array.from({ length: 60 }, () => makeApproval()));
    start({ batch: 4 });
    start({ batch: 4 });
    const done = await waitFor(
      () => statuses(made.id),
      (l) => l.length === 60 && l.every((d) => d.status === 'delivered'),
    );
    expect(done.filter((d) => d.status === 'delivered')).toHaveLength(60);
    expect(done.every((d) => d.attempts === 1)).toBe(true);
    expect(r.hits).toHaveLength(60);
  });

  it('a receiver that hangs holds its own slot only: the others are delivered meanwhile', async () => {
    const hanging = await receiver(() => {});
    const healthy = await receiver();
    const slow = value(
      await createWebhookEndpoint(admin, { url: hanging.url, format: 'slack', events: ['approval.requested'] }),
    );
    await makeApproval();
    // One delivery to the hanging receiver only: it now takes other events.
    value(await updateWebhookEndpoint(admin, { id: slow.id, events: ['approval.denied'] }));
    const fast = value(
      await createWebhookEndpoint(admin, { url: healthy.url, format: 'slack', events: ['approval.requested'] }),
    );
    await Promise.all(Array.from({ length: 8 }, () => makeApproval()));
    const t = Date.now();
    start({ batch: 3, timeoutMs: 3_000 });
    await waitFor(
      () => statuses(fast.id),
      (l) => l.every((d) => d.status === 'delivered'),
    );
    expect(Date.now() - t).toBeLessThan(2_500);
    expect((await statuses(fast.id)).map((d) => d.status)).toEqual(Array(8).fill('delivered'));
    expect((await statuses(slow.id)).map((d) => d.status)).toEqual(['pending']);
  });
});
