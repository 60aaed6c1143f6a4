import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { db } from '../db/db';
import { createWebhookEndpoint, listWebhookDeliveries } from './webhooks';
import { admin, makeApproval, setUpApprovalActors } from '@/testing/approvals-fixtures';
import { closeReceivers, receiver, waitFor } from '@/testing/webhooks-fixtures';
import { value } from '@/testing/factories';
import { childEnvironment } from '@/lib/config';

// The worker killed with SIGKILL between the state change and its delivery, in the middle of
// sending: after a restart the delivery is made, by the lease running out.
beforeAll(setUpApprovalActors);
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await closeReceivers();
});

async function startWorker(leaseMs: number): Promise<ChildProcess> {
  const child = spawn(
    path.resolve('node_modules/.bin/tsx'),
    ['--conditions=react-server', 'testing/webhook-worker-child.ts'],
    { env: childEnvironment({ WORKER_LEASE_MS: String(leaseMs) }), stdio: ['ignore', 'pipe', 'inherit'] },
  );
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (b: Buffer) => b.toString().includes('ready') && resolve());
    child.on('exit', (code) => reject(new Error(`worker exited with ${code}`)));
  });
  return child;
}

describe('a worker killed mid-delivery', () => {
  it('SIGKILL while sending; restarted, it delivers (at least once, the same webhook-id)', async () => {
    let hang = true;
    const r = await receiver((_q, res) => {
      if (!hang) res.end('ok'); // else: never answers
    });
    const made = value(
      await createWebhookEndpoint(admin, { url: r.url, format: 'slack', events: ['approval.requested'] }),
    );
    // The state change, committed with nobody running.
    const approval = await makeApproval();
    const first = await startWorker(1_500);
    await waitFor(
      () => r.hits.length,
      (n) => n >= 1,
    );
    expect(r.hits.length).toBe(1);
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    const held = value(await listWebhookDeliveries(admin, made.id));
    expect(held).toMatchObject([{ status: 'pending', attempts: 1 }]);

    hang = false;
    await startWorker(1_500);
    const done = await waitFor(
      async () => value(await listWebhookDeliveries(admin, made.id)),
      (l) => l[0]?.status === 'delivered',
    );
    expect(done[0]).toMatchObject({ status: 'delivered', attempts: 2, approvalId: approval.id });
    expect(r.hits.length).toBe(2);
    expect(r.hits.map((h) => h.headers['webhook-id'])).toEqual([done[0].id, done[0].id]);
    expect(r.kept.size).toBe(1);
    expect(await db.webhookDelivery.count({ where: { status: 'delivered' } })).toBe(1);
  });

  it('two worker processes on one database: each delivery made once', async () => {
    const r = await receiver((_q, res) => setTimeout(() => res.end('ok'), 5));
    const made = value(
      await createWebhookEndpoint(admin, { url: r.url, format: 'slack', events: ['approval.requested'] }),
    );
    await db.webhookEndpoint.deleteMany({ where: { id: { not: made.id } } });
    await Promise.all(Array.from({ length: 40 }, () => makeApproval()));
    await Promise.all([startWorker(5_000), startWorker(5_000)]);
    const done = await waitFor(
      async () => value(await listWebhookDeliveries(admin, made.id, 200)),
      (l) => l.length === 40 && l.every((d) => d.status === 'delivered'),
    );
    expect(done.filter((d) => d.status === 'delivered' && d.attempts === 1)).toHaveLength(40);
    expect(r.hits).toHaveLength(40);
    expect(new Set(r.hits.map((h) => h.headers['webhook-id'])).size).toBe(40);
  });
});
