// Every PostgreSQL advisory lock Countersign takes, named once (for whoever reads pg_locks, and so
// that no two uses pick the same key). No connection here, so anything may import it (scripts too).
//
// A single 64-bit key shows in pg_locks as classid = its high 32 bits, objid = its low 32 bits,
// objsubid = 1; a two-key lock as classid = the first key, objid = the second, objsubid = 2. The
// constant keys are a short ASCII name (up to eight letters) read as a big-endian integer.
//
// Several are taken by SQL functions in prisma/migrations, with the value written there as a
// literal: lib/server/db/locks.test.ts checks that the migrated database's functions use these.

/**
 * The audit chain, "counter": audit_append (through it redeem_grants) holds it until commit, so
 * appends serialize and the chain never forks. Transaction-level.
 */
export const AUDIT_CHAIN_LOCK = 0x636f756e746572n;

/**
 * The webhook endpoints, "webhooks": webhook_enqueue holds it shared while it fans an event out to
 * the endpoints, the endpoints' delete trigger exclusive. Transaction-level.
 */
export const WEBHOOK_ENDPOINTS_LOCK = 0x776562686f6f6b73n;

/** Creating outcome_records partitions, "partitio": outcome_records_ensure_partitions, one caller at a time. */
export const OUTCOME_PARTITIONS_LOCK = 0x706172746974696fn;

/** The retention purge, "retentio": one at a time across every instance and the CLI. Session-level. */
export const RETENTION_PURGE_LOCK = 0x726574656e74696fn;

/** The retention clean-up of purged records' claims (cleanUpPurged), "evtsweep". Session-level. */
export const RETENTION_CLEAN_UP_LOCK = 0x6576747377656570n;

/**
 * The class ("appr") of the two-key locks that mark an approval request's Idempotency-Key in
 * flight: (class, hashtext(API key id + "\n" + Idempotency-Key)). Transaction-level.
 */
export const APPROVAL_IDEMPOTENCY_LOCK_CLASS = 0x61707072;

/**
 * The seed of hashtextextended(key, seed) for the operations' locks taken while outcome records
 * are stored (lib/server/outcomes/resolution-sql.ts, lockOperations): one lock per operation key.
 */
export const OPERATION_LOCK_SEED = 13;

/**
 * Prisma's own migration lock (its schema engine takes pg_advisory_lock(72707369)): the deploy in
 * scripts/lib/migrations.ts takes the same, so it and `prisma migrate deploy` exclude each other.
 * Session-level.
 */
export const PRISMA_MIGRATE_LOCK = 72707369;
