import 'server-only';
import { db } from '../db/db';
import { appendAudit } from '../audit/audit';
import { authorize, type Viewer } from '@/lib/auth/permissions';
import { auditName, type Actor } from '@/lib/auth/actor';
import { fail, ok, type Result } from '@/lib/result';
import type { Prisma } from '@/lib/generated/prisma/client';

export type SessionMethod = 'password' | 'oidc';
export type SessionView = {
  id: string;
  method: string;
  device: string;
  address: string;
  createdAt: Date;
  lastSeenAt: Date;
  current: boolean;
};
type Tx = Prisma.TransactionClient;

// A busy page makes many requests: last seen is written at most once a minute per session.
const TOUCH_EVERY_MS = 60_000;

/** A new signed-in session of the person's current version (called by Auth.js at sign-in). */
export async function openSession(
  userId: string,
  method: SessionMethod,
  device: string,
  address: string | null,
): Promise<{ id: string; version: number }> {
  const user = await db.user.findUniqueOrThrow({ where: { id: userId }, select: { sessionVersion: true } });
  const session = await db.session.create({
    data: {
      userId,
      method,
      device: device.slice(0, 100),
      address: (address ?? 'unknown').slice(0, 64),
      version: user.sessionVersion,
    },
    select: { id: true, version: true },
  });
  return session;
}

/**
 * The one check behind every request with a session cookie: the session the cookie names is
 * not revoked, is of the person's current version, and the person is enabled. The JWT alone is
 * never enough.
 */
export async function findSessionViewer(userId: string, sessionId: string, version: number): Promise<Viewer | null> {
  const row = await db.session.findFirst({
    where: { id: sessionId, userId, version, revokedAt: null, user: { disabledAt: null, sessionVersion: version } },
    select: {
      lastSeenAt: true,
      user: { select: { id: true, email: true, name: true, role: true, principalId: true } },
    },
  });
  if (!row) return null;
  if (Date.now() - row.lastSeenAt.getTime() > TOUCH_EVERY_MS) {
    await db.session.updateMany({
      where: { id: sessionId, lastSeenAt: { lt: new Date(Date.now() - TOUCH_EVERY_MS) } },
      data: { lastSeenAt: new Date() },
    });
  }
  const u = row.user;
  return { userId: u.id, email: u.email, name: u.name, role: u.role, principalId: u.principalId };
}

const viewSelect = {
  id: true,
  method: true,
  device: true,
  address: true,
  createdAt: true,
  lastSeenAt: true,
} satisfies Prisma.SessionSelect;

async function activeSessions(userId: string, currentId: string | null): Promise<SessionView[]> {
  const user = await db.user.findUnique({ where: { id: userId }, select: { sessionVersion: true } });
  if (!user) return [];
  const rows = await db.session.findMany({
    where: { userId, revokedAt: null, version: user.sessionVersion },
    select: viewSelect,
    orderBy: { lastSeenAt: 'desc' },
    take: 100,
  });
  return rows.map((r) => ({ ...r, current: r.id === currentId }));
}

/** One's own signed-in sessions, the current one marked. */
export async function listOwnSessions(actor: Actor, currentId: string | null): Promise<Result<SessionView[]>> {
  if (!authorize(actor, 'sessions.own')) return fail('forbidden');
  return ok(await activeSessions(actor.userId, currentId));
}

/** A person's signed-in sessions, for an admin. */
export async function listUserSessions(actor: Actor, userId: string): Promise<Result<SessionView[]>> {
  if (!authorize(actor, 'sessions.manage')) return fail('forbidden');
  return ok(await activeSessions(userId, null));
}

/** Ends every session of a person inside the caller's transaction (role change, disable, sign out everywhere). */
export async function endAllSessions(tx: Tx, userId: string): Promise<number> {
  await tx.user.update({ where: { id: userId }, data: { sessionVersion: { increment: 1 } } });
  const { count } = await tx.session.updateMany({
    where: { userId, revokedAt: null },
    data: { revokedAt: new Date() },
  });
  return count;
}

/** "Sign out everywhere": every session of the actor's, this one too. */
export async function endOwnSessions(actor: Actor): Promise<Result<{ ended: number }>> {
  if (!authorize(actor, 'sessions.own')) return fail('forbidden');
  return db.$transaction(async (tx) => {
    const ended = await endAllSessions(tx, actor.userId);
    await appendAudit(tx, {
      actor: auditName(actor),
      action: 'session.end_all',
      targetType: 'user',
      targetId: actor.userId,
      data: { ended },
    });
    return ok({ ended });
  });
}

/** One of one's own sessions (signing out of another browser). */
export async function endOwnSession(actor: Actor, sessionId: string): Promise<Result<{ ended: number }>> {
  if (!authorize(actor, 'sessions.own')) return fail('forbidden');
  return db.$transaction(async (tx) => {
    const { count } = await tx.session.updateMany({
      where: { id: sessionId, userId: actor.userId, revokedAt: null },
      data: { revokedAt: new Date() },
    });
    if (count === 0) return fail('not_found');
    await appendAudit(tx, {
      actor: auditName(actor),
      action: 'session.end',
      targetType: 'session',
      targetId: sessionId,
      data: { userId: actor.userId },
    });
    return ok({ ended: count });
  });
}

/** An admin ends every session of a person. */
export async function endUserSessions(actor: Actor, userId: string): Promise<Result<{ ended: number }>> {
  if (!authorize(actor, 'sessions.manage')) return fail('forbidden');
  return db.$transaction(async (tx) => {
    const user = await tx.user.findUnique({ where: { id: userId }, select: { email: true } });
    if (!user) return fail('not_found');
    const ended = await endAllSessions(tx, userId);
    await appendAudit(tx, {
      actor: auditName(actor),
      action: 'session.end_all',
      targetType: 'user',
      targetId: userId,
      data: { email: user.email, ended },
    });
    return ok({ ended });
  });
}

/** Sign-out of this browser: its session is over even if the cookie were kept. */
export async function closeSession(sessionId: string): Promise<void> {
  await db.session.updateMany({ where: { id: sessionId, revokedAt: null }, data: { revokedAt: new Date() } });
}
