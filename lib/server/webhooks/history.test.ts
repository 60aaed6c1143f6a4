import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createWebhookWorker } from './worker';
import { db } from '../db/db';
import { purgeWebhookHistory } from './outbox';
import { fastWorker, waitFor } from '@/testing/webhooks-fixtures';

// The outbox's history is kept WEBHOOK_HISTORY_DAYS (30): older settled events go, with their
// deliveries; an event with a delivery still pending stays however old it is.
const DAY = 86_400_000;
const endpointIds: string[] = [];
afterEach(async () => {
  await db.webhookEndpoint.deleteMany({ where: { id: { in: endpointIds.splice(0) } } });
});

/** One event of its own approval id, `ageDays` old, with deliveries of the given statuses. */
async function event(ageDays: number, statuses: ('pending' | 'delivered' | 'dead')[]) {
  const approvalId = randomUUID();
  const e = await db.webhookEvent.create({
    data: { type: 'approval.requested', approvalId, data: {}, createdAt: new Date(Date.now() - ageDays * DAY) },
  });
  for (const status of statuses) {
    const endpoint = await db.webhookEndpoint.create({
      // Disabled: no worker of another test claims these deliveries.
      data: { url: 'http://127.0.0.1:9/h', format: 'slack', events: [], enabled: false, createdBy: 'test' },
    });
    endpointIds.push(endpoint.id);
    await db.webhookDelivery.create({ data: { eventId: e.id, endpointId: endpoint.id, status } });
  }
  return e.id;
}
const left = async (ids: string[]) =>
  (await db.webhookEvent.findMany({ where: { id: { in: ids } }, select: { id: true } })).map((e) => ids.indexOf(e.id));

describe('webhook history', () => {
  it('deletes settled events past the limit, in batches, and keeps pending and recent ones', async () => {
    const table: [number, ('pending' | 'delivered' | 'dead')[], 'kept' | 'purged'][] = [
      [31, ['delivered'], 'purged'],
      [31, ['delivered', 'dead'], 'purged'],
      [31, [], 'purged'],
      [45, ['dead', 'dead'], 'purged'],
      [31, ['delivered', 'pending'], 'kept'],
      [400, ['pending'], 'kept'],
      [29, ['delivered'], 'kept'],
      [0, ['dead'], 'kept'],
    ];
    const ids = [];
    for (const [age, statuses] of table) ids.push(await event(age, statuses));
    const deliveriesBefore = await db.webhookDelivery.count({ where: { eventId: { in: ids } } });
    // A batch of 2 over 4 to purge: it goes on until a batch comes back short.
    expect(await purgeWebhookHistory(30, 2)).toBeGreaterThanOrEqual(0);
    const kept = table.flatMap(([, , fate], i) => (fate === 'kept' ? [i] : []));
    expect(await left(ids)).toEqual(kept);
    // Their deliveries went with them: 1 + 2 + 0 + 2 of them.
    expect(await db.webhookDelivery.count({ where: { eventId: { in: ids } } })).toBe(deliveriesBefore - 5);
  });

  it('the worker purges when it starts and then once per interval', async () => {
    const old = await event(31, ['delivered']);
    const recent = await event(1, ['delivered']);
    const w = createWebhookWorker({ ...fastWorker, historyDays: 30, purgeEveryMs: 60_000 });
    w.start();
    try {
      expect(
        await waitFor(
          () => left([old, recent]),
          (l) => l.length === 1,
        ),
      ).toEqual([1]);
    } finally {
      await w.stop();
    }
  });
});
