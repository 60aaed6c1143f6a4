import 'server-only';
import type { PoolClient } from 'pg';
import { pool } from '../db/db';
import { first, preparedRows, rows as run, BEGIN, COMMIT, ROLLBACK, sql } from '../db/kysely';
import { ingestInTransaction } from '../outcomes/ingest';
import { reused } from '../outcomes/rows';
import { budgetsFor } from '../policy/budgets';
import { selectGuardFacts, selectStoredRefusal, type GuardFactsRow, type GuardHistoryRow } from './sql';
import type { Actor } from '@/lib/auth/actor';
import { authorize } from '@/lib/auth/permissions';
import { believedHints } from '@/lib/approvals/policy';
import { DEFAULT_BUDGETS } from '@/lib/guards/budgets';
import { decideGuard, guardText, type GuardDecision, type GuardRecord } from '@/lib/guards/decide';
import type { GuardAnswer, GuardCheck } from '@/lib/guards/schemas';
import { outcomeContent } from '@/lib/outcomes/content';
import { isGuardCategory, type Category, type Delivery, type Outcome, type Retry } from '@/lib/outcomes/schemas';
import { fail, ok, type FieldError, type Result } from '@/lib/result';

/**
 * Whether a call may go to its server (docs/design.md "Guards at the point of execution"), decided
 * by the console from the records it holds, so any number of gateways decide alike. In one
 * transaction: the caller's records not posted yet are stored first (as POST /api/v1/outcomes
 * stores them), then the history is read and decided on, and a refusal is stored as a record with
 * its `call.refused` event. The same eventId again answers the refusal stored under it.
 *
 * Nothing is stored for an allowed or held call: its own record will follow. So concurrent checks
 * do not see each other's allowed calls; the budgets count the records the console has received.
 */
export async function checkGuard(actor: Actor, body: GuardCheck): Promise<Result<GuardAnswer>> {
  if (!authorize(actor, 'outcomes.write')) return fail('forbidden');
  const keyOrg = actor.organization;
  const records = body.records ?? [];
  const foreign: FieldError[] =
    keyOrg === null
      ? []
      : [
          ...(body.organization === keyOrg ? [] : ['organization']),
          ...records.flatMap((r, i) => (r.organization === keyOrg ? [] : [`records.${i}.organization`])),
        ].map((path) => ({ path, message: `this API key may only check and write for the organization "${keyOrg}"` }));
  if (foreign.length) {
    return fail('forbidden', `${foreign[0].path}: ${foreign[0].message}; nothing was stored.`, foreign);
  }
  // Records repeated within the body must repeat their content, as in a batch.
  const seen = new Map<string, string>();
  const clashes = records.flatMap((r, i) => {
    const content = outcomeContent(r);
    const before = seen.get(r.eventId);
    if (before === undefined) seen.set(r.eventId, content);
    return before !== undefined && before !== content ? [`records.${i}.eventId`] : [];
  });
  if (clashes.length) return reused(clashes);

  const conn = await pool().connect();
  let broken: Error | undefined;
  try {
    return await decideAndStore(conn, actor.keyId, body, records);
  } catch (err) {
    broken = err as Error;
    throw err;
  } finally {
    // A connection that failed mid-transaction is discarded, which rolls it back.
    conn.release(broken);
  }
}

// A transaction only where something is stored: the caller's records first, a refusal last. A call
// let through (the common case) costs one prepared statement and no transaction.
async function decideAndStore(
  conn: PoolClient,
  apiKeyId: string,
  body: GuardCheck,
  records: Outcome[],
): Promise<Result<GuardAnswer>> {
  let open = false;
  const end = async <T>(answer: Result<T>): Promise<Result<T>> => {
    if (open) await run(answer.ok ? COMMIT : ROLLBACK, conn);
    return answer;
  };
  if (records.length) {
    await run(BEGIN, conn);
    open = true;
    const stored = await ingestInTransaction(conn, apiKeyId, records);
    if (stored instanceof Set) return end(reused([...stored]));
  }
  const found = await preparedRows(
    'guard_facts',
    selectGuardFacts({
      apiKeyId,
      eventId: body.eventId,
      organization: body.organization,
      principal: body.principal,
      server: body.server,
      tool: body.tool.name,
      argsDigest: body.argsDigest,
      idempotencyKey: body.idempotencyKey ?? null,
      requestRef: body.requestRef,
      defaultCalls: DEFAULT_BUDGETS.calls,
    }),
    conn,
  );
  const facts = found[0];
  const replay = facts.stored && answered(facts.stored, body);
  if (replay) return end(ok(replay));

  const call = {
    requestRef: body.requestRef,
    principal: body.principal,
    server: body.server,
    toolName: body.tool.name,
    argsDigest: body.argsDigest,
    idempotencyKey: body.idempotencyKey ?? null,
    readOnly: believedHints(body.tool.annotations, facts.trusted).readOnly,
  };
  const now = new Date(facts.now);
  const history = found.flatMap((r) => (r.id === null ? [] : [toGuardRecord(r as GuardHistoryRow)]));
  const decision = decideGuard(history, call, budgetsFor(facts.rules, body.tool.name), now);
  if (decision.decision === 'allow') return end(ok(decision));
  if (decision.decision === 'hold') return end(ok({ ...decision, text: guardText(decision, body.tool.name) }));

  if (!open) {
    await run(BEGIN, conn);
    open = true;
  }
  const refusal: Outcome = {
    eventId: body.eventId,
    occurredAt: now.toISOString(),
    requestRef: body.requestRef,
    idempotencyKey: body.idempotencyKey,
    organization: body.organization,
    principal: body.principal,
    agent: body.agent,
    server: body.server,
    tool: body.tool,
    argsDigest: body.argsDigest,
    summary: body.summary,
    observed: { sent: false, clientBlock: decision.category },
    earlierRecordId: decision.recordId,
  };
  // A savepoint: an eventId already holding other content undoes only the refusal (the caller's
  // records stay), and a concurrent check that stored this eventId first is answered as it was.
  await run(sql`SAVEPOINT refusal`, conn);
  const stored = await ingestInTransaction(conn, apiKeyId, [refusal]);
  if (stored instanceof Set) {
    await run(sql`ROLLBACK TO SAVEPOINT refusal`, conn);
    const row = await first(selectStoredRefusal(apiKeyId, body.eventId), conn);
    const concurrent = row && answered(row, body, decision);
    return end(concurrent ? ok(concurrent) : reused(['eventId']));
  }
  // Its `call.refused` event is enqueued with it (ingest).
  const recordId = stored.get(body.eventId)!.id;
  return end(
    ok({
      ...decision,
      text: guardText(decision, body.tool.name),
      record: { id: recordId, eventId: body.eventId },
    }),
  );
}

/** The refusal stored under this eventId by an earlier check, answered again; null when that record is not one. */
function answered(row: StoredRow, body: GuardCheck, fresh?: GuardDecision): GuardAnswer | null {
  if (row.delivery !== 'never_sent' || !isGuardCategory(row.category)) return null;
  const decision = {
    decision: 'refuse' as const,
    category: row.category,
    retry: row.retry as Retry,
    ...(row.earlier_record_id ? { recordId: row.earlier_record_id } : {}),
    // How long is left is read afresh: the stored refusal does not keep it.
    ...(fresh?.decision === 'refuse' && fresh.category === row.category && fresh.retryAfterMs !== undefined
      ? { retryAfterMs: fresh.retryAfterMs }
      : {}),
  };
  return { ...decision, text: guardText(decision, body.tool.name), record: { id: row.id, eventId: body.eventId } };
}

type StoredRow = NonNullable<GuardFactsRow['stored']>;

const toGuardRecord = (r: GuardHistoryRow): GuardRecord => ({
  id: r.id,
  requestRef: r.request_ref,
  principal: r.principal,
  server: r.server,
  toolName: r.tool_name,
  argsDigest: r.args_digest,
  idempotencyKey: r.idempotency_key,
  taskId: r.task_id,
  delivery: r.delivery as Delivery,
  category: r.category as Category,
  retry: r.retry as Retry,
  readOnly: r.read_only,
  resolutionBy: r.resolution_by,
  resolutionVerdict: r.resolution_verdict,
  receivedAt: new Date(r.received_at),
  receivedSeq: Number(r.received_seq),
});
