import 'server-only';
import { db } from '../db/db';
import { isUniqueViolation } from '../db/errors';
import { appendAudit } from '../audit/audit';
import { endAllSessions } from './sessions';
import { authorize, type Role } from '@/lib/auth/permissions';
import type { SystemActor } from '@/lib/auth/actor';
import { Prisma } from '@/lib/generated/prisma/client';

/** What a verified ID token says about a person, already mapped (no token, only the values used). */
export type SsoIdentity = {
  /** `<issuer> <sub>`: stable at the provider, unlike the e-mail. */
  subject: string;
  email: string;
  name: string;
  principal: string;
  role: Role;
  /** The claim values that gave the role. */
  roleClaims: string[];
};

export type SsoOutcome = { ok: true; userId: string } | { ok: false; reason: 'disabled' | 'conflict' };

const select = {
  id: true,
  email: true,
  role: true,
  principalId: true,
  disabledAt: true,
  oidcSubject: true,
  roleClaims: true,
} satisfies Prisma.UserSelect;

/**
 * First sign-in creates the person; every sign-in refreshes role, principal and the claims that
 * gave the role. A person disabled in Countersign stays out; an e-mail already linked to another
 * identity at the provider is refused. A role change ends the person's other sessions.
 */
export async function signInWithSso(actor: SystemActor, who: SsoIdentity): Promise<SsoOutcome> {
  if (!authorize(actor, 'users.provision')) throw new Error('the sign-in path may not provision people');
  for (let attempt = 0; ; attempt++) {
    try {
      return await db.$transaction((tx) => provision(tx, who));
    } catch (err) {
      // Two first sign-ins at once: the loser finds the person the winner created.
      if (!isUniqueViolation(err) || attempt > 0) throw err;
    }
  }
}

async function provision(tx: Prisma.TransactionClient, who: SsoIdentity): Promise<SsoOutcome> {
  const now = new Date();
  const existing =
    (await tx.user.findUnique({ where: { oidcSubject: who.subject }, select })) ??
    (await tx.user.findUnique({ where: { email: who.email }, select }));
  if (!existing) {
    const user = await tx.user.create({
      data: {
        email: who.email,
        name: who.name,
        role: who.role,
        principalId: who.principal,
        passwordHash: null,
        oidcSubject: who.subject,
        roleClaims: who.roleClaims,
        lastSignInAt: now,
      },
      select,
    });
    await appendAudit(tx, {
      actor: `sso:${who.email}`,
      action: 'user.sso_create',
      targetType: 'user',
      targetId: user.id,
      data: { email: who.email, role: who.role, principalId: who.principal, roleClaims: who.roleClaims },
    });
    return { ok: true, userId: user.id };
  }
  if (existing.disabledAt) return { ok: false, reason: 'disabled' };
  if (existing.oidcSubject && existing.oidcSubject !== who.subject) return { ok: false, reason: 'conflict' };

  const roleChanged = existing.role !== who.role;
  const changed =
    roleChanged ||
    existing.principalId !== who.principal ||
    existing.oidcSubject !== who.subject ||
    existing.email !== who.email;
  await tx.user.update({
    where: { id: existing.id },
    data: {
      role: who.role,
      principalId: who.principal,
      email: who.email,
      oidcSubject: who.subject,
      roleClaims: who.roleClaims,
      lastSignInAt: now,
    },
  });
  if (roleChanged) await endAllSessions(tx, existing.id);
  if (changed) {
    await appendAudit(tx, {
      actor: `sso:${who.email}`,
      action: 'user.sso_update',
      targetType: 'user',
      targetId: existing.id,
      data: {
        email: who.email,
        from: { role: existing.role, principalId: existing.principalId, linked: !!existing.oidcSubject },
        to: { role: who.role, principalId: who.principal, linked: true },
        roleClaims: who.roleClaims,
      },
    });
  }
  return { ok: true, userId: existing.id };
}

/** A password sign-in records when (the SSO path does so itself). */
export async function recordSignIn(userId: string): Promise<void> {
  await db.user.update({ where: { id: userId }, data: { lastSignInAt: new Date() } });
}
