import 'server-only';
import { db, logPool } from '../db/db';
import { affected } from '../db/kysely';
import { insertIncidentAccess } from './access-log-sql';
import { Prisma } from '@/lib/generated/prisma/client';
import { authorize } from '@/lib/auth/permissions';
import { auditName, type Actor, type RemoteActor } from '@/lib/auth/actor';
import {
  ACCESS_PAGE_DEFAULT,
  ACCESS_PAGE_MAX,
  encodeAccessCursor,
  type AccessActorKind,
  type AccessLogQuery,
  type IncidentAccessFormat,
} from '@/lib/incidents/access-log';
import { keysetPage, keysetQuery, pageSize } from '@/lib/pagination/keyset';
import { fail, ok, type Result } from '@/lib/result';

export type { AccessActorKind, IncidentAccessFormat } from '@/lib/incidents/access-log';

export type AccessLogEntry = {
  id: string;
  at: Date;
  /** An email, or `api_key:<id>`. */
  actor: string;
  actorKind: AccessActorKind;
  /** For an API key: its name, when the key still exists. */
  keyName: string | null;
  requestRef: string;
  format: IncidentAccessFormat;
};

export type AccessLogPage = { items: AccessLogEntry[]; nextCursor: string | null };

function actorOf(reader: RemoteActor): { actor: string; actorKind: AccessActorKind } {
  if (reader.kind === 'apiKey') return { actor: auditName(reader), actorKind: 'api_key' };
  return { actor: auditName(reader), actorKind: reader.tokenId ? 'personal_token' : 'session' };
}

const REF_MAX = 255;
const API_KEY_ACTOR = /^api_key:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;

/**
 * One row per incident page view, API read or export: a single plain insert. Deliberately not an
 * audit entry: a read changes no state, and serializing every view behind the audit chain's lock
 * would make support's busiest page wait on approvals. Written through logPool (no wait for the
 * disk): the view waits for the row to be inserted, not for it to be flushed, so a database crash
 * could lose the last fraction of a second of views. The reference is stored as asked (capped,
 * NUL removed: PostgreSQL text cannot hold it), whether or not anything is recorded under it.
 */
export async function logIncidentAccess(
  reader: RemoteActor,
  requestRef: string,
  format: IncidentAccessFormat,
): Promise<void> {
  const { actor, actorKind } = actorOf(reader);
  const row = {
    actor,
    actor_kind: actorKind,
    format,
    request_ref: requestRef.replaceAll('\u0000', '').slice(0, REF_MAX),
  };
  await affected(insertIncidentAccess(row), logPool());
}

const entrySelect = {
  id: true,
  at: true,
  actor: true,
  actorKind: true,
  requestRef: true,
  format: true,
} satisfies Prisma.IncidentAccessLogSelect;

/** Newest first, a page at a time; admins only (the same permission as the audit log). */
export async function listIncidentAccess(
  viewer: Actor,
  query: Partial<AccessLogQuery> = {},
): Promise<Result<AccessLogPage>> {
  if (!authorize(viewer, 'audit.read')) return fail('forbidden');
  const limit = pageSize(query.limit, ACCESS_PAGE_DEFAULT, ACCESS_PAGE_MAX);
  const page = keysetQuery('at', 'desc', query.cursor, limit);
  const rows = await db.incidentAccessLog.findMany({
    where: {
      AND: [
        query.requestRef ? { requestRef: query.requestRef } : {},
        query.actor ? { actor: { contains: query.actor, mode: 'insensitive' } } : {},
        page.where,
      ],
    },
    orderBy: page.orderBy,
    take: page.take,
    select: entrySelect,
  });
  const { items: shown, nextCursor } = keysetPage(rows, limit, (last) =>
    encodeAccessCursor({ at: last.at, id: last.id }),
  );
  const keyIds = [...new Set(shown.flatMap((r) => API_KEY_ACTOR.exec(r.actor)?.[1] ?? []))];
  const keys = keyIds.length
    ? await db.apiKey.findMany({ where: { id: { in: keyIds } }, select: { id: true, name: true } })
    : [];
  const nameOf = new Map(keys.map((k) => [k.id, k.name]));
  const items = shown.map((r): AccessLogEntry => ({
    ...r,
    actorKind: r.actorKind as AccessActorKind,
    format: r.format as IncidentAccessFormat,
    keyName: nameOf.get(API_KEY_ACTOR.exec(r.actor)?.[1] ?? '') ?? null,
  }));
  return ok({ items, nextCursor });
}
