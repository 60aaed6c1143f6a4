import 'server-only';
import { db } from '../db/db';
import { isUniqueViolation } from '../db/errors';
import { appendAudit } from '../audit/audit';
import { openSecret, sealSecret } from './secret';
import { checkEndpointUrl, consoleOrigins, type ConsoleAddressEnv } from '@/lib/webhooks/address';
import { webhookEventTypes, webhookFormats, type WebhookFormat } from '@/lib/webhooks/events';
import { isWebhookSecret } from '@/lib/webhooks/standard';

// The variables read: what the configuration (lib/config) gives; a test passes the ones it means.
type Env = {
  COUNTERSIGN_WEBHOOK_URL?: string;
  COUNTERSIGN_WEBHOOK_FORMAT?: string;
  COUNTERSIGN_WEBHOOK_SECRET?: string;
} & ConsoleAddressEnv;
type Log = Pick<Console, 'log' | 'error'>;

export type EnvEndpoint =
  | { state: 'none' }
  | { state: 'invalid'; variable: string; message: string }
  | { state: 'ok'; url: string; format: WebhookFormat; secret: string | null };

/** What COUNTERSIGN_WEBHOOK_URL (+ _FORMAT, _SECRET) declares; never echoes a value. */
export function readEnvEndpoint(env: Env): EnvEndpoint {
  const raw = env.COUNTERSIGN_WEBHOOK_URL?.trim();
  if (!raw) return { state: 'none' };
  const url = checkEndpointUrl(raw, consoleOrigins(env));
  if (!url.ok) return { state: 'invalid', variable: 'COUNTERSIGN_WEBHOOK_URL', message: url.message };
  const format = (env.COUNTERSIGN_WEBHOOK_FORMAT?.trim() || 'slack') as WebhookFormat;
  if (!webhookFormats.includes(format))
    return { state: 'invalid', variable: 'COUNTERSIGN_WEBHOOK_FORMAT', message: 'must be slack or standard' };
  const secret = env.COUNTERSIGN_WEBHOOK_SECRET?.trim() || null;
  if (format === 'standard' && (!secret || !isWebhookSecret(secret)))
    return {
      state: 'invalid',
      variable: 'COUNTERSIGN_WEBHOOK_SECRET',
      message: 'must be set for the standard format, as whsec_ followed by base64 of at least 24 bytes',
    };
  return { state: 'ok', url: url.url.toString(), format, secret: format === 'standard' ? secret : null };
}

/**
 * At start-up: the environment's endpoint (source 'env') made to match it, every event type, on;
 * no variable: that endpoint turned off (its history kept). A bad value is logged, naming the
 * variable, and leaves notifications off rather than stopping the server. Idempotent: every
 * instance runs it, the unique source keeps one row.
 */
export async function declareEnvEndpoint(env: Env, log: Log = console): Promise<EnvEndpoint> {
  const wanted = readEnvEndpoint(env);
  if (wanted.state === 'invalid') log.error(`[webhooks] ${wanted.variable} ${wanted.message}: that endpoint is off`);
  // Instances starting together race to create the row: the loser finds it on its second round.
  for (let round = 0; ; round++) {
    try {
      await apply(wanted);
      return wanted;
    } catch (err) {
      if (round > 0 || !isUniqueViolation(err)) throw err;
    }
  }
}

async function apply(wanted: EnvEndpoint): Promise<void> {
  await db.$transaction(async (tx) => {
    const current = await tx.webhookEndpoint.findUnique({ where: { source: 'env' } });
    if (wanted.state !== 'ok') {
      if (current?.enabled) {
        await tx.webhookEndpoint.update({ where: { id: current.id }, data: { enabled: false } });
        await appendAudit(tx, {
          actor: 'system',
          action: 'webhook.update',
          targetType: 'webhook_endpoint',
          targetId: current.id,
          data: { enabled: false, source: 'env' },
        });
      }
      return;
    }
    const same =
      current?.enabled &&
      current.url === wanted.url &&
      current.format === wanted.format &&
      current.events.length === webhookEventTypes.length &&
      (current.secretBox ? openSecret(current.secretBox) : null) === wanted.secret;
    if (same) return;
    const data = {
      url: wanted.url,
      format: wanted.format,
      events: [...webhookEventTypes],
      enabled: true,
      secretBox: wanted.secret && sealSecret(wanted.secret),
    };
    const row = await tx.webhookEndpoint.upsert({
      where: { source: 'env' },
      create: { ...data, source: 'env', createdBy: 'system' },
      update: data,
      select: { id: true },
    });
    await appendAudit(tx, {
      actor: 'system',
      action: current ? 'webhook.update' : 'webhook.create',
      targetType: 'webhook_endpoint',
      targetId: row.id,
      data: { host: new URL(wanted.url).host, format: wanted.format, source: 'env' },
    });
  });
}
