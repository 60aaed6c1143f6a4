import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { db } from '../db/db';
import { createWebhookEndpoint, deleteWebhookEndpoint, listWebhookDeliveries } from './webhooks';
import { admin, makeApproval, setUpApprovalActors, sleep } from '@/testing/approvals-fixtures';
import { value } from '@/testing/factories';
import { config } from '@/lib/config';

// webhook_deliveries has no foreign keys (migration …_webhook_deliveries_no_foreign_keys): the
// cascades are triggers. A deleted endpoint takes its deliveries with it, also those of an event
// enqueued while it was being deleted, in either order; a purged event takes its deliveries too
// (webhooks-history.test.ts).

beforeAll(setUpApprovalActors);
const conns: pg.Client[] = [];
afterEach(async () => {
  await Promise.all(conns.splice(0).map((c) => c.end()));
  await db.webhookEndpoint.deleteMany({});
});
afterAll(() => db.$disconnect());

async function connection(): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: config().DATABASE_URL });
  await c.connect();
  conns.push(c);
  return c;
}
const endpoint = async (path: string) =>
  // No worker runs in this file (its own database): deliveries stay pending.
  value(
    await createWebhookEndpoint(admin, {
      url: `http://127.0.0.1:9/${path}`,
      format: 'slack',
      events: ['approval.requested'],
    }),
  ).id;
const deliveriesOf = (endpointId: string) => db.webhookDelivery.count({ where: { endpointId } });
/** Settles within `ms`? */
const settlesWithin = (p: Promise<unknown>, ms: number) =>
  Promise.race([p.then(() => true), sleep(ms).then(() => false)]);
const enqueue = (c: pg.Client, approvalId: string) =>
  c.query(`SELECT webhook_enqueue('approval.requested', $1::uuid)`, [approvalId]);

describe('webhook deliveries without foreign keys', () => {
  it('deleting an endpoint deletes its deliveries, and only its own', async () => {
    const gone = await endpoint('gone');
    const kept = await endpoint('kept');
    await makeApproval();
    await makeApproval();
    expect([await deliveriesOf(gone), await deliveriesOf(kept)]).toEqual([2, 2]);
    value(await deleteWebhookEndpoint(admin, gone));
    expect([await deliveriesOf(gone), await deliveriesOf(kept)]).toEqual([0, 2]);
    expect(value(await listWebhookDeliveries(admin, kept))).toHaveLength(2);
  });

  it('an event enqueued, then its endpoint deleted before the event commits: no delivery is left', async () => {
    const id = await endpoint('a');
    const approval = await makeApproval();
    const t = await connection();
    await t.query('BEGIN');
    await enqueue(t, approval.id);
    const deleting = deleteWebhookEndpoint(admin, id);
    // The delete waits for the enqueue under way …
    expect(await settlesWithin(deleting, 300)).toBe(false);
    await t.query('COMMIT');
    // … and then takes its delivery with it.
    expect(value(await deleting)).toEqual({ id });
    expect(await deliveriesOf(id)).toBe(0);
    expect(await db.webhookEvent.count({ where: { approvalId: approval.id } })).toBe(2);
  });

  it('an endpoint deleted, then an event enqueued before the delete commits: no delivery is left', async () => {
    const id = await endpoint('b');
    const approval = await makeApproval();
    expect(await deliveriesOf(id)).toBe(1);
    const d = await connection();
    const t = await connection();
    await d.query('BEGIN');
    await d.query('DELETE FROM webhook_endpoints WHERE id = $1', [id]);
    const enqueuing = enqueue(t, approval.id);
    // The enqueue waits for the delete under way …
    expect(await settlesWithin(enqueuing, 300)).toBe(false);
    await d.query('COMMIT');
    // … and then no longer sees the endpoint.
    await enqueuing;
    expect(await deliveriesOf(id)).toBe(0);
    expect(await db.webhookEvent.count({ where: { approvalId: approval.id } })).toBe(2);
  });

  it('a delete rolled back while an event was enqueued: the delivery is written', async () => {
    const id = await endpoint('c');
    const approval = await makeApproval();
    const d = await connection();
    const t = await connection();
    await d.query('BEGIN');
    await d.query('DELETE FROM webhook_endpoints WHERE id = $1', [id]);
    const enqueuing = enqueue(t, approval.id);
    expect(await settlesWithin(enqueuing, 300)).toBe(false);
    await d.query('ROLLBACK');
    await enqueuing;
    expect(await deliveriesOf(id)).toBe(2);
  });

  it('enqueues under way do not wait for each other', async () => {
    await endpoint('d');
    const [one, two] = [await makeApproval(), await makeApproval()];
    const [a, b] = [await connection(), await connection()];
    await a.query('BEGIN');
    await b.query('BEGIN');
    await enqueue(a, one.id);
    expect(await settlesWithin(enqueue(b, two.id), 1_000)).toBe(true);
    await Promise.all([a.query('COMMIT'), b.query('COMMIT')]);
  });
});
