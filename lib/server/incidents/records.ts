import 'server-only';
import { replicaSafe } from '../db/replica';
import { db } from '../db/db';
import { rows as run } from '../db/kysely';
import { selectEventIdRequestRefs, selectFindingInputs, selectIncidentOutcomes } from '../outcomes/sql';
import { readableOrganization, readScope, settlersOf, toView, type OutcomeView } from '../outcomes/view';
import { toClassification } from '../outcomes/rows';
import type { IncidentRecord } from '@/lib/incidents/types';
import { organizationOf, type Actor } from '@/lib/auth/actor';
import type { ToolAnnotations } from '@/lib/outcomes/schemas';
import { fail, ok, type Result } from '@/lib/result';

// The outcome records of incidents: the records under some request references, as the incident
// page shows them and as findings read them, and the reference a search term points at.

/**
 * Every record of some request references, oldest first, with its receipt order (for "later").
 * On the pool: the incident page, its API and the list's findings all start here.
 */
export const listIncidentOutcomes = replicaSafe(async function listIncidentOutcomes(
  reader: Actor,
  requestRef: string | string[],
  max: number = 5_000,
): Promise<Result<(OutcomeView & { seq: number })[]>> {
  const scope = readableOrganization(reader);
  if (!scope) return fail('forbidden');
  const refs = typeof requestRef === 'string' ? [requestRef] : requestRef;
  const rows = await run(selectIncidentOutcomes(refs, scope.organization, max));
  const settlers = await settlersOf(rows);
  return ok(
    rows.map(({ receivedSeq, checkNote, checkWho, ...r }) => ({
      ...toView({ ...r, stateCheck: checkWho === null ? null : { note: checkNote!, who: checkWho } }, settlers),
      seq: Number(receivedSeq),
    })),
  );
});

/** A record as findings read it (selectFindingInputs): an IncidentRecord, and whether its annotations were believed. */
export type FindingInput = IncidentRecord &
  Pick<OutcomeView, 'grantId' | 'annotationsTrusted' | 'agent'> & {
    tool: { name: string; annotations: ToolAnnotations | null };
  };

/**
 * The records of some request references as findings read them: the same records, order and cap
 * as listIncidentOutcomes, without what only the incident page shows. On the pool, like it.
 */
export const listFindingInputs = replicaSafe(async function listFindingInputs(
  reader: Actor,
  refs: string[],
  max: number,
): Promise<Result<FindingInput[]>> {
  const scope = readableOrganization(reader);
  if (!scope) return fail('forbidden');
  if (!refs.length) return ok([]);
  const rows = await run(selectFindingInputs(refs, scope.organization, max));
  return ok(
    rows.map((r) => ({
      id: r.id,
      occurredAt: r.occurredAt,
      seq: Number(r.receivedSeq),
      requestRef: r.requestRef,
      idempotencyKey: r.idempotencyKey,
      attempt: r.attempt,
      organization: r.organization,
      principal: r.principal,
      agent: r.agent,
      server: r.server,
      tool: { name: r.toolName, annotations: (r.toolAnnotations as ToolAnnotations | null) ?? null },
      grantId: r.grantId,
      argsDigest: r.argsDigest,
      annotationsTrusted: r.annotationsTrusted,
      classification: toClassification(r),
    })),
  );
});

/** The request reference a support person's search term points at: a reference, key, event or grant id. */
export const findOutcomeRequestRef = replicaSafe(async function findOutcomeRequestRef(
  reader: Actor,
  term: string,
): Promise<string | null> {
  const scope = readScope(reader);
  if (!scope) return null;
  // One indexed lookup at a time, most likely first: an OR across columns would scan the table.
  const fields = ['requestRef', 'idempotencyKey', 'grantId'] as const;
  for (const field of fields) {
    const hit = await db.outcomeRecord.findFirst({
      where: { AND: [scope, { [field]: term }] },
      select: { requestRef: true },
    });
    if (hit) return hit.requestRef;
  }
  // Event ids through their claims (nothing indexes outcome_records.event_id alone).
  const [byEvent] = await run(selectEventIdRequestRefs(term, organizationOf(reader), 1));
  return byEvent?.request_ref ?? null;
});
