import 'server-only';
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { claimDue, purgeWebhookHistory, recordDelivered, recordFailed, type ClaimedDelivery } from './outbox';
import { openSecret } from './secret';
import { declareEnvEndpoint } from './env';
import { isDatabaseUnavailable } from '../db/unavailable';
import { postWebhook } from './send';
import { consoleBaseUrl, consoleOrigins, type ConsoleAddressEnv } from '@/lib/webhooks/address';
import { config } from '@/lib/config';
import {
  DEFAULT_RETRY,
  WEBHOOK_HISTORY_DAYS,
  nextDelay,
  RETRY_AFTER_CAP_MS,
  type AttemptOutcome,
  type RetryPolicy,
} from '@/lib/webhooks/retry';
import { slackMessage } from '@/lib/webhooks/slack';
import { signedHeaders, standardBody } from '@/lib/webhooks/standard';
import type { WebhookEvent, WebhookEventData, WebhookEventType } from '@/lib/webhooks/events';

// The outbox's worker (docs/design.md "Notifications"). Every instance runs one: each round it claims
// due deliveries (SKIP LOCKED, with a lease), sends them concurrently, and records the outcome
// only if it still holds the lease. A worker that dies mid-send leaves a lease that runs out, and
// another (or itself, restarted) sends again: at least once. Receivers deduplicate by webhook-id.

export type WorkerOptions = {
  pollMs: number;
  batch: number;
  timeoutMs: number;
  /** How long a claim is held; longer than timeoutMs, so a live send never loses it. */
  leaseMs: number;
  retry: RetryPolicy;
  /** Settled events older than this many days are deleted, at most once per `purgeEveryMs`. */
  historyDays: number;
  purgeEveryMs: number;
  baseUrl: string;
  selfOrigins: readonly string[];
  on?: pg.Pool;
  log: Pick<Console, 'log' | 'error'>;
};

export const defaultWorkerOptions = (env: ConsoleAddressEnv = config()): WorkerOptions => ({
  pollMs: 200,
  batch: 32,
  timeoutMs: 10_000,
  leaseMs: 60_000,
  retry: DEFAULT_RETRY,
  historyDays: WEBHOOK_HISTORY_DAYS,
  purgeEveryMs: 3_600_000,
  baseUrl: consoleBaseUrl(env),
  selfOrigins: consoleOrigins(env),
  log: console,
});

export type Worker = { runOnce(): Promise<number>; start(): void; stop(): Promise<void> };

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref?.());

/** The request a claimed delivery becomes: body and headers for its endpoint's format. */
export function renderDelivery(d: ClaimedDelivery, baseUrl: string, at: Date) {
  const event: WebhookEvent = {
    id: d.id,
    type: d.type as WebhookEventType,
    createdAt: d.event_created_at,
    data: d.data as WebhookEventData,
  };
  // Slack ignores the id; another receiver of this format may deduplicate by it.
  if (d.format === 'slack')
    return { body: JSON.stringify(slackMessage(event, baseUrl)), headers: { 'webhook-id': d.id } };
  const body = standardBody(event, baseUrl);
  if (!d.secret_box) throw new Error('a standard endpoint without a secret');
  return { body, headers: signedHeaders(openSecret(d.secret_box), d.id, body, at) };
}

export function createWebhookWorker(over: Partial<WorkerOptions> = {}): Worker {
  const o = { ...defaultWorkerOptions(), ...over };
  const token = randomUUID();
  let running = false;
  let loop: Promise<void> | null = null;

  async function deliver(d: ClaimedDelivery): Promise<void> {
    let outcome: AttemptOutcome;
    try {
      const { body, headers } = renderDelivery(d, o.baseUrl, new Date());
      outcome = await postWebhook(d.url, body, headers, {
        timeoutMs: o.timeoutMs,
        selfOrigins: o.selfOrigins,
        retryAfterCapMs: RETRY_AFTER_CAP_MS,
      });
    } catch (err) {
      outcome = { ok: false, retry: true, error: `could not prepare the message (${(err as Error)?.name ?? 'error'})` };
    }
    if (outcome.ok) {
      await recordDelivered(d.id, token, outcome.status, o.on);
      return;
    }
    const delay = nextDelay(d.attempts, outcome, o.retry);
    await recordFailed(d.id, token, outcome.error, outcome.status ?? null, delay, o.on);
    if (delay === null)
      o.log.error(`[webhooks] delivery ${d.id} (${d.type}) dead after ${d.attempts} attempt(s): ${outcome.error}`);
  }

  async function runOnce(): Promise<number> {
    const claimed = await claimDue(token, o.batch, o.leaseMs, o.on);
    await Promise.all(claimed.map((d) => deliver(d)));
    return claimed.length;
  }

  // Up to `batch` sends in flight; a free slot is filled at once, so a receiver that hangs holds
  // only its own slot (until its timeout), never the others'.
  let failing = false;
  let purgedAt = 0;
  const inFlight = new Set<Promise<void>>();
  async function run() {
    while (running) {
      let claimed: ClaimedDelivery[] = [];
      try {
        if (Date.now() - purgedAt >= o.purgeEveryMs) {
          purgedAt = Date.now();
          await purgeWebhookHistory(o.historyDays, 1_000, o.on);
        }
        if (inFlight.size < o.batch) claimed = await claimDue(token, o.batch - inFlight.size, o.leaseMs, o.on);
        if (failing) o.log.log('[webhooks] the database answers again: delivering');
        failing = false;
      } catch (err) {
        if (!failing)
          o.log.error(
            `[webhooks] claiming deliveries failed: ${isDatabaseUnavailable(err) ? 'the database is unavailable' : ((err as Error)?.message ?? String(err)).split('\n')[0]}; retrying`,
          );
        failing = true;
        await sleep(Math.max(o.pollMs, 1_000));
        continue;
      }
      for (const d of claimed) {
        const p: Promise<void> = deliver(d)
          .catch((err: unknown) => o.log.error(`[webhooks] delivery ${d.id}: ${(err as Error)?.name ?? 'error'}`))
          .finally(() => inFlight.delete(p));
        inFlight.add(p);
      }
      if (inFlight.size >= o.batch) await Promise.race(inFlight);
      else if (claimed.length === 0) await Promise.race([sleep(o.pollMs), ...inFlight]);
    }
    await Promise.all(inFlight);
  }

  return {
    runOnce,
    start() {
      if (running) return;
      running = true;
      loop = run();
    },
    async stop() {
      running = false;
      await loop;
    },
  };
}

const holder = globalThis as unknown as { countersignWebhookWorker?: Worker };

/** Called once by instrumentation.ts: the environment's endpoint declared, then the worker. */
export async function startWebhookWorker(log: Pick<Console, 'log' | 'error'> = console): Promise<void> {
  if (holder.countersignWebhookWorker) return;
  try {
    await declareEnvEndpoint(config(), log);
  } catch (err) {
    log.error(`[webhooks] COUNTERSIGN_WEBHOOK_URL not applied: ${(err as Error)?.message?.split('\n')[0]}`);
  }
  holder.countersignWebhookWorker = createWebhookWorker({ log });
  holder.countersignWebhookWorker.start();
}

export async function stopWebhookWorker(): Promise<void> {
  await holder.countersignWebhookWorker?.stop();
  holder.countersignWebhookWorker = undefined;
}
