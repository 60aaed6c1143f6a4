import 'server-only';
import { db } from '../db/db';
import { first } from '../db/kysely';
import { authenticateApiKey } from './sql';
import { appendAudit } from '../audit/audit';
import { authorize } from '@/lib/auth/permissions';
import { auditName, type Actor, type RemoteActor } from '@/lib/auth/actor';
import { API_KEY_PREFIX, hashSecret, newSecret, PERSONAL_TOKEN_PREFIX } from '@/lib/credentials/tokens';
import type { ApiScope } from '@/lib/credentials/scopes';
import type { CreateApiKeyInput } from '@/lib/credentials/schemas';
import { fail, ok, type Result } from '@/lib/result';
import { findActiveViewer } from '../users/users';

export type ApiKeyView = {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  organization: string | null;
  createdBy: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
};
const apiKeyView = {
  id: true,
  name: true,
  prefix: true,
  scopes: true,
  organization: true,
  createdBy: true,
  createdAt: true,
  lastUsedAt: true,
  revokedAt: true,
} as const;

export type PersonalTokenView = {
  id: string;
  name: string;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
};
const tokenView = { id: true, name: true, prefix: true, createdAt: true, lastUsedAt: true, revokedAt: true } as const;

// Writing lastUsedAt on every request would turn each read into a write; once a minute is enough.
const LAST_USED_GRANULARITY_MS = 60_000;
const stale = (d: Date | null) => !d || Date.now() - d.getTime() > LAST_USED_GRANULARITY_MS;

export async function authenticateBearer(secret: string): Promise<RemoteActor | null> {
  if (secret.startsWith(API_KEY_PREFIX)) {
    const key = await first(authenticateApiKey(hashSecret(secret), LAST_USED_GRANULARITY_MS / 1000));
    return key
      ? {
          kind: 'apiKey',
          keyId: key.id,
          name: key.name,
          scopes: key.scopes as ApiScope[],
          organization: key.organization,
        }
      : null;
  }
  if (secret.startsWith(PERSONAL_TOKEN_PREFIX)) {
    const token = await db.personalToken.findUnique({
      where: { tokenHash: hashSecret(secret) },
      select: { id: true, userId: true, revokedAt: true, lastUsedAt: true },
    });
    if (!token || token.revokedAt) return null;
    const viewer = await findActiveViewer(token.userId);
    if (!viewer) return null;
    if (stale(token.lastUsedAt))
      await db.personalToken.update({ where: { id: token.id }, data: { lastUsedAt: new Date() } });
    return { ...viewer, kind: 'user', tokenId: token.id };
  }
  return null;
}

export async function listApiKeys(viewer: Actor): Promise<Result<ApiKeyView[]>> {
  if (!authorize(viewer, 'apikeys.manage')) return fail('forbidden');
  return ok(
    await db.apiKey.findMany({
      select: apiKeyView,
      orderBy: [{ revokedAt: { sort: 'desc', nulls: 'first' } }, { createdAt: 'desc' }],
      take: 500,
    }),
  );
}

/** Creates an API key; the secret is in the result and nowhere else, ever. */
export async function createApiKey(
  actor: Actor,
  input: CreateApiKeyInput,
): Promise<Result<{ key: ApiKeyView; secret: string }>> {
  if (!authorize(actor, 'apikeys.manage')) return fail('forbidden');
  const { secret, hash, display } = newSecret(API_KEY_PREFIX);
  const actorName = auditName(actor);
  const key = await db.$transaction(async (tx) => {
    const created = await tx.apiKey.create({
      data: {
        name: input.name,
        prefix: display,
        keyHash: hash,
        scopes: input.scopes,
        organization: input.organization ?? null,
        createdBy: actorName,
      },
      select: apiKeyView,
    });
    await appendAudit(tx, {
      actor: actorName,
      action: 'apikey.create',
      targetType: 'api_key',
      targetId: created.id,
      data: { name: input.name, scopes: input.scopes, organization: input.organization ?? null },
    });
    return created;
  });
  return ok({ key, secret });
}

export async function revokeApiKey(viewer: Actor, id: string): Promise<Result<ApiKeyView>> {
  if (!authorize(viewer, 'apikeys.manage')) return fail('forbidden');
  return db.$transaction(async (tx) => {
    const { count } = await tx.apiKey.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: new Date() } });
    if (count === 0)
      return (await tx.apiKey.count({ where: { id } }))
        ? fail('conflict', 'This key is already revoked.')
        : fail('not_found');
    await appendAudit(tx, { actor: auditName(viewer), action: 'apikey.revoke', targetType: 'api_key', targetId: id });
    return ok(await tx.apiKey.findUniqueOrThrow({ where: { id }, select: apiKeyView }));
  });
}

export async function listPersonalTokens(viewer: Actor): Promise<PersonalTokenView[]> {
  if (!authorize(viewer, 'tokens.own')) return [];
  return db.personalToken.findMany({
    where: { userId: viewer.userId },
    select: tokenView,
    orderBy: { createdAt: 'desc' },
    take: 200,
  });
}

/** A personal token acts as its user; `actor` is who asked (the user for their own, or the system for bootstrap). */
export async function createPersonalToken(
  actor: Actor,
  userId: string,
  name: string,
): Promise<Result<{ token: PersonalTokenView; secret: string }>> {
  if (!authorize(actor, 'tokens.issue') && !(authorize(actor, 'tokens.own') && actor.userId === userId))
    return fail('forbidden');
  const { secret, hash, display } = newSecret(PERSONAL_TOKEN_PREFIX);
  const actorName = auditName(actor);
  const token = await db.$transaction(async (tx) => {
    const created = await tx.personalToken.create({
      data: { userId, name, prefix: display, tokenHash: hash },
      select: tokenView,
    });
    await appendAudit(tx, {
      actor: actorName,
      action: 'token.create',
      targetType: 'personal_token',
      targetId: created.id,
      data: { userId, name },
    });
    return created;
  });
  return ok({ token, secret });
}

export async function revokePersonalToken(viewer: Actor, id: string): Promise<Result<PersonalTokenView>> {
  if (!authorize(viewer, 'tokens.own')) return fail('forbidden');
  // Own tokens only; an admin disables the user instead, which stops their tokens too.
  return db.$transaction(async (tx) => {
    const { count } = await tx.personalToken.updateMany({
      where: { id, userId: viewer.userId, revokedAt: null },
      data: { revokedAt: new Date() },
    });
    if (count === 0)
      return (await tx.personalToken.count({ where: { id, userId: viewer.userId } }))
        ? fail('conflict', 'This token is already revoked.')
        : fail('not_found');
    await appendAudit(tx, { actor: viewer.email, action: 'token.revoke', targetType: 'personal_token', targetId: id });
    return ok(await tx.personalToken.findUniqueOrThrow({ where: { id }, select: tokenView }));
  });
}

export function describeClient(client: RemoteActor) {
  return client.kind === 'apiKey'
    ? { kind: 'api_key', id: client.keyId, name: client.name, scopes: client.scopes, organization: client.organization }
    : {
        kind: 'user',
        id: client.userId,
        email: client.email,
        role: client.role,
        principalId: client.principalId,
      };
}
