import 'server-only';
import { db } from '../db/db';
import { rows as run } from '../db/kysely';
import { selectSettlers } from './sql';
import { Prisma } from '@/lib/generated/prisma/client';
import { authorize } from '@/lib/auth/permissions';
import { organizationOf, type Actor } from '@/lib/auth/actor';
import type { Classification, Observed, ToolAnnotations } from '@/lib/outcomes/schemas';
import { resolvedNextStep, type Resolution } from '@/lib/outcomes/resolution';
import { classificationSelect, toClassification } from './rows';

// How an outcome record is shown (OutcomeView) and who may read which: shared by the outcome
// reads (./read.ts) and the incident reads (lib/server/incidents/records.ts).

/** A record as shown: what the caller sent (free text masked), its classification and id. */
export type OutcomeView = {
  id: string;
  eventId: string;
  occurredAt: Date;
  durationMs: number | null;
  requestRef: string;
  idempotencyKey: string | null;
  attempt: number | null;
  organization: string;
  principal: string;
  agent: string | null;
  server: string;
  serverVersion: string | null;
  protocolVersion: string | null;
  tool: { name: string; annotations: ToolAnnotations | null };
  mcpRequestId: string | number | null;
  grantId: string | null;
  argsDigest: string | null;
  summary: string | null;
  observed: Observed;
  classification: Classification;
  /** Whether the tool's annotations were believed (its server was trusted) when classified. */
  annotationsTrusted: boolean;
  receivedAt: Date;
  /** The classifier version that derived `classification` (lib/outcomes/classify.ts CLASSIFIER_VERSION). */
  classifierVersion: number;
  /** What settled this unknown, or null (docs/design.md "Resolving an unknown"). */
  resolution: Resolution | null;
  /** A guard's refusal: the earlier record it points to, else null. */
  earlierRecordId: string | null;
};

// Never the session hash, the content hash or the posting key.
export const viewSelect = {
  id: true,
  eventId: true,
  occurredAt: true,
  durationMs: true,
  requestRef: true,
  idempotencyKey: true,
  attempt: true,
  organization: true,
  principal: true,
  agent: true,
  server: true,
  serverVersion: true,
  protocolVersion: true,
  toolName: true,
  toolAnnotations: true,
  mcpRequestId: true,
  grantId: true,
  argsDigest: true,
  summary: true,
  observed: true,
  annotationsTrusted: true,
  receivedAt: true,
  classifierVersion: true,
  resolvedAt: true,
  resolutionBy: true,
  resolutionVerdict: true,
  resolvedByRecordId: true,
  earlierRecordId: true,
  ...classificationSelect,
} satisfies Prisma.OutcomeRecordSelect;

// A row of viewSelect, from Prisma or from sql/outcomes.ts (the same fields; JSON columns as read).
type ViewRow = Omit<
  Prisma.OutcomeRecordGetPayload<{ select: typeof viewSelect }>,
  'toolAnnotations' | 'mcpRequestId' | 'observed'
> & {
  toolAnnotations: unknown;
  mcpRequestId: unknown;
  observed: unknown;
  /** The state check that resolved it, if one did (stateChecksOf). */
  stateCheck?: { note: string; who: string } | null;
};

/** Who settled what: the settling records' agents (else principals), by id. */
type Settlers = Map<string, string>;

export async function settlersOf(rows: Pick<ViewRow, 'resolvedByRecordId'>[]): Promise<Settlers> {
  const ids = [...new Set(rows.flatMap((r) => (r.resolvedByRecordId ? [r.resolvedByRecordId] : [])))];
  if (!ids.length) return new Map();
  const found = await run(selectSettlers(ids));
  return new Map(found.map((s) => [s.id, s.agent ?? s.principal]));
}

/**
 * The rows with the state checks that resolved them. Looked up by record id: outcome_records is
 * partitioned, so nothing may hold a foreign key to one record.
 */
export async function withStateChecks<T extends Pick<ViewRow, 'id' | 'resolutionBy'>>(
  rows: T[],
): Promise<(T & { stateCheck: { note: string; who: string } | null })[]> {
  const checked = rows.flatMap((r) => (r.resolutionBy === 'state_check' ? [r.id] : []));
  const checks = checked.length
    ? await db.outcomeStateCheck.findMany({
        where: { recordId: { in: checked } },
        select: { recordId: true, note: true, who: true },
      })
    : [];
  const byRecord = new Map(checks.map((c) => [c.recordId, { note: c.note, who: c.who }]));
  return rows.map((r) => ({ ...r, stateCheck: byRecord.get(r.id) ?? null }));
}

function toResolution(r: ViewRow, settlers: Settlers): Resolution | null {
  if (!r.resolvedAt || !r.resolutionBy || !r.resolutionVerdict) return null;
  if (r.resolutionBy === 'record') {
    const who = r.resolvedByRecordId ? settlers.get(r.resolvedByRecordId) : undefined;
    return {
      by: 'record',
      verdict: r.resolutionVerdict,
      recordId: r.resolvedByRecordId ?? undefined,
      at: r.resolvedAt,
      ...(who ? { who } : {}),
    };
  }
  return {
    by: 'state_check',
    verdict: r.resolutionVerdict,
    at: r.resolvedAt,
    ...(r.stateCheck ? { who: r.stateCheck.who, note: r.stateCheck.note } : {}),
  };
}

export function toView(r: ViewRow, settlers: Settlers = new Map()): OutcomeView {
  const resolution = toResolution(r, settlers);
  const classification = toClassification(r);
  return {
    id: r.id,
    eventId: r.eventId,
    occurredAt: r.occurredAt,
    durationMs: r.durationMs,
    requestRef: r.requestRef,
    idempotencyKey: r.idempotencyKey,
    attempt: r.attempt,
    organization: r.organization,
    principal: r.principal,
    agent: r.agent,
    server: r.server,
    serverVersion: r.serverVersion,
    protocolVersion: r.protocolVersion,
    tool: { name: r.toolName, annotations: (r.toolAnnotations as ToolAnnotations | null) ?? null },
    mcpRequestId: (r.mcpRequestId as string | number | null) ?? null,
    grantId: r.grantId,
    argsDigest: r.argsDigest,
    summary: r.summary,
    observed: r.observed as Observed,
    // A settled record's next step says what settled it, never "retry".
    classification: resolution ? { ...classification, nextStep: resolvedNextStep(resolution) } : classification,
    annotationsTrusted: r.annotationsTrusted,
    receivedAt: r.receivedAt,
    classifierVersion: r.classifierVersion,
    resolution,
    earlierRecordId: r.earlierRecordId,
  };
}

/** Which organization's records a reader may see (null: every one), or null when none at all. */
export function readableOrganization(reader: Actor): { organization: string | null } | null {
  return authorize(reader, 'outcomes.read') ? { organization: organizationOf(reader) } : null;
}

// What the reader may see, as a Prisma filter: null when nothing; an organization-limited key only its own.
export function readScope(reader: Actor): Prisma.OutcomeRecordWhereInput | null {
  const scope = readableOrganization(reader);
  if (!scope) return null;
  return scope.organization === null ? {} : { organization: scope.organization };
}
