import 'server-only';
import { db } from '../db/db';
import { appendAudit } from '../audit/audit';
import { authorize } from '@/lib/auth/permissions';
import { auditName, type Actor } from '@/lib/auth/actor';
import { fail, ok, type Result } from '@/lib/result';

export type TrustedServerView = { name: string; trustedBy: string; trustedAt: Date };

/** Annotations (readOnlyHint…) are believed only from servers trusted here (docs/design.md). */
export async function trustServer(actor: Actor, name: string): Promise<Result<TrustedServerView>> {
  if (!authorize(actor, 'servers.manage')) return fail('forbidden');
  const actorName = auditName(actor);
  return db.$transaction(async (tx) => {
    // Trusting twice (or twice at once) is one change and one audit entry.
    const { count } = await tx.trustedServer.createMany({
      data: [{ name, trustedBy: actorName }],
      skipDuplicates: true,
    });
    if (count)
      await appendAudit(tx, { actor: actorName, action: 'server.trust', targetType: 'server', targetId: name });
    return ok(await tx.trustedServer.findUniqueOrThrow({ where: { name } }));
  });
}

export async function untrustServer(viewer: Actor, name: string): Promise<Result<{ name: string }>> {
  if (!authorize(viewer, 'servers.manage')) return fail('forbidden');
  return db.$transaction(async (tx) => {
    const { count } = await tx.trustedServer.deleteMany({ where: { name } });
    if (!count) return fail('not_found');
    await appendAudit(tx, { actor: auditName(viewer), action: 'server.untrust', targetType: 'server', targetId: name });
    return ok({ name });
  });
}

export async function listTrustedServers(viewer: Actor): Promise<Result<TrustedServerView[]>> {
  if (!authorize(viewer, 'servers.manage')) return fail('forbidden');
  return ok(await db.trustedServer.findMany({ orderBy: { name: 'asc' }, take: 1000 }));
}
