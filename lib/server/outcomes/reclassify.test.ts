// `outcomes:reclassify` against real PostgreSQL: re-derives classifications from stored
// observations, batched and resumable, touching only the classification columns.
// RECLASSIFY_ROWS sets the size (default 30,000; the figure in the report was taken at 100,000).
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { db } from '../db/db';
import { reclassifyOutcomes, needsReclassify, describeReclassify } from './reclassify';
import { cli } from '@/lib/auth/actor';
import { CLASSIFIER_VERSION } from '@/lib/outcomes/classify';
import { value } from '@/testing/factories';
import { harness } from '@/testing/env';

const N = harness.reclassifyRows();
const BATCH = 2_000;

// Every third record observed a completed call but is stored as an unknown timeout by "version 0";
// the rest observed a timeout and are stored as such (only their version is old).
async function plant(n: number) {
  for (let from = 1; from <= n; from += 50_000) await plantRange(from, Math.min(n, from + 49_999));
}

// One API key for the planted records, as an agent's records have (and one lock: the uniqueness
// trigger locks per key).
const PLANTING_KEY = randomUUID();

async function plantRange(from: number, to: number) {
  await db.$executeRawUnsafe(`
    INSERT INTO outcome_records (api_key_id, event_id, occurred_at, request_ref, organization, principal, server,
      tool_name, observed, boundary, delivery, category, retry, read_only, what_happened, next_step,
      classifier_version, annotations_trusted, content_hash, summary, idempotency_key)
    SELECT '${PLANTING_KEY}'::uuid, 'evt-' || i, timestamptz '2026-11-01' + i * interval '1 second', 'req-' || (i / 10),
      'acme', 'user_' || (i % 97), 'billing-mcp', 'refund_payment',
      CASE WHEN i % 3 = 0 THEN '{"sent":true,"httpStatus":200,"result":{"isError":false,"outputValidation":"valid"}}'::jsonb
           ELSE '{"sent":true,"clientError":"timeout"}'::jsonb END,
      'client', 'unknown', 'timeout', 'after_state_check', false, 'old wording', 'old next step',
      0, false, md5(i::text), 'Refund ' || i, 'key-' || i
    FROM generate_series(${from}, ${to}) AS i`);
}

// Everything but the classification columns, as one order-independent digest (a sum of per-row
// hashes, without a statement timeout: a million rows take a while).
const others = async () =>
  db.$transaction(
    async (tx) => {
      await tx.$executeRawUnsafe('SET LOCAL statement_timeout = 0');
      const [r] = await tx.$queryRawUnsafe<{ h: string }[]>(`
        SELECT count(*) || ':' || sum(('x' || substr(md5(concat_ws('|', id, api_key_id, event_id, occurred_at,
          request_ref, organization, principal, server, tool_name, observed::text, summary, idempotency_key,
          annotations_trusted, content_hash, received_at, received_seq, resolved_at)), 1, 15))::bit(60)::bigint) AS h
        FROM outcome_records`);
      return r.h;
    },
    { timeout: 600_000 },
  );

describe('reclassifyOutcomes (real PostgreSQL)', () => {
  it(`re-derives ${N} records in batches, resumes, and touches nothing but the classification`, async () => {
    await plant(N);
    expect(await needsReclassify()).toBe(true);
    const before = await others();

    // Stopped after two batches: the position is in the database.
    const partial = value(await reclassifyOutcomes(cli, { batchSize: BATCH, maxBatches: 2 }));
    expect(partial).toMatchObject({ examined: 2 * BATCH, finished: false });
    const run = await db.reclassifyRun.findUniqueOrThrow({ where: { classifierVersion: CLASSIFIER_VERSION } });
    expect(run.examined).toBe(2 * BATCH);
    expect(run.finishedAt).toBeNull();

    const started = performance.now();
    const done = value(await reclassifyOutcomes(cli, { batchSize: BATCH }));
    const ms = performance.now() - started;
    console.log(`[reclassify] ${N} records (${N - 2 * BATCH} in this call): ${(ms / 1000).toFixed(1)} s`);
    console.log(describeReclassify(done));

    const completed = Math.floor(N / 3);
    expect(done).toMatchObject({ examined: N, finished: true, resumed: true });
    expect(done.changes['unknown/timeout → completed/ok']).toBe(completed);
    // The timeouts change only in wording (hand-written "old wording" is not the classifier's).
    expect(done.changes.wording).toBe(N - completed);
    expect(done.changed).toBe(N);
    expect(await others()).toBe(before);
    const counts = await db.outcomeRecord.groupBy({ by: ['delivery', 'category'], _count: true });
    expect(counts.map((c) => [c.delivery, c.category, c._count]).sort()).toEqual(
      [
        ['completed', 'ok', completed],
        ['unknown', 'timeout', N - completed],
      ].sort(),
    );
    expect(await db.outcomeRecord.count({ where: { classifierVersion: { not: CLASSIFIER_VERSION } } })).toBe(0);
    expect(await needsReclassify()).toBe(false);
    const audit = await db.auditEntry.findMany({ where: { action: 'outcomes.reclassify' } });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor: 'cli', targetId: String(CLASSIFIER_VERSION) });

    // Run again: already finished, nothing written.
    expect(value(await reclassifyOutcomes(cli))).toMatchObject({ finished: true, examined: N });
    expect(await db.auditEntry.count({ where: { action: 'outcomes.reclassify' } })).toBe(1);
  }, 600_000);

  it('only the system may run it', async () => {
    const { makeUser } = await import('@/testing/factories');
    expect(await reclassifyOutcomes(await makeUser('admin'))).toMatchObject({ ok: false, failure: 'forbidden' });
  });
});
