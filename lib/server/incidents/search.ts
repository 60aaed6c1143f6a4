import 'server-only';
import { z } from 'zod';
import { db } from '../db/db';
import { rows as run } from '../db/kysely';
import { selectEventIdRequestRefs } from '../outcomes/sql';
import { authorize } from '@/lib/auth/permissions';
import { organizationOf, type Actor } from '@/lib/auth/actor';
import { isUuid } from '@/lib/approvals/schemas';
import { storable } from '@/lib/outcomes/schemas';
import { summarizeIncidents, type IncidentSummary } from './policy';

export type IncidentMatchKind =
  'request reference' | 'idempotency key' | 'event id' | 'grant id' | 'approval id' | 'part of a request reference';

export type IncidentMatch = {
  requestRef: string;
  matchedBy: IncidentMatchKind[];
  /** Null for an incident known only from approval requests (no outcome record yet). */
  summary: IncidentSummary | null;
};

/** A partial reference needs this many characters: fewer would match half the table. */
export const PARTIAL_MIN = 3;
export const SEARCH_MAX = 50;

const term = storable(z.string().trim().min(1).max(255));

/** Which incident a search term points at, and by what (no summary yet). */
export type IncidentHit = Omit<IncidentMatch, 'summary'>;

/**
 * Every request reference a support person's search term points at: by request reference,
 * idempotency key (an operation's key is often shared by many incidents), event id, grant or
 * approval id, and, when none of those matches, by part of a reference. At most SEARCH_MAX, in
 * that order. The page opens an incident directly only when exactly one matches, and needs no
 * summary then (summarizeHits reads every record of each match).
 */
export async function matchIncidents(reader: Actor, raw: string): Promise<IncidentHit[]> {
  const parsed = term.safeParse(raw);
  if (!parsed.success) return [];
  const q = parsed.data;
  const org = organizationOf(reader);
  const outcomes = authorize(reader, 'outcomes.read') ? (org === null ? {} : { organization: org }) : null;
  const approvals = authorize(reader, 'approvals.read') ? (org === null ? {} : { organization: org }) : null;
  const id = isUuid(q) ? q.toLowerCase() : null;
  const none = Promise.resolve([] as string[]);

  // Each an indexed lookup; an OR across columns would scan the table.
  const refsOf = async (where: object) =>
    outcomes
      ? (
          await db.outcomeRecord.groupBy({
            by: ['requestRef'],
            where: { AND: [outcomes, where] },
            orderBy: { _max: { occurredAt: 'desc' } },
            take: SEARCH_MAX,
          })
        ).map((r) => r.requestRef)
      : [];
  const approvalRefsOf = async (where: object) =>
    approvals
      ? (
          await db.approvalRequest.findMany({
            where: { AND: [approvals, where] },
            select: { requestRef: true },
            orderBy: { createdAt: 'desc' },
            take: SEARCH_MAX,
          })
        ).map((r) => r.requestRef)
      : [];
  // outcome_records has no index on event_id alone (it is unique per API key: outcome_event_ids).
  const eventRefsOf = async () =>
    outcomes ? (await run(selectEventIdRequestRefs(q, org, SEARCH_MAX))).map((r) => r.request_ref) : [];

  // Independent lookups, at once (one after another they added up to most of the search's time);
  // taken in the order below, so matches and their reasons come out as before.
  const found: [IncidentMatchKind, Promise<string[]>[]][] = [
    ['request reference', [refsOf({ requestRef: q }), approvalRefsOf({ requestRef: q })]],
    ['idempotency key', [refsOf({ idempotencyKey: q }), approvalRefsOf({ idempotencyKey: q })]],
    ['event id', [eventRefsOf()]],
    ['grant id', id ? [refsOf({ grantId: id }), approvalRefsOf({ grant: { id } })] : [none]],
    ['approval id', id ? [approvalRefsOf({ id })] : [none]],
  ];
  const hits = new Map<string, Set<IncidentMatchKind>>();
  const add = (kind: IncidentMatchKind, refs: string[]) => {
    for (const r of refs) hits.set(r, (hits.get(r) ?? new Set()).add(kind));
  };
  const answers = await Promise.all(found.map(([, lookups]) => Promise.all(lookups)));
  found.forEach(([kind], i) => add(kind, answers[i].flat()));
  if (!hits.size && q.length >= PARTIAL_MIN) {
    const part = { requestRef: { contains: q, mode: 'insensitive' as const } };
    add('part of a request reference', (await Promise.all([refsOf(part), approvalRefsOf(part)])).flat());
  }
  return [...hits.keys()]
    .slice(0, SEARCH_MAX)
    .map((requestRef) => ({ requestRef, matchedBy: [...hits.get(requestRef)!] }));
}

/** Hits with their summaries, most recently active first. */
export async function summarizeHits(reader: Actor, hits: IncidentHit[]): Promise<IncidentMatch[]> {
  const summaries = new Map(
    (
      await summarizeIncidents(
        reader,
        hits.map((h) => h.requestRef),
      )
    ).map((s) => [s.requestRef, s]),
  );
  return hits
    .map((h) => ({ ...h, summary: summaries.get(h.requestRef) ?? null }))
    .sort((a, b) => (b.summary?.lastAt.getTime() ?? 0) - (a.summary?.lastAt.getTime() ?? 0));
}

/** Every incident a search term points at (matchIncidents), with summaries, most recently active first. */
export async function searchIncidents(reader: Actor, raw: string): Promise<IncidentMatch[]> {
  return summarizeHits(reader, await matchIncidents(reader, raw));
}

/** The most recently active incidents (by their latest record), newest first. */
export async function listRecentIncidents(reader: Actor, max = 15): Promise<IncidentSummary[]> {
  if (!authorize(reader, 'outcomes.read')) return [];
  const org = organizationOf(reader);
  // The newest records over the occurred_at index, not a GROUP BY over the whole table.
  const latest = await db.outcomeRecord.findMany({
    where: org === null ? {} : { organization: org },
    orderBy: [{ occurredAt: 'desc' }, { id: 'desc' }],
    select: { requestRef: true },
    take: max * 40,
  });
  const refs = [...new Set(latest.map((r) => r.requestRef))].slice(0, max);
  return summarizeIncidents(reader, refs);
}

/** The incidents with findings among the given references (the overview's), most findings first. */
export async function listFlaggedIncidents(reader: Actor, refs: string[]): Promise<IncidentSummary[]> {
  const all = await summarizeIncidents(reader, refs);
  return all.filter((s) => s.findings > 0).sort((a, b) => b.findings - a.findings || +b.lastAt - +a.lastAt);
}
