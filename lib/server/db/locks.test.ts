import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pool } from './db';
import {
  APPROVAL_IDEMPOTENCY_LOCK_CLASS,
  AUDIT_CHAIN_LOCK,
  OPERATION_LOCK_SEED,
  OUTCOME_PARTITIONS_LOCK,
  PRISMA_MIGRATE_LOCK,
  RETENTION_CLEAN_UP_LOCK,
  RETENTION_PURGE_LOCK,
  WEBHOOK_ENDPOINTS_LOCK,
} from './locks';

const ascii = (key: bigint | number) => Buffer.from(BigInt(key).toString(16), 'hex').toString('latin1');

describe('advisory lock keys', () => {
  it('are the names written beside them', () => {
    expect(
      [
        AUDIT_CHAIN_LOCK,
        WEBHOOK_ENDPOINTS_LOCK,
        OUTCOME_PARTITIONS_LOCK,
        RETENTION_PURGE_LOCK,
        RETENTION_CLEAN_UP_LOCK,
        APPROVAL_IDEMPOTENCY_LOCK_CLASS,
      ].map(ascii),
    ).toEqual(['counter', 'webhooks', 'partitio', 'retentio', 'evtsweep', 'appr']);
    expect(OPERATION_LOCK_SEED).toBe(13);
  });

  it('are the keys the migrated database’s functions lock on', async () => {
    const { rows } = await pool().query<{ name: string; def: string }>(
      `SELECT p.proname AS name, pg_get_functiondef(p.oid) AS def FROM pg_proc p
       WHERE p.pronamespace = 'public'::regnamespace AND p.prokind = 'f' AND pg_get_functiondef(p.oid) ~ 'advisory'`,
    );
    const locks = rows
      .flatMap(({ name, def }) =>
        [...def.matchAll(/(pg_advisory_\w+)\(x'([0-9a-f]+)'::bigint\)/g)].map((m) => [name, m[1], BigInt(`0x${m[2]}`)]),
      )
      .sort(([a], [b]) => String(a).localeCompare(String(b)));
    // Every advisory lock of every function, each found by the pattern above (nothing left over).
    expect(rows.map((r) => (r.def.match(/pg_advisory_/g) ?? []).length).reduce((a, b) => a + b, 0)).toBe(locks.length);
    expect(locks).toEqual([
      ['audit_append', 'pg_advisory_xact_lock', AUDIT_CHAIN_LOCK],
      ['outcome_records_ensure_partitions', 'pg_advisory_xact_lock', OUTCOME_PARTITIONS_LOCK],
      ['webhook_endpoints_deleted', 'pg_advisory_xact_lock', WEBHOOK_ENDPOINTS_LOCK],
      ['webhook_enqueue', 'pg_advisory_xact_lock_shared', WEBHOOK_ENDPOINTS_LOCK],
      ['webhook_enqueue_data', 'pg_advisory_xact_lock_shared', WEBHOOK_ENDPOINTS_LOCK],
    ]);
  });

  it('the migration lock is the one Prisma’s schema engine takes', () => {
    // Resolved as scripts/lib/prisma-wasm-engine.ts finds the engine it runs.
    const glue = createRequire(import.meta.url).resolve('@prisma/schema-engine-wasm/schema_engine_bg');
    const engine = readFileSync(path.join(path.dirname(glue), 'schema_engine_bg.wasm')).toString('latin1');
    expect(engine).toContain(`pg_advisory_lock(${PRISMA_MIGRATE_LOCK})`);
  });
});
