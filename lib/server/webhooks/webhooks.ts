import 'server-only';
import { db } from '../db/db';
import { appendAudit } from '../audit/audit';
import { rows } from '../db/kysely';
import { redeliver } from './sql';
import { sealSecret } from './secret';
import { authorize } from '@/lib/auth/permissions';
import { auditName, type Actor } from '@/lib/auth/actor';
import { isUuid } from '@/lib/approvals/schemas';
import { endpointInputSchema, endpointUpdateSchema, type EndpointInput } from '@/lib/webhooks/events';
import { checkEndpointUrl, consoleOrigins } from '@/lib/webhooks/address';
import { config } from '@/lib/config';
import { newWebhookSecret } from '@/lib/webhooks/standard';
import { fail, ok, type FieldError, type Result } from '@/lib/result';

// Admin → Webhooks (docs/api.md "Webhooks"): endpoints and their deliveries. Every call is checked
// with authorize('webhooks.manage') and every change audited. A secret is answered once, at
// creation, and never again; the receiver's URL is shown to admins only (it may be a credential).

export type EndpointView = {
  id: string;
  url: string;
  format: 'slack' | 'standard';
  events: string[];
  enabled: boolean;
  fromEnvironment: boolean;
  createdBy: string;
  createdAt: Date;
  counts: { pending: number; delivered: number; dead: number };
};

export type DeliveryView = {
  id: string;
  eventType: string;
  approvalId: string | null;
  status: 'pending' | 'delivered' | 'dead';
  attempts: number;
  lastError: string | null;
  lastStatus: number | null;
  nextAttemptAt: Date | null;
  deliveredAt: Date | null;
  createdAt: Date;
};

const zodErrors = (issues: { path: PropertyKey[]; message: string }[]): FieldError[] =>
  issues.map((i) => ({ path: i.path.map(String).join('.') || 'input', message: i.message }));

export async function listWebhookEndpoints(viewer: Actor): Promise<Result<EndpointView[]>> {
  if (!authorize(viewer, 'webhooks.manage')) return fail('forbidden');
  const endpoints = await db.webhookEndpoint.findMany({ orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  const counts = await db.webhookDelivery.groupBy({ by: ['endpointId', 'status'], _count: { _all: true } });
  return ok(
    endpoints.map((e) => {
      const c = { pending: 0, delivered: 0, dead: 0 };
      for (const g of counts) if (g.endpointId === e.id) c[g.status] = g._count._all;
      return {
        id: e.id,
        url: e.url,
        format: e.format,
        events: e.events,
        enabled: e.enabled,
        fromEnvironment: e.source === 'env',
        createdBy: e.createdBy,
        createdAt: e.createdAt,
        counts: c,
      };
    }),
  );
}

/** Creates an endpoint; a standard one's secret comes back here, once. */
export async function createWebhookEndpoint(
  viewer: Actor,
  input: EndpointInput,
): Promise<Result<{ id: string; secret: string | null }>> {
  if (!authorize(viewer, 'webhooks.manage')) return fail('forbidden');
  const parsed = endpointInputSchema.safeParse(input);
  if (!parsed.success) return fail('invalid_input', 'The endpoint is invalid.', zodErrors(parsed.error.issues));
  const url = checkEndpointUrl(parsed.data.url, consoleOrigins(config()));
  if (!url.ok) return fail('invalid_input', `url: ${url.message}.`, [{ path: 'url', message: url.message }]);
  const secret = parsed.data.format === 'standard' ? newWebhookSecret() : null;
  const id = await db.$transaction(async (tx) => {
    const created = await tx.webhookEndpoint.create({
      data: {
        url: url.url.toString(),
        format: parsed.data.format,
        events: parsed.data.events,
        enabled: parsed.data.enabled,
        secretBox: secret && sealSecret(secret),
        createdBy: auditName(viewer),
      },
      select: { id: true },
    });
    // The URL's host only: a Slack URL's path is itself a credential.
    await appendAudit(tx, {
      actor: auditName(viewer),
      action: 'webhook.create',
      targetType: 'webhook_endpoint',
      targetId: created.id,
      data: {
        host: url.url.host,
        format: parsed.data.format,
        events: parsed.data.events,
        enabled: parsed.data.enabled,
      },
    });
    return created.id;
  });
  return ok({ id, secret });
}

export async function updateWebhookEndpoint(
  viewer: Actor,
  input: { id: string; enabled?: boolean; events?: string[] },
): Promise<Result<{ id: string }>> {
  if (!authorize(viewer, 'webhooks.manage')) return fail('forbidden');
  const parsed = endpointUpdateSchema.safeParse(input);
  if (!parsed.success) return fail('invalid_input', 'The change is invalid.', zodErrors(parsed.error.issues));
  const { id, ...change } = parsed.data;
  return db.$transaction(async (tx) => {
    const n = await tx.webhookEndpoint.updateMany({ where: { id }, data: change });
    if (n.count !== 1) return fail('not_found');
    await appendAudit(tx, {
      actor: auditName(viewer),
      action: 'webhook.update',
      targetType: 'webhook_endpoint',
      targetId: id,
      data: change,
    });
    return ok({ id });
  });
}

export async function deleteWebhookEndpoint(viewer: Actor, id: string): Promise<Result<{ id: string }>> {
  if (!authorize(viewer, 'webhooks.manage')) return fail('forbidden');
  if (!isUuid(id)) return fail('not_found');
  return db.$transaction(async (tx) => {
    // Its deliveries go with it (the trigger webhook_endpoints_cascade), also those of an event
    // being enqueued meanwhile: it waits for them (prisma/migrations/…_webhook_deliveries_no_foreign_keys).
    const n = await tx.webhookEndpoint.deleteMany({ where: { id } });
    if (n.count !== 1) return fail('not_found');
    await appendAudit(tx, {
      actor: auditName(viewer),
      action: 'webhook.delete',
      targetType: 'webhook_endpoint',
      targetId: id,
    });
    return ok({ id });
  });
}

export async function listWebhookDeliveries(
  viewer: Actor,
  endpointId: string,
  limit = 50,
): Promise<Result<DeliveryView[]>> {
  if (!authorize(viewer, 'webhooks.manage')) return fail('forbidden');
  if (!isUuid(endpointId)) return fail('not_found');
  const list = await db.webhookDelivery.findMany({
    where: { endpointId },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: Math.min(Math.max(limit, 1), 200),
  });
  // No relation to include (webhook_deliveries has no foreign keys: prisma/schema/webhooks.prisma).
  const events = new Map(
    (
      await db.webhookEvent.findMany({
        where: { id: { in: [...new Set(list.map((d) => d.eventId))] } },
        select: { id: true, type: true, approvalId: true },
      })
    ).map((e) => [e.id, e]),
  );
  return ok(
    list.flatMap((d) => {
      const event = events.get(d.eventId);
      // Gone between the two reads (purged, its deliveries with it): not listed.
      if (!event) return [];
      return [
        {
          id: d.id,
          eventType: event.type,
          approvalId: event.approvalId,
          status: d.status,
          attempts: d.attempts,
          lastError: d.lastError,
          lastStatus: d.lastStatus,
          nextAttemptAt: d.status === 'pending' ? d.nextAttemptAt : null,
          deliveredAt: d.deliveredAt,
          createdAt: d.createdAt,
        },
      ];
    }),
  );
}

/** Sends a delivery again (same webhook-id: a receiver that deduplicates keeps one). */
export async function redeliverWebhook(viewer: Actor, deliveryId: string): Promise<Result<{ id: string }>> {
  if (!authorize(viewer, 'webhooks.manage')) return fail('forbidden');
  if (!isUuid(deliveryId)) return fail('not_found');
  return db.$transaction(async (tx) => {
    const [row] = await rows(redeliver(deliveryId), tx);
    if (!row) {
      const exists = await tx.webhookDelivery.count({ where: { id: deliveryId } });
      return exists
        ? fail('conflict', 'This delivery is being sent right now; look again in a moment.')
        : fail('not_found');
    }
    await appendAudit(tx, {
      actor: auditName(viewer),
      action: 'webhook.redeliver',
      targetType: 'webhook_delivery',
      targetId: deliveryId,
      data: { endpointId: row.endpoint_id },
    });
    return ok({ id: deliveryId });
  });
}
