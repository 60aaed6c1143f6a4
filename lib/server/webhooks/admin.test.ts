import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { db } from '../db/db';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  listWebhookDeliveries,
  listWebhookEndpoints,
  redeliverWebhook,
  updateWebhookEndpoint,
} from './webhooks';
import { declareEnvEndpoint } from './env';
import { admin, makeApproval, reviewer, setUpApprovalActors, requester } from '@/testing/approvals-fixtures';
import { makeUser, value } from '@/testing/factories';
import { webhookEventTypes, type EndpointInput } from '@/lib/webhooks/events';

beforeAll(setUpApprovalActors);
afterEach(() => db.webhookEndpoint.deleteMany({}));
const good: EndpointInput = {
  url: 'https://hooks.example.test/services/T/B/secretpath',
  format: 'standard',
  events: ['approval.requested'],
};

describe('Admin → Webhooks through data access', () => {
  it('admins only', async () => {
    const support = await makeUser('support');
    for (const who of [reviewer, support, requester]) {
      expect(await createWebhookEndpoint(who, good)).toMatchObject({ ok: false, failure: 'forbidden' });
      expect(await listWebhookEndpoints(who)).toMatchObject({ ok: false, failure: 'forbidden' });
      expect(await redeliverWebhook(who, '00000000-0000-4000-8000-000000000000')).toMatchObject({
        failure: 'forbidden',
      });
    }
    expect(await db.webhookEndpoint.count()).toBe(0);
  });

  it('the secret once, sealed at rest; audited with the host only', async () => {
    const made = value(await createWebhookEndpoint(admin, good));
    expect(made.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const row = await db.webhookEndpoint.findUniqueOrThrow({ where: { id: made.id } });
    expect(row.secretBox).not.toContain(made.secret!.slice(6));
    const listed = JSON.stringify(value(await listWebhookEndpoints(admin)));
    expect(listed).not.toContain(made.secret!.slice(6));
    expect(listed).not.toContain('secretBox');
    const [entry] = await db.auditEntry.findMany({ where: { action: 'webhook.create', targetId: made.id } });
    expect(entry.data).toEqual({
      host: 'hooks.example.test',
      format: 'standard',
      events: ['approval.requested'],
      enabled: true,
    });
    expect(value(await createWebhookEndpoint(admin, { ...good, format: 'slack' })).secret).toBeNull();
  });

  it('bad input names the field', async () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ ...good, url: 'ftp://x.example/' }, 'url', /http\(s\)/],
      [{ ...good, url: 'http://169.254.169.254/latest/meta-data' }, 'url', /metadata/],
      [{ ...good, url: 'http://[fd00:ec2::254]/' }, 'url', /metadata/],
      [{ ...good, url: 'http://localhost:3000/api/v1/approvals' }, 'url', /console itself/],
      [{ ...good, url: `https://x.example/${'a'.repeat(5000)}` }, 'url', /2048/],
      [{ ...good, url: '' }, 'url', /enter/],
      [{ ...good, format: 'xml' }, 'format', /slack or standard/],
      [{ ...good, events: [] }, 'events', /at least one/],
      [{ ...good, events: ['approval.exploded'] }, 'events.0', /one of/],
    ];
    for (const [input, path, message] of cases) {
      const r = await createWebhookEndpoint(admin, input as never);
      expect(r, JSON.stringify(input).slice(0, 80)).toMatchObject({ ok: false, failure: 'invalid_input' });
      expect(!r.ok && r.errors?.[0]).toMatchObject({ path, message: expect.stringMatching(message) });
    }
    expect(await db.webhookEndpoint.count()).toBe(0);
    // Duplicated event types are one.
    const made = value(await createWebhookEndpoint(admin, { ...good, events: ['approval.denied', 'approval.denied'] }));
    expect((await db.webhookEndpoint.findUniqueOrThrow({ where: { id: made.id } })).events).toEqual([
      'approval.denied',
    ]);
  });

  it('update, delete and redeliver: unknown ids are not found, each change audited', async () => {
    const made = value(await createWebhookEndpoint(admin, good));
    value(await updateWebhookEndpoint(admin, { id: made.id, enabled: false }));
    expect(value(await listWebhookEndpoints(admin))[0]).toMatchObject({ enabled: false });
    const unknown = '00000000-0000-4000-8000-000000000000';
    expect(await updateWebhookEndpoint(admin, { id: unknown, enabled: true })).toMatchObject({ failure: 'not_found' });
    expect(await updateWebhookEndpoint(admin, { id: 'nope', enabled: true })).toMatchObject({
      failure: 'invalid_input',
    });
    expect(await redeliverWebhook(admin, unknown)).toMatchObject({ failure: 'not_found' });
    expect(await listWebhookDeliveries(admin, 'nope')).toMatchObject({ failure: 'not_found' });
    // Redelivering one delivery twice at once: both answered, never an error.
    const approvalEndpoint = value(await createWebhookEndpoint(admin, { ...good, format: 'slack' }));
    await makeApproval();
    const [d] = value(await listWebhookDeliveries(admin, approvalEndpoint.id));
    const twice = await Promise.all([redeliverWebhook(admin, d.id), redeliverWebhook(admin, d.id)]);
    expect(twice.map((r) => r.ok)).toEqual([true, true]);
    value(await deleteWebhookEndpoint(admin, made.id));
    expect(await deleteWebhookEndpoint(admin, made.id)).toMatchObject({ failure: 'not_found' });
    const actions = (await db.auditEntry.findMany({ where: { targetId: made.id }, orderBy: { seq: 'asc' } })).map(
      (e) => e.action,
    );
    expect(actions).toEqual(['webhook.create', 'webhook.update', 'webhook.delete']);
  });
});

describe('COUNTERSIGN_WEBHOOK_URL', () => {
  const log = () => ({ log: () => {}, error: (m: string) => errors.push(m) });
  let errors: string[] = [];
  it('declares one endpoint, every event type; the same again changes nothing; unset turns it off', async () => {
    const env = { COUNTERSIGN_WEBHOOK_URL: 'https://hooks.slack.example/services/T/B/x', AUTH_SECRET: 'x' };
    await declareEnvEndpoint(env, log());
    await declareEnvEndpoint(env, log());
    const rows = await db.webhookEndpoint.findMany();
    expect(rows).toMatchObject([{ source: 'env', format: 'slack', enabled: true, url: env.COUNTERSIGN_WEBHOOK_URL }]);
    expect(rows[0].events).toEqual([...webhookEventTypes]);
    expect(await db.auditEntry.count({ where: { targetId: rows[0].id } })).toBe(1);
    await declareEnvEndpoint({}, log());
    expect(await db.webhookEndpoint.findMany()).toMatchObject([{ source: 'env', enabled: false }]);
  });

  it('instances starting together: one row', async () => {
    const env = { COUNTERSIGN_WEBHOOK_URL: 'https://hooks.slack.example/services/T/B/y' };
    await Promise.all(Array.from({ length: 4 }, () => declareEnvEndpoint(env, log())));
    expect(await db.webhookEndpoint.count({ where: { source: 'env', enabled: true } })).toBe(1);
  });

  it('standard needs a whsec_ secret; a bad value is named, never echoed, and leaves it off', async () => {
    errors = [];
    const url = 'https://hooks.example.test/in';
    await declareEnvEndpoint({ COUNTERSIGN_WEBHOOK_URL: url, COUNTERSIGN_WEBHOOK_FORMAT: 'standard' }, log());
    await declareEnvEndpoint({ COUNTERSIGN_WEBHOOK_URL: 'http://169.254.169.254/x' }, log());
    await declareEnvEndpoint({ COUNTERSIGN_WEBHOOK_URL: url, COUNTERSIGN_WEBHOOK_FORMAT: 'xml' }, log());
    expect(errors).toEqual([
      expect.stringMatching(/^\[webhooks\] COUNTERSIGN_WEBHOOK_SECRET must be set/),
      expect.stringMatching(/^\[webhooks\] COUNTERSIGN_WEBHOOK_URL must not point at a link-local/),
      expect.stringMatching(/^\[webhooks\] COUNTERSIGN_WEBHOOK_FORMAT must be slack or standard/),
    ]);
    expect(errors.join('\n')).not.toContain('169.254');
    expect(await db.webhookEndpoint.count({ where: { enabled: true } })).toBe(0);
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    await declareEnvEndpoint(
      { COUNTERSIGN_WEBHOOK_URL: url, COUNTERSIGN_WEBHOOK_FORMAT: 'standard', COUNTERSIGN_WEBHOOK_SECRET: secret },
      log(),
    );
    const row = await db.webhookEndpoint.findUniqueOrThrow({ where: { source: 'env' } });
    expect(row).toMatchObject({ format: 'standard', enabled: true });
    expect(row.secretBox).not.toContain(secret.slice(6));
  });
});
