// The one way to look inside a database error, whichever layer raised it; no connection here, so
// anything may import it (scripts included).
//
// The same failure reaches the code in three shapes:
//   - pg's DatabaseError (the pool, lib/server/<concept>/sql.ts): the SQLSTATE in `code`;
//   - Prisma's PrismaClientKnownRequestError: its own code in `code` (P2002 for a unique key, P2034
//     for a lost transaction, P2010/P2039 for a raw or other query that failed), the driver
//     adapter's error in meta.driverAdapterError, whose cause holds the SQLSTATE in `originalCode`
//     (and sometimes again in `code`) and the adapter's name for it in `kind`;
//   - any error wrapping another in `cause`.

/** The fields read on each error of a chain. */
export type ErrorLike = {
  code?: unknown;
  originalCode?: unknown;
  kind?: unknown;
  message?: unknown;
  cause?: unknown;
  meta?: { driverAdapterError?: unknown };
};

// Deeper than any real wrapping (Prisma's is three levels); a bound all the same.
const MAX_DEPTH = 5;

/**
 * Every error-like object in `err`'s chain: itself, then what it wraps (`cause`, then Prisma's
 * meta.driverAdapterError), depth first, each once.
 */
export function* errorChain(err: unknown): Generator<ErrorLike> {
  const seen = new Set<unknown>();
  function* visit(e: unknown, depth: number): Generator<ErrorLike> {
    if (!e || typeof e !== 'object' || depth > MAX_DEPTH || seen.has(e)) return;
    seen.add(e);
    const like = e as ErrorLike;
    yield like;
    yield* visit(like.cause, depth + 1);
    yield* visit(like.meta?.driverAdapterError, depth + 1);
  }
  yield* visit(err, 0);
}

/** Every code found in `err`'s chain: SQLSTATEs, Prisma's P-codes, socket errors (ECONNRESET…). */
export function* errorCodes(err: unknown): Generator<string> {
  for (const e of errorChain(err)) {
    if (typeof e.code === 'string') yield e.code;
    if (typeof e.originalCode === 'string') yield e.originalCode;
  }
}

/** True when any code in `err`'s chain is one of `codes`. */
export function hasErrorCode(err: unknown, ...codes: string[]): boolean {
  for (const code of errorCodes(err)) if (codes.includes(code)) return true;
  return false;
}

/** A unique key refused the row: SQLSTATE 23505, or Prisma's P2002. */
export const isUniqueViolation = (err: unknown) => hasErrorCode(err, '23505', 'P2002');

/** A CHECK constraint refused the row: SQLSTATE 23514. */
export const isCheckViolation = (err: unknown) => hasErrorCode(err, '23514');

/**
 * The transaction lost to a concurrent one and may be run again whole: SQLSTATE 40001, or Prisma's
 * P2034 (which Prisma also raises for a deadlock, see isDeadlock).
 */
export const isSerializationFailure = (err: unknown) => hasErrorCode(err, '40001', 'P2034');

/** PostgreSQL broke a deadlock by failing this transaction: SQLSTATE 40P01. */
export const isDeadlock = (err: unknown) => hasErrorCode(err, '40P01');

/** A lock asked for without waiting (NOWAIT, lock_timeout) was held by another: SQLSTATE 55P03. */
export const isLockNotAvailable = (err: unknown) => hasErrorCode(err, '55P03');

/** Prisma found no row to update or delete: P2025. */
export const isRecordNotFound = (err: unknown) => hasErrorCode(err, 'P2025');
