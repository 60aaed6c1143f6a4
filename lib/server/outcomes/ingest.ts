import 'server-only';
import type { PoolClient } from 'pg';
import { pool } from '../db/db';
import type { Actor } from '@/lib/auth/actor';
import { authorize } from '@/lib/auth/permissions';
import { classifyRecord } from '@/lib/outcomes/classify';
import { outcomeContent } from '@/lib/outcomes/content';
import type { Classification, Outcome, OutcomeBatch } from '@/lib/outcomes/schemas';
import { fail, ok, type FieldError, type Result } from '@/lib/result';
import { keyedHash, reused, toClassification, toRow, type IngestResponse } from './rows';
import { BEGIN, COMMIT, ROLLBACK, preparedRows, rows as run } from '../db/kysely';
import { insertOutcomeRows, selectStoredOutcomes, selectTrustedServers, type IngestRow } from './sql';
import { lockOperations, operationLockKeys, resolveByLaterRecords } from './resolution-sql';
import { enqueueCallRefused } from '../guards/sql';
import { isGuardRefusal } from '@/lib/guards/decide';

/**
 * Stores a batch whole or not at all (docs/api.md, "Outcome records"), idempotent per API key and
 * eventId: the same content again is a duplicate answered with the stored record, other content
 * under a known eventId is 422 and stores nothing.
 */
export async function ingestOutcomes(client: Actor, batch: OutcomeBatch): Promise<Result<IngestResponse>> {
  if (!authorize(client, 'outcomes.write')) return fail('forbidden');
  const { records } = batch;

  const keyOrg = client.organization;
  const foreign: FieldError[] =
    keyOrg === null
      ? []
      : records.flatMap((r, i) =>
          r.organization === keyOrg
            ? []
            : [
                {
                  path: `records.${i}.organization`,
                  message: `this API key may only write records of the organization "${keyOrg}"`,
                },
              ],
        );
  if (foreign.length)
    return fail('forbidden', `${foreign[0].path}: ${foreign[0].message}; nothing was stored.`, foreign);

  // The first occurrence of each eventId is stored; later ones must repeat it exactly.
  const hashes = records.map((r) => keyedHash('outcome-content', outcomeContent(r)));
  const firstAt = new Map<string, number>();
  const clashes: string[] = [];
  records.forEach((r, i) => {
    const first = firstAt.get(r.eventId);
    if (first === undefined) firstAt.set(r.eventId, i);
    else if (hashes[first] !== hashes[i]) clashes.push(`records.${i}.eventId`);
  });
  if (clashes.length) return reused(clashes);

  const unique = [...firstAt.values()];
  // The hot path runs on one connection of the pool (lib/server/db/db.ts), its statements in
  // sql/outcomes.ts: four short ones, no ORM round trips. Everything else about records reads
  // through Prisma.
  const conn = await pool().connect();
  let broken: Error | undefined;
  try {
    const stored = await storeUnique(conn, client.keyId, records, hashes, unique, false);
    if (stored instanceof Set) return reused([...stored]);
    let accepted = 0;
    const out = records.map((r, i) => {
      const s = stored.get(r.eventId)!;
      if (s.inserted && firstAt.get(r.eventId) === i) accepted++;
      return { eventId: r.eventId, id: s.id, classification: s.classification };
    });
    return ok({ accepted, duplicates: records.length - accepted, records: out });
  } catch (err) {
    broken = err as Error;
    throw err;
  } finally {
    // A connection that failed mid-transaction is discarded, never handed to the next request.
    conn.release(broken);
  }
}

/**
 * Stores records, each one already checked (organization, no clash within them), inside the
 * transaction the caller holds on `conn` (lib/server/guards/: the caller's queued records and a
 * guard's refusal, with its decision). Answers what is stored under each eventId, or the paths
 * (`records.N.eventId`) of those stored before with other content: then the caller rolls back.
 */
export async function ingestInTransaction(
  conn: PoolClient,
  apiKeyId: string,
  records: Outcome[],
): Promise<Stored | Set<string>> {
  const hashes = records.map((r) => keyedHash('outcome-content', outcomeContent(r)));
  const firstAt = new Map<string, number>();
  records.forEach((r, i) => firstAt.has(r.eventId) || firstAt.set(r.eventId, i));
  return storeUnique(conn, apiKeyId, records, hashes, [...firstAt.values()], true);
}

/** Classifies and stores the records at `unique`; answers what is stored, or the clashing records' paths. */
async function storeUnique(
  conn: PoolClient,
  apiKeyId: string,
  records: Outcome[],
  hashes: string[],
  unique: number[],
  inTransaction: boolean,
): Promise<Stored | Set<string>> {
  const trusted = await trustedAmong(
    conn,
    unique.map((i) => records[i].server),
  );
  const classified = new Map<string, Classification>();
  const rows = unique.map((i) => {
    const isTrusted = trusted.has(records[i].server);
    const c = classifyRecord(records[i], isTrusted);
    classified.set(records[i].eventId, c);
    return toRow(records[i], hashes[i], c, isTrusted);
  });
  rows.forEach((row, ord) => (row.ord = ord));
  const stored = await storeRows(conn, apiKeyId, rows, classified, inTransaction);
  if (stored instanceof Set)
    return new Set(unique.filter((i) => stored.has(records[i].eventId)).map((i) => `records.${i}.eventId`));
  return stored;
}

async function trustedAmong(conn: PoolClient, servers: string[]): Promise<Set<string>> {
  const rows = await run(selectTrustedServers([...new Set(servers)]), conn);
  return new Set(rows.map((r) => r.name));
}

export type Stored = Map<string, { id: string; inserted: boolean; classification: Classification }>;

/** Inserts all or nothing; returns the event ids stored before with other content (rolled back) or what is stored. */
async function storeRows(
  conn: PoolClient,
  apiKeyId: string,
  rows: IngestRow[],
  classified: Map<string, Classification>,
  inTransaction: boolean,
): Promise<Stored | Set<string>> {
  // One row is one atomic statement with nothing to undo if it clashes: no transaction needed
  // (two round trips fewer for the commonest post). On any error the caller discards the
  // connection, which rolls a transaction back: no ROLLBACK queued behind a stuck statement.
  // A record that may settle an unknown, or be settled (it has a key and a digest), is resolved
  // in the same transaction, under its operation's lock (sql/resolution.ts), which the insert
  // takes before its first row.
  const operations = operationLockKeys(rows);
  // A guard's refusal, whoever decided it (the console's check, or a gateway's or wrapper's read
  // guards), is sent as a `call.refused` event in the transaction that stores it.
  const refusals = rows.filter((r) => isGuardRefusal(classified.get(r.event_id)!));
  // Inside the caller's transaction, the caller begins, commits and rolls back.
  const transaction = !inTransaction && (rows.length > 1 || operations.length > 0 || refusals.length > 0);
  if (transaction) await run(BEGIN, conn);
  const locks = lockOperations(operations);
  const stored: Stored = new Map();
  let pending = rows;
  // A row that conflicted can be gone by the time it is read (the retention purge deleted it):
  // then it is simply inserted again, on the next round.
  for (let round = 1; pending.length; round++) {
    if (round > 3) throw new Error('ingest: conflicting rows kept disappearing; giving up');
    const inserted = await preparedRows('outcomes_insert', insertOutcomeRows(apiKeyId, pending, locks), conn);
    for (const r of inserted)
      stored.set(r.event_id, { id: r.id, inserted: true, classification: classified.get(r.event_id)! });
    const conflicting = pending.filter((r) => !stored.has(r.event_id));
    if (!conflicting.length) break;
    // Rows that were there already (read committed: this statement sees a concurrent commit):
    // a replay when the content matches, and answered as first stored.
    const existing = await run(
      selectStoredOutcomes(
        apiKeyId,
        conflicting.map((r) => r.event_id),
      ),
      conn,
    );
    const hashOf = new Map(conflicting.map((r) => [r.event_id, r.content_hash]));
    const clashing = new Set(existing.filter((e) => e.content_hash !== hashOf.get(e.event_id)).map((e) => e.event_id));
    if (clashing.size) {
      if (transaction) await run(ROLLBACK, conn);
      return clashing;
    }
    for (const e of existing)
      stored.set(e.event_id, { id: e.id, inserted: false, classification: toClassification(e) });
    pending = conflicting.filter((r) => !stored.has(r.event_id));
  }
  for (const r of refusals) {
    const s = stored.get(r.event_id)!;
    if (!s.inserted) continue;
    const { category } = s.classification;
    await run(
      enqueueCallRefused({
        category,
        server: String(r.server),
        tool: String(r.tool_name),
        requestRef: String(r.request_ref),
        recordId: s.id,
      }),
      conn,
    );
  }
  if (operations.length) {
    const fresh = [...stored.values()].filter((s) => s.inserted).map((s) => s.id);
    if (fresh.length) await preparedRows('outcomes_resolve', resolveByLaterRecords(fresh), conn);
  }
  if (transaction) await run(COMMIT, conn);
  return stored;
}
