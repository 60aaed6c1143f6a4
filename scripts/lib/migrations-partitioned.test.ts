import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { applyMigrations, defaultMigrationsDir, LOCK_FILE } from './migrations';
import { createScratchDatabase, type ScratchDatabase } from './prisma-wasm-adapter';
import { config } from '@/lib/config';
import { harness } from '@/testing/env';

// Migration 20261201160000_outcome_records_partitioned on a database that already holds records
// (the state of a console upgraded in place): every row kept, each in its month's partition,
// the indexes under their names, the sequence going on, the rule on (api_key_id, event_id) kept.

const PARTITIONED = '20261201160000_outcome_records_partitioned';
const server = harness.adminDatabaseUrl() ?? config().TEST_DATABASE_URL;
let scratch: ScratchDatabase;
let before: string;
let through: string;

/** A migrations folder with those of `keep` (names compared with the partitioning migration's). */
function migrationsWhere(keep: (name: string) => boolean, prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  cpSync(path.join(defaultMigrationsDir, LOCK_FILE), path.join(dir, LOCK_FILE));
  for (const name of readdirSync(defaultMigrationsDir).filter((n) => keep(n) && /^\d/.test(n)))
    cpSync(path.join(defaultMigrationsDir, name), path.join(dir, name), { recursive: true });
  return dir;
}

beforeAll(async () => {
  scratch = await createScratchDatabase(server!, 'partmig');
  before = migrationsWhere((n) => n < PARTITIONED, 'migrations-before-');
  // Up to the partitioning itself: later migrations add indexes of their own.
  through = migrationsWhere((n) => n <= PARTITIONED, 'migrations-through-');
});
afterAll(async () => {
  await scratch?.drop();
  for (const dir of [before, through]) rmSync(dir, { recursive: true, force: true });
});

const KEY = '00000000-0000-4000-8000-00000000000a';
const insert = (eventId: string, receivedAt: string) => `
  INSERT INTO outcome_records (api_key_id, event_id, occurred_at, request_ref, organization, principal, server, tool_name,
    observed, boundary, delivery, category, retry, read_only, what_happened, next_step, classifier_version,
    annotations_trusted, content_hash, received_at)
  VALUES ('${KEY}', '${eventId}', '${receivedAt}', 'req-${eventId}', 'acme', 'p', 's', 't', '{}', 'none', 'completed', 'ok',
    'no', true, 'w', 'n', 1, true, 'h', '${receivedAt}') RETURNING id, received_seq`;

describe.skipIf(!server)('migrating an existing outcome_records to partitions (real PostgreSQL)', () => {
  it('keeps every row, in its month, with its id, sequence and indexes', async () => {
    await applyMigrations(scratch.url, { migrationsDir: before, warn: () => {} });
    const c = new pg.Client({ connectionString: scratch.url });
    await c.connect();
    try {
      const ids: Record<string, string> = {};
      for (const [e, at] of [
        ['a', '2026-03-15T10:00:00Z'],
        ['b', '2026-03-31T23:59:59.999Z'],
        ['c', '2026-04-01T00:00:00Z'],
        ['d', '2026-11-30T12:00:00Z'],
      ])
        ids[e] = (await c.query(insert(e, at))).rows[0].id;
      const { rows: idxBefore } = await c.query<{ name: string }>(
        `SELECT indexname AS name FROM pg_indexes WHERE tablename = 'outcome_records' ORDER BY 1`,
      );

      expect(await applyMigrations(scratch.url, { migrationsDir: through, warn: () => {} })).toEqual([PARTITIONED]);

      const { rows } = await c.query<{ event_id: string; id: string; part: string; received_seq: string }>(
        `SELECT event_id, id, tableoid::regclass::text AS part, received_seq FROM outcome_records ORDER BY event_id`,
      );
      expect(rows.map((r) => [r.event_id, r.id, r.part, r.received_seq])).toEqual([
        ['a', ids.a, 'outcome_records_p20260301', '1'],
        ['b', ids.b, 'outcome_records_p20260301', '2'],
        ['c', ids.c, 'outcome_records_p20260401', '3'],
        ['d', ids.d, 'outcome_records_p20261101', '4'],
      ]);
      // Every month from the oldest row on has a partition (empty ones too), and a default.
      const { rows: parts } = await c.query<{ name: string }>(`SELECT name FROM outcome_records_partitions()`);
      expect(parts.map((p) => p.name).slice(0, 10)).toEqual([
        'outcome_records_p20260301',
        'outcome_records_p20260401',
        'outcome_records_p20260501',
        'outcome_records_p20260601',
        'outcome_records_p20260701',
        'outcome_records_p20260801',
        'outcome_records_p20260901',
        'outcome_records_p20261001',
        'outcome_records_p20261101',
        'outcome_records_p20261201',
      ]);
      expect(parts.at(-1)!.name).toBe('outcome_records_default');

      const { rows: idxAfter } = await c.query<{ name: string }>(
        `SELECT indexname AS name FROM pg_indexes WHERE tablename = 'outcome_records' ORDER BY 1`,
      );
      const renamed = (n: string) =>
        n === 'outcome_records_api_key_id_event_id_key' ? 'outcome_records_api_key_id_event_id_idx' : n;
      expect(idxAfter.map((r) => r.name)).toEqual(idxBefore.map((r) => renamed(r.name)).sort());

      // The sequence goes on; the same (key, eventId) is not stored twice, in any month.
      const next = await c.query(insert('e', '2026-12-01T08:00:00Z'));
      expect(next.rows[0].received_seq).toBe('5');
      expect((await c.query(insert('a', '2026-12-01T09:00:00Z'))).rowCount).toBe(0);
      const { rows: count } = await c.query(`SELECT count(*)::int AS n FROM outcome_records`);
      expect(count[0].n).toBe(5);

      // The migrations after it apply on the partitioned table, and the rows stay.
      const later = readdirSync(defaultMigrationsDir).filter((n) => n > PARTITIONED && /^\d/.test(n));
      expect(await applyMigrations(scratch.url, { warn: () => {} })).toEqual(later);
      const { rows: kept } = await c.query(`SELECT count(*)::int AS n FROM outcome_records`);
      expect(kept[0].n).toBe(5);
      // 20261201192841_outcome_event_ids: each stored pair claimed by its record, and still one
      // per (key, eventId), in any month.
      const { rows: claims } = await c.query<{ event_id: string; held: boolean }>(
        `SELECT e.event_id, e.record_id = o.id AND e.received_at = o.received_at AS held
         FROM outcome_event_ids e JOIN outcome_records o USING (api_key_id, event_id) ORDER BY 1`,
      );
      expect(claims).toEqual(['a', 'b', 'c', 'd', 'e'].map((event_id) => ({ event_id, held: true })));
      expect((await c.query(insert('c', '2026-12-01T10:00:00Z'))).rowCount).toBe(0);
      expect((await c.query(insert('f', '2026-12-01T10:00:00Z'))).rowCount).toBe(1);
    } finally {
      await c.end();
    }
  });
});
