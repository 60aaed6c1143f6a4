// Shared by the tests of outcome_records' partitions (lib/server/outcomes/partitions.test.ts) and of
// the retention purge over them (lib/server/retention/partitions.test.ts): where records are, their
// event-id claims, and times of receipt set by hand.
import { db } from '@/lib/server/db/db';

/** The partitions holding a reference's records, by name. */
export const where = async (requestRef: string) =>
  (
    await db.$queryRaw<{ part: string }[]>`
      SELECT DISTINCT tableoid::regclass::text AS part FROM outcome_records WHERE request_ref = ${requestRef} ORDER BY 1`
  ).map((r) => r.part);

/** The records of these references with whether their event-id claim names them. */
export const claimsOf = (refs: string[]) =>
  db.$queryRaw<{ eventId: string; held: boolean }[]>`
    SELECT o.event_id AS "eventId", EXISTS (
      SELECT 1 FROM outcome_event_ids e WHERE e.api_key_id = o.api_key_id AND e.event_id = o.event_id
        AND e.record_id = o.id AND e.received_at = o.received_at) AS held
    FROM outcome_records o WHERE o.request_ref = ANY(${refs}::text[]) ORDER BY 1`;

/** Moves a reference's records to this time of receipt (and so into its partition). */
export const receivedAt = (requestRef: string, at: string) =>
  db.$executeRaw`UPDATE outcome_records SET received_at = ${at}::timestamptz WHERE request_ref = ${requestRef}`;

/** Until reset, rows default to received_at in `months` alternately, row by row (a batch can straddle). */
export async function alternateReceipt(months: string[]) {
  await db.$executeRawUnsafe(`CREATE SEQUENCE IF NOT EXISTS test_receipt_seq`);
  await db.$executeRawUnsafe(`CREATE OR REPLACE FUNCTION test_receipt() RETURNS timestamptz LANGUAGE sql VOLATILE AS $$
    SELECT (ARRAY[${months.map((m) => `'${m}'::timestamptz`).join(', ')}])[1 + nextval('test_receipt_seq') % ${months.length}] $$`);
  await db.$executeRawUnsafe(`ALTER TABLE outcome_records ALTER COLUMN received_at SET DEFAULT test_receipt()`);
}
/** Ends alternateReceipt: rows received now again. */
export const resetReceipt = () =>
  db.$executeRawUnsafe(`ALTER TABLE outcome_records ALTER COLUMN received_at SET DEFAULT CURRENT_TIMESTAMP`);
