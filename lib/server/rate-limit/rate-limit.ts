import 'server-only';
import { BucketStore, type Take } from '@/lib/ratelimit/bucket';
import { config } from '@/lib/config';
import { loggable } from '@/lib/ratelimit/log';
import { createSharedLimits, type Kind, type SharedLimits } from './rate-limit-shared';

// ── The one rate-limit mechanism ────────────────────────────────────────────────────────────
// Token buckets (lib/ratelimit/bucket.ts). With REDIS_URL they live in Redis, shared by every
// instance behind a load balancer (rate-limit-shared.ts); callers use the async takeRequestShared
// and admitSignInShared. Without it, or while Redis cannot answer, they live here, in memory, per
// process: then each instance allows the full limit. Redis down never refuses or fails a request
// for that reason: this process's own buckets go on limiting (fail open to the local limit).
// Memory is bounded: idle buckets are dropped once full again, and at most DEFAULT_MAX_BUCKETS
// are kept per kind (lib/ratelimit/bucket.ts).

type Stores = { apiKey: BucketStore; user: BucketStore; signInEmail: BucketStore; signInAddress: BucketStore };

// On globalThis: route handlers and server actions are bundled apart and must share the buckets.
const holder = globalThis as unknown as {
  countersignRateLimits?: Stores;
  countersignSharedLimits?: { url: string; limits: SharedLimits } | null;
};

function stores(): Stores {
  if (!holder.countersignRateLimits) {
    const limits = config().rateLimits; // a bad value throws, naming the variable
    holder.countersignRateLimits = {
      apiKey: new BucketStore(limits.apiKey),
      user: new BucketStore(limits.user),
      signInEmail: new BucketStore(limits.signInEmail),
      signInAddress: new BucketStore(limits.signInAddress),
    };
  }
  return holder.countersignRateLimits;
}

/** Forgets every bucket and reads the configuration again (tests). */
export function resetRateLimits(): void {
  holder.countersignRateLimits = undefined;
  void holder.countersignSharedLimits?.limits.close();
  holder.countersignSharedLimits = undefined;
}

// The Redis limits when REDIS_URL is set (looked up at each call, so a test's new configuration takes effect).
function shared(): SharedLimits | null {
  const { REDIS_URL: url, REDIS_KEY_PREFIX: prefix, rateLimits } = config();
  if (!url) return null;
  if (holder.countersignSharedLimits?.url !== url) {
    void holder.countersignSharedLimits?.limits.close();
    holder.countersignSharedLimits = { url, limits: createSharedLimits({ url, prefix, config: rateLimits }) };
    stores(); // the fallback, and the configuration checked
  }
  return holder.countersignSharedLimits!.limits;
}

/** One take from the shared bucket, or this process's own while Redis cannot answer. */
async function takeFrom(kind: Kind, key: string): Promise<{ take: Take; local: boolean }> {
  const s = shared();
  const take = s ? await s.take(kind, key) : null;
  return take ? { take, local: false } : { take: stores()[kind].take(key), local: true };
}

export type Caller = { kind: 'apiKey'; keyId: string } | { kind: 'user'; userId: string };

/** One request of an API key or a person: allowed, or refused with whole seconds to wait. */
export function takeRequest(caller: Caller): Take {
  const result = caller.kind === 'apiKey' ? stores().apiKey.take(caller.keyId) : stores().user.take(caller.userId);
  // Once per spell of refusals, not per refused request: a flood would otherwise flood the log.
  if (!result.allowed && result.first) {
    const who = caller.kind === 'apiKey' ? `api_key:${caller.keyId}` : `user:${caller.userId}`;
    console.warn(
      `[rate-limit] ${who} is over its limit; refusing requests for now (retry after ${result.retryAfterSeconds} s)`,
    );
  }
  return result;
}

/** As takeRequest, through Redis when REDIS_URL is set: the API wrapper and server actions use it. */
export async function takeRequestShared(caller: Caller): Promise<Take> {
  if (!shared()) return takeRequest(caller);
  const { take: result } = await takeFrom(caller.kind, caller.kind === 'apiKey' ? caller.keyId : caller.userId);
  if (!result.allowed && result.first) {
    const who = caller.kind === 'apiKey' ? `api_key:${caller.keyId}` : `user:${caller.userId}`;
    console.warn(
      `[rate-limit] ${who} is over its limit; refusing requests for now (retry after ${result.retryAfterSeconds} s)`,
    );
  }
  return result;
}

// ── Sign-in attempts ────────────────────────────────────────────────────────────────────────

export type SignInAdmission =
  /** `refund()` when the attempt was not a failed guess after all (it succeeded, or the check could not run). */
  { admitted: true; refund: () => void } | { admitted: false; retryAfterSeconds: number };

/**
 * Brute-force guard for the password check: each attempt takes a token from the e-mail
 * address's bucket and the client address's; a successful one gives them back, so only failed
 * attempts count. Taken before the check (not after) so concurrent guesses cannot slip past.
 * The first refusal of a spell is logged. `email` is a validated address (signInSchema).
 */
export function admitSignIn(email: string, address: string | null): SignInAdmission {
  const s = stores();
  const byEmail = s.signInEmail.take(email);
  const byAddress = address ? s.signInAddress.take(address) : null;
  const refused = [byEmail, byAddress].filter((t): t is Extract<Take, { allowed: false }> => !!t && !t.allowed);
  if (refused.length) {
    // A refused attempt is not a guess: whatever one bucket gave is given back.
    if (byEmail.allowed) s.signInEmail.refund(email);
    if (byAddress?.allowed && address) s.signInAddress.refund(address);
    const retryAfterSeconds = Math.max(...refused.map((r) => r.retryAfterSeconds));
    // Once per spell of refusals of the e-mail or the address, not per refused attempt; the
    // address is the client's choice without a proxy in front, so logged made safe (log.ts).
    if (refused.some((r) => r.first)) {
      console.warn(
        `[auth] sign-in refused for ${email} from ${address === null ? 'an unknown address' : loggable(address)}: too many failed attempts (retry after ${retryAfterSeconds} s)`,
      );
    }
    return { admitted: false, retryAfterSeconds };
  }
  return {
    admitted: true,
    refund: () => {
      s.signInEmail.refund(email);
      if (address) s.signInAddress.refund(address);
    },
  };
}

/**
 * The client's address as the nearest hop saw it: the last `X-Forwarded-For` entry, which a
 * reverse proxy in front appends, or which Next.js fills from the socket when none was sent.
 * Without a proxy a client can send its own header and pick this value; the per-e-mail limit
 * holds regardless.
 */
export function clientAddress(headers: Headers): string | null {
  const forwarded = headers.get('x-forwarded-for');
  const last = forwarded
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .at(-1);
  // An address is at most 45 characters (IPv6 with an IPv4 tail); a longer value is forged, and
  // kept whole it would make every bucket key as large as a header.
  return (last ?? headers.get('x-real-ip')?.trim())?.slice(0, 64) || null;
}

/** As admitSignIn, through Redis when REDIS_URL is set (Auth.js's password check uses it). */
export async function admitSignInShared(email: string, address: string | null): Promise<SignInAdmission> {
  const s = shared();
  if (!s) return admitSignIn(email, address);
  const [byEmail, byAddress] = await Promise.all([
    takeFrom('signInEmail', email),
    address ? takeFrom('signInAddress', address) : null,
  ]);
  // A token is given back where it was taken: Redis, or this process.
  const refund = (kind: Kind, key: string, from: { local: boolean }) =>
    from.local ? stores()[kind].refund(key) : void s.refund(kind, key);
  const refused = [byEmail.take, byAddress?.take].filter(
    (t): t is Extract<Take, { allowed: false }> => !!t && !t.allowed,
  );
  if (refused.length) {
    if (byEmail.take.allowed) refund('signInEmail', email, byEmail);
    if (byAddress?.take.allowed && address) refund('signInAddress', address, byAddress);
    const retryAfterSeconds = Math.max(...refused.map((r) => r.retryAfterSeconds));
    if (refused.some((r) => r.first)) {
      console.warn(
        `[auth] sign-in refused for ${email} from ${address === null ? 'an unknown address' : loggable(address)}: too many failed attempts (retry after ${retryAfterSeconds} s)`,
      );
    }
    return { admitted: false, retryAfterSeconds };
  }
  return {
    admitted: true,
    refund: () => {
      refund('signInEmail', email, byEmail);
      if (address && byAddress) refund('signInAddress', address, byAddress);
    },
  };
}
