// Standard Webhooks bodies and signatures (docs/api.md "Webhooks"), signed with the `standardwebhooks`
// library: webhook-id (stable for one event to one endpoint), webhook-timestamp (Unix seconds of
// this attempt), webhook-signature (`v1,` + base64 HMAC-SHA256 of `id.timestamp.body`).
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { WebhookEvent } from './events';
import { eventLink } from './slack';

export function standardBody(event: Pick<WebhookEvent, 'type' | 'data' | 'createdAt'>, base: string): string {
  return JSON.stringify({
    type: event.type,
    timestamp: event.createdAt.toISOString(),
    data: { ...event.data, url: eventLink(event, base) },
  });
}

export type SignedHeaders = { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string };

export function signedHeaders(secret: string, webhookId: string, body: string, at: Date): SignedHeaders {
  const seconds = new Date(Math.floor(at.getTime() / 1000) * 1000);
  return {
    'webhook-id': webhookId,
    'webhook-timestamp': String(seconds.getTime() / 1000),
    'webhook-signature': new Webhook(secret).sign(webhookId, seconds, body),
  };
}

/** A new signing secret, in the format Standard Webhooks libraries read. */
export const newWebhookSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/** Whether a secret is one `standardwebhooks` can use (whsec_ + base64 of at least 24 bytes). */
export function isWebhookSecret(secret: string): boolean {
  const m = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(secret);
  return !!m && Buffer.from(m[1], 'base64').length >= 24;
}
