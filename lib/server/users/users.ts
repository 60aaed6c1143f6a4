import 'server-only';
import bcrypt from 'bcryptjs';
import { db } from '../db/db';
import { isUniqueViolation } from '../db/errors';
import { appendAudit } from '../audit/audit';
import { endAllSessions } from './sessions';
import { authorize, type Role, type Viewer } from '@/lib/auth/permissions';
import { auditName, type Actor } from '@/lib/auth/actor';
import type { CreateUserInput } from '@/lib/users/schemas';
import { fail, ok, type Result } from '@/lib/result';
import { Prisma } from '@/lib/generated/prisma/client';

const BCRYPT_COST = 11;
// Compared against when the email is unknown, so a miss costs as long as a hit.
const DUMMY_HASH = bcrypt.hashSync('countersign-dummy-password', BCRYPT_COST);

const viewerSelect = { id: true, email: true, name: true, role: true, principalId: true } satisfies Prisma.UserSelect;
const toViewer = (u: Prisma.UserGetPayload<{ select: typeof viewerSelect }>): Viewer => ({
  userId: u.id,
  email: u.email,
  name: u.name,
  role: u.role,
  principalId: u.principalId,
});

/** How a person signs in: a local password, the identity provider, or both. */
export type SignInMethods = { password: boolean; sso: boolean };
export type UserView = Viewer & {
  disabledAt: Date | null;
  createdAt: Date;
  signIn: SignInMethods;
  lastSignInAt: Date | null;
  /** The claim values that gave the role at the last SSO sign-in (never a token). */
  roleClaims: string[];
};
const userViewSelect = {
  ...viewerSelect,
  disabledAt: true,
  createdAt: true,
  lastSignInAt: true,
  roleClaims: true,
  oidcSubject: true,
  passwordHash: true,
} satisfies Prisma.UserSelect;
const toUserView = (u: Prisma.UserGetPayload<{ select: typeof userViewSelect }>): UserView => ({
  ...toViewer(u),
  disabledAt: u.disabledAt,
  createdAt: u.createdAt,
  signIn: { password: u.passwordHash !== null, sso: u.oidcSubject !== null },
  lastSignInAt: u.lastSignInAt,
  roleClaims: u.roleClaims,
});

/** The signed-in person as they are now: a disabled user or a changed role takes effect at once. */
export async function findActiveViewer(userId: string): Promise<Viewer | null> {
  const user = await db.user.findFirst({ where: { id: userId, disabledAt: null }, select: viewerSelect });
  return user ? toViewer(user) : null;
}

export async function verifyPassword(email: string, password: string): Promise<Viewer | null> {
  const user = await db.user.findUnique({
    where: { email },
    select: { ...viewerSelect, passwordHash: true, disabledAt: true },
  });
  const matches = await bcrypt.compare(password, user?.passwordHash ?? DUMMY_HASH);
  // A person without a password (SSO only) never matches, whatever was typed.
  return user?.passwordHash && matches && !user.disabledAt ? toViewer(user) : null;
}

export async function listUsers(viewer: Actor): Promise<Result<UserView[]>> {
  if (!authorize(viewer, 'users.manage')) return fail('forbidden');
  const users = await db.user.findMany({ select: userViewSelect, orderBy: { email: 'asc' }, take: 1000 });
  return ok(users.map(toUserView));
}

export async function findUserByEmail(email: string): Promise<UserView | null> {
  const user = await db.user.findUnique({ where: { email }, select: userViewSelect });
  return user ? toUserView(user) : null;
}

export async function createUser(actor: Actor, input: CreateUserInput): Promise<Result<UserView>> {
  if (!authorize(actor, 'users.create')) return fail('forbidden');
  const actorName = auditName(actor);
  const passwordHash = await bcrypt.hash(input.password, BCRYPT_COST);
  try {
    return ok(
      await db.$transaction(async (tx) => {
        const user = await tx.user.create({
          data: {
            email: input.email,
            name: input.name ?? input.email.split('@')[0],
            role: input.role,
            passwordHash,
            principalId: input.principalId ?? input.email,
          },
          select: userViewSelect,
        });
        await appendAudit(tx, {
          actor: actorName,
          action: 'user.create',
          targetType: 'user',
          targetId: user.id,
          data: { email: user.email, role: user.role, principalId: user.principalId },
        });
        return toUserView(user);
      }),
    );
  } catch (err) {
    if (isUniqueViolation(err)) {
      return fail('conflict', `A user with the email ${input.email} already exists.`, [
        { path: 'email', message: 'is already taken' },
      ]);
    }
    throw err;
  }
}

// An admin cannot demote or disable themselves: the console must never lock out its last admin by accident.
async function updateOther(
  viewer: Actor,
  userId: string,
  change: { role?: Role; disabledAt?: Date | null },
  action: string,
): Promise<Result<UserView>> {
  if (!authorize(viewer, 'users.manage')) return fail('forbidden');
  if (userId === viewer.userId) return fail('forbidden', 'You cannot change your own role or disable yourself.');
  return db.$transaction(async (tx) => {
    const before = await tx.user.findUnique({ where: { id: userId }, select: userViewSelect });
    if (!before) return fail('not_found');
    const user = await tx.user.update({ where: { id: userId }, data: change, select: userViewSelect });
    // A new role or a disable takes effect at once: every session the person had is over.
    const roleChanged = change.role !== undefined && change.role !== before.role;
    if (roleChanged || change.disabledAt) await endAllSessions(tx, userId);
    await appendAudit(tx, {
      actor: viewer.email,
      action,
      targetType: 'user',
      targetId: userId,
      data: {
        email: user.email,
        from: { role: before.role, disabled: !!before.disabledAt },
        to: { role: user.role, disabled: !!user.disabledAt },
      },
    });
    return ok(toUserView(user));
  });
}

export const changeUserRole = (viewer: Actor, userId: string, role: Role) =>
  updateOther(viewer, userId, { role }, 'user.role_change');

export const setUserDisabled = (viewer: Actor, userId: string, disabled: boolean) =>
  updateOther(viewer, userId, { disabledAt: disabled ? new Date() : null }, disabled ? 'user.disable' : 'user.enable');
