import 'server-only';
import { AsyncLocalStorage } from 'node:async_hooks';
import { pool, readTarget, replicaPool } from './db';
import { first } from './kysely';
import { selectPrimaryLsn, selectReplayPosition } from './replica-sql';
import { isDatabaseUnavailable } from './unavailable';
import { authorize } from '@/lib/auth/permissions';
import type { Actor } from '@/lib/auth/actor';
import { fail, ok, type Result } from '@/lib/result';
import { config } from '@/lib/config';

// Reads from the streaming replica (DATABASE_REPLICA_URL), in one mechanism: a data function that
// only reads declares itself with replicaSafe(); while it runs, `db` and db/kysely.ts's `rows` use
// the replica (db.ts readTarget). Everything else — every write, every transaction and the reads
// inside it — stays on the primary. A safe read still goes to the primary when
//   - the person wrote within the last few seconds (read-your-writes: a cookie, below);
//   - the replica is down, not a standby, or lags past DATABASE_REPLICA_MAX_LAG_MS (checked at
//     most every DATABASE_REPLICA_CHECK_MS per process, the answer cached in between);
//   - a query on the replica fails for want of it: the read runs again on the primary.

export const maxLagMs = () => config().DATABASE_REPLICA_MAX_LAG_MS;
const checkEveryMs = () => config().DATABASE_REPLICA_CHECK_MS;
// A lag measured at most checkEveryMs ago was at most maxLagMs; so a replica in use holds every
// commit older than their sum. One more second covers clocks of instances that differ slightly.
const CLOCK_SKEW_MS = 1_000;
export const ownWriteWindowMs = () => maxLagMs() + checkEveryMs() + CLOCK_SKEW_MS;

// ── The replica's state ────────────────────────────────────────────────────────────────────

export type ReplicaState = {
  usable: boolean;
  /** How far behind the primary it was when checked (0: caught up), null when unknown. */
  lagMs: number | null;
  /** Why reads do not use it, when they do not. */
  reason: string | null;
  checkedAt: Date;
};

const holder = globalThis as unknown as {
  countersignReplicaState?: ReplicaState;
  countersignReplicaCheck?: Promise<ReplicaState>;
};

const lsn = (text: string) => {
  const [hi, lo] = text.split('/');
  return (BigInt(`0x${hi}`) << 32n) | BigInt(`0x${lo}`);
};

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    p.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}

/**
 * The primary's write position first, then the replica's replay position: caught up when the
 * replica has replayed up to it. Otherwise the lag is the time since the last transaction it
 * replayed committed, an upper bound (every commit before that one is there).
 */
async function measure(): Promise<ReplicaState> {
  const replica = replicaPool()!;
  const checkedAt = new Date();
  const down = (reason: string): ReplicaState => ({ usable: false, lagMs: null, reason, checkedAt });
  let primaryLsn: string;
  try {
    primaryLsn = (await withTimeout(first(selectPrimaryLsn(), pool()), 2_000))!.lsn;
  } catch (err) {
    return down(`the primary did not answer the lag check (${(err as Error).message})`);
  }
  let position: { standby: boolean; replayed: string | null; since_ms: number | null };
  try {
    position = (await withTimeout(first(selectReplayPosition(), replica), 2_000))!;
  } catch (err) {
    return down(`the replica did not answer (${(err as Error).message})`);
  }
  if (!position.standby) return down('it is not a standby (pg_is_in_recovery() is false)');
  if (position.replayed !== null && lsn(position.replayed) >= lsn(primaryLsn))
    return { usable: true, lagMs: 0, reason: null, checkedAt };
  if (position.since_ms === null) return down('it has replayed no transaction yet');
  const lagMs = Math.max(0, Math.round(position.since_ms));
  return lagMs > maxLagMs()
    ? {
        usable: false,
        lagMs,
        reason: `it lags ${lagMs} ms, past DATABASE_REPLICA_MAX_LAG_MS (${maxLagMs()} ms)`,
        checkedAt,
      }
    : { usable: true, lagMs, reason: null, checkedAt };
}

/** The replica's state, measured at most every DATABASE_REPLICA_CHECK_MS; null when none is configured. */
export async function replicaState(): Promise<ReplicaState | null> {
  if (!replicaPool()) return null;
  const known = holder.countersignReplicaState;
  if (known && Date.now() - known.checkedAt.getTime() < checkEveryMs()) return known;
  holder.countersignReplicaCheck ??= measure().then((state) => {
    holder.countersignReplicaState = state;
    holder.countersignReplicaCheck = undefined;
    return state;
  });
  return holder.countersignReplicaCheck;
}

/** A read on the replica failed for want of it: no reads go there until the next check. */
function markDown(err: unknown) {
  const message = err instanceof Error ? err.message : String(err);
  holder.countersignReplicaState = {
    usable: false,
    lagMs: null,
    reason: `a read failed (${message})`,
    checkedAt: new Date(),
  };
}

/** Forgets the measured state (tests that change the replica between reads). */
export function forgetReplicaState() {
  holder.countersignReplicaState = undefined;
}

// ── Read-your-writes ───────────────────────────────────────────────────────────────────────

// The time of the person's last own write, in a cookie: the browser carries it to whichever
// instance serves the next request. It is a plain timestamp, deliberately unsigned: it can only
// send its holder's reads to the primary (never away from it), and a value from the future is
// ignored, so a forged one buys no more than a real write would.
export const OWN_WRITE_COOKIE = 'countersign-wrote';

const ownWrite = new AsyncLocalStorage<number>();

/** Runs `fn` as after an own write at `at` (ms since the epoch), for callers outside a Next request. */
export function afterOwnWrite<T>(at: number, fn: () => T): T {
  return ownWrite.run(at, fn);
}

async function cookieStore() {
  const { cookies } = await import('next/headers');
  try {
    return await cookies();
  } catch (err) {
    // Outside a request (scripts, tests): no person, no cookie. Anything else (Next's signal that
    // a page is dynamic) is Next's to handle.
    if (err instanceof Error && err.message.includes('outside a request scope')) return null;
    throw err;
  }
}

async function wroteRecently(): Promise<boolean> {
  let at = ownWrite.getStore();
  if (at === undefined) {
    const raw = (await cookieStore())?.get(OWN_WRITE_COOKIE)?.value;
    at = raw && /^\d{1,15}$/.test(raw) ? Number(raw) : undefined;
  }
  if (at === undefined) return false;
  const age = Date.now() - at;
  return age >= -CLOCK_SKEW_MS && age < ownWriteWindowMs();
}

/**
 * Called where a person's change succeeded (server actions, cookie-authenticated API writes): for
 * the next few seconds their reads go to the primary, on every instance.
 */
export async function noteOwnWrite(): Promise<void> {
  if (!config().DATABASE_REPLICA_URL) return;
  const store = await cookieStore();
  store?.set(OWN_WRITE_COOKIE, String(Date.now()), {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    maxAge: Math.ceil(ownWriteWindowMs() / 1000) + 1,
  });
}

// ── The declaration ────────────────────────────────────────────────────────────────────────

/** Runs `fn` with every replica-safe read inside it on the primary (API-key callers: their reads follow their writes). */
export function readsOnPrimary<T>(fn: () => T): T {
  return readTarget.run('primary', fn);
}

/**
 * Declares a data function a read the replica may serve. It must not write (a standby refuses,
 * as a bug should be refused); what it calls inherits the choice, made once at the outermost.
 */
export function replicaSafe<A extends unknown[], R>(fn: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args: A) => {
    if (readTarget.getStore()) return fn(...args);
    if (!replicaPool() || (await wroteRecently()) || !(await replicaState())?.usable)
      return readTarget.run('primary', () => fn(...args));
    try {
      return await readTarget.run('replica', () => fn(...args));
    } catch (err) {
      if (!isDatabaseUnavailable(err)) throw err;
      markDown(err);
      return readTarget.run('primary', () => fn(...args));
    }
  };
}

// ── For the admin page ─────────────────────────────────────────────────────────────────────

export type ReplicaStatus =
  { configured: false } | ({ configured: true; maxLagMs: number; ownWriteWindowMs: number } & ReplicaState);

export async function getReplicaStatus(viewer: Actor): Promise<Result<ReplicaStatus>> {
  if (!authorize(viewer, 'audit.read')) return fail('forbidden');
  const state = await replicaState();
  if (!state) return ok({ configured: false });
  return ok({ configured: true, maxLagMs: maxLagMs(), ownWriteWindowMs: ownWriteWindowMs(), ...state });
}
