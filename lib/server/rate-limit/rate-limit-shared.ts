import 'server-only';
import Redis from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { BucketLimit, Take } from '@/lib/ratelimit/bucket';
import type { RateLimitConfig } from '@/lib/ratelimit/config';
import { redisLimitOptions, refusedTake, TOKEN_BUCKET_LUA } from '@/lib/ratelimit/redis-bucket';

// The rate limits in Redis (REDIS_URL), shared by every instance (rate-limiter-flexible over
// ioredis, with lib/ratelimit/redis-bucket.ts's token bucket). A take answers null when Redis
// cannot answer now (down, unreachable, slow): the caller then limits per process instead.

export type Kind = keyof RateLimitConfig;

export type SharedLimits = {
  take(kind: Kind, key: string): Promise<Take | null>;
  refund(kind: Kind, key: string): Promise<void>;
  close(): Promise<void>;
};

export type SharedOptions = {
  url: string;
  config: RateLimitConfig;
  /** Every key starts with it: instances of one deployment share it (REDIS_KEY_PREFIX). */
  prefix: string;
  /** A take Redis has not answered within this long falls back. */
  timeoutMs?: number;
  log?: Pick<Console, 'warn'>;
};

export function createSharedLimits(o: SharedOptions): SharedLimits {
  const log = o.log ?? console;
  const client = new Redis(o.url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: o.timeoutMs ?? 250,
    connectTimeout: 1_000,
    retryStrategy: (n) => Math.min(n * 200, 2_000),
    lazyConnect: false,
  });
  let down = false;
  // Before the first connection, a take waits for it (briefly): a starting instance is not an outage.
  let connected = false;
  const firstReady = new Promise<void>((resolve) => {
    client.once('ready', () => ((connected = true), resolve()));
    setTimeout(resolve, 1_000).unref();
  });
  // Said once per outage; never the URL (it may carry a password).
  const outage = (why: string) => {
    if (down) return;
    down = true;
    log.warn(`[rate-limit] Redis (REDIS_URL) is unavailable (${why}): limiting per process until it answers`);
  };
  client.on('error', (err: NodeJS.ErrnoException) => outage(err.code ?? err.name ?? 'error'));
  client.on('ready', () => {
    if (!down) return;
    down = false;
    log.warn('[rate-limit] Redis (REDIS_URL) answers again: limits are shared by every instance');
  });

  const limiters = Object.fromEntries(
    (Object.keys(o.config) as Kind[]).map((kind) => [
      kind,
      new RateLimiterRedis({
        storeClient: client,
        keyPrefix: `${o.prefix}rl:${kind}`,
        customIncrTtlLuaScript: TOKEN_BUCKET_LUA,
        rejectIfRedisNotReady: true,
        ...redisLimitOptions(o.config[kind]),
      }),
    ]),
  ) as Record<Kind, RateLimiterRedis>;

  return {
    async take(kind, key) {
      const limit: BucketLimit = o.config[kind];
      if (!connected) await firstReady;
      try {
        const res = await limiters[kind].consume(key, 1);
        return { allowed: true, remaining: res.remainingPoints };
      } catch (err) {
        if (err instanceof RateLimiterRes) return refusedTake(limit, err.consumedPoints, err.msBeforeNext);
        outage((err as Error)?.message?.includes('timed out') ? 'no answer in time' : 'not connected');
        return null;
      }
    },
    async refund(kind, key) {
      await limiters[kind].reward(key, 1).catch(() => {});
    },
    async close() {
      client.disconnect();
    },
  };
}
