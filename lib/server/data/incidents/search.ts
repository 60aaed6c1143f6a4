import 'server-only';
import { z } from 'zod';
import { db } from '../db';
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

/**
 * Every incident a support person's search term points at, most recently active first: by request
 * reference, idempotency key (an operation's key is often shared by many incidents), event id,
 * grant or approval id, and, when no reference matches exactly, by part of a reference. The page
 * opens an incident directly only when exactly one matches.
 */
export async function searchIncidents(reader: Actor, raw: string): Promise<IncidentMatch[]> {
  const parsed = term.safeParse(raw);
  if (!parsed.success) return [];
  const q = parsed.data;
  const hits = new Map<string, Set<IncidentMatchKind>>();
  const add = (kind: IncidentMatchKind, refs: string[]) => {
    for (const r of refs) hits.set(r, (hits.get(r) ?? new Set()).add(kind));
  };
  const org = organizationOf(reader);
  const outcomes = authorize(reader, 'outcomes.read') ? (org === null ? {} : { organization: org }) : null;
  const approvals = authorize(reader, 'approvals.read') ? (org === null ? {} : { organization: org }) : null;
  const id = isUuid(q) ? q.toLowerCase() : null;

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

  add('request reference', [...(await refsOf({ requestRef: q })), ...(await approvalRefsOf({ requestRef: q }))]);
  add('idempotency key', [...(await refsOf({ idempotencyKey: q })), ...(await approvalRefsOf({ idempotencyKey: q }))]);
  add('event id', await refsOf({ eventId: q }));
  if (id) {
    add('grant id', [...(await refsOf({ grantId: id })), ...(await approvalRefsOf({ grant: { id } }))]);
    add('approval id', await approvalRefsOf({ id }));
  }
  if (!hits.size && q.length >= PARTIAL_MIN) {
    const part = { requestRef: { contains: q, mode: 'insensitive' as const } };
    add('part of a request reference', [...(await refsOf(part)), ...(await approvalRefsOf(part))]);
  }

  const refs = [...hits.keys()].slice(0, SEARCH_MAX);
  const summaries = new Map((await summarizeIncidents(reader, refs)).map((s) => [s.requestRef, s]));
  return refs
    .map((requestRef) => ({
      requestRef,
      matchedBy: [...hits.get(requestRef)!],
      summary: summaries.get(requestRef) ?? null,
    }))
    .sort((a, b) => (b.summary?.lastAt.getTime() ?? 0) - (a.summary?.lastAt.getTime() ?? 0));
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
