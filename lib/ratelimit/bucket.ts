// Token buckets: `burst` tokens at most, refilled continuously at `perSecond`; a request takes one.
// Pure and synchronous (the clock is passed in), so a take is atomic within one Node process:
// requests racing for the last token get exactly the tokens there are.

export type BucketLimit = {
  /** Sustained rate: tokens added per second (may be fractional, e.g. 0.5). */
  perSecond: number;
  /** Bucket size: how many requests may come at once after a quiet spell. */
  burst: number;
};

export type Take =
  | { allowed: true; remaining: number }
  /** `retryAfterSeconds`: whole seconds (≥ 1) until a token is there again; `first`: the first refusal since the last success. */
  | { allowed: false; retryAfterSeconds: number; first: boolean };

type Bucket = { tokens: number; at: number; refused: boolean };

export type BucketStoreOptions = BucketLimit & {
  /** Upper bound on buckets held; beyond it the least recently used go (see `take`). */
  maxBuckets?: number;
  /** Milliseconds, monotonic. */
  now?: () => number;
};

export const DEFAULT_MAX_BUCKETS = 100_000;

/** Whole seconds until `deficit` tokens have been added at `perSecond`: at least 1 (Retry-After). */
export function retryAfterSeconds(deficit: number, perSecond: number): number {
  // A hair of tolerance: 1 - 0.9999999999 is float noise, not another second.
  return Math.max(1, Math.ceil(deficit / perSecond - 1e-9));
}

/**
 * Buckets by key (an API key id, a user id, an e-mail address…), all with the same limit.
 *
 * Memory is bounded two ways. A bucket untouched for `burst / perSecond` seconds has refilled
 * completely, so dropping it changes nothing: the map is kept in least-recently-used order
 * (a touch re-inserts the key) and such idle buckets are swept from its front as we go. If
 * more than `maxBuckets` keys are active at once anyway, the least recently used are dropped
 * although not yet full: that key starts again with a full bucket (memory wins over precision).
 */
export class BucketStore {
  readonly limit: BucketLimit;
  private readonly buckets = new Map<string, Bucket>();
  private readonly maxBuckets: number;
  private readonly now: () => number;
  private readonly fullAfterMs: number;

  constructor(options: BucketStoreOptions) {
    if (!(options.perSecond > 0) || !Number.isFinite(options.perSecond))
      throw new RangeError('perSecond must be a positive number');
    if (!(options.burst >= 1) || !Number.isFinite(options.burst)) throw new RangeError('burst must be at least 1');
    this.limit = { perSecond: options.perSecond, burst: options.burst };
    this.maxBuckets = options.maxBuckets ?? DEFAULT_MAX_BUCKETS;
    this.now = options.now ?? (() => performance.now());
    this.fullAfterMs = (options.burst / options.perSecond) * 1000;
  }

  get size(): number {
    return this.buckets.size;
  }

  /** Takes one token from `key`'s bucket, or says how long until there is one. */
  take(key: string): Take {
    const now = this.now();
    const bucket = this.touch(key, now);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      bucket.refused = false;
      return { allowed: true, remaining: Math.floor(bucket.tokens) };
    }
    const first = !bucket.refused;
    bucket.refused = true;
    return { allowed: false, retryAfterSeconds: retryAfterSeconds(1 - bucket.tokens, this.limit.perSecond), first };
  }

  /** Gives back a token taken for something that turned out not to count (never above `burst`). */
  refund(key: string): void {
    const bucket = this.buckets.get(key);
    if (bucket) bucket.tokens = Math.min(this.limit.burst, bucket.tokens + 1);
  }

  /** Tokens `key` has now (a fresh key: `burst`); for tests and diagnostics. */
  peek(key: string): number {
    const bucket = this.buckets.get(key);
    if (!bucket) return this.limit.burst;
    return Math.min(this.limit.burst, bucket.tokens + ((this.now() - bucket.at) / 1000) * this.limit.perSecond);
  }

  // The bucket of `key` refilled to `now`, moved to the most recently used end; sweeps idle ones.
  private touch(key: string, now: number): Bucket {
    let bucket = this.buckets.get(key);
    if (bucket) {
      this.buckets.delete(key);
      const elapsed = Math.max(0, now - bucket.at) / 1000;
      bucket.tokens = Math.min(this.limit.burst, bucket.tokens + elapsed * this.limit.perSecond);
      bucket.at = now;
    } else {
      bucket = { tokens: this.limit.burst, at: now, refused: false };
    }
    this.sweep(now);
    this.buckets.set(key, bucket);
    return bucket;
  }

  private sweep(now: number): void {
    // Oldest first: the first one not yet idle ends the sweep, everything after it is younger.
    for (const [key, b] of this.buckets) {
      if (now - b.at < this.fullAfterMs && this.buckets.size < this.maxBuckets) break;
      this.buckets.delete(key);
    }
  }
}
