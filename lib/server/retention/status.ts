import 'server-only';
import { db } from '../db/db';
import { AUDIT_TARGET, PURGE_ACTION, retentionSetting } from './retention';
import { authorize } from '@/lib/auth/permissions';
import type { Actor } from '@/lib/auth/actor';
import type { RetentionSetting } from '@/lib/outcomes/retention';
import { fail, ok, type Result } from '@/lib/result';

// What the admin audit page shows of retention: the setting in force and the last purge.

export type RetentionStatus = {
  setting: RetentionSetting | { enabled: false; invalid: string };
  lastPurge: { at: Date; deleted: number; kept: number | null; cutoff: string } | null;
};

/** The setting in force and the last purge that deleted something (from the audit log). */
export async function getRetentionStatus(viewer: Actor): Promise<Result<RetentionStatus>> {
  if (!authorize(viewer, 'audit.read')) return fail('forbidden');
  let setting: RetentionStatus['setting'];
  try {
    setting = retentionSetting();
  } catch (err) {
    setting = { enabled: false, invalid: (err as Error).message };
  }
  const last = await db.auditEntry.findFirst({
    where: { ...AUDIT_TARGET, action: PURGE_ACTION },
    orderBy: { seq: 'desc' },
    select: { at: true, data: true },
  });
  const data = last?.data as { deleted?: number; kept?: number | null; cutoff?: string } | undefined;
  return ok({
    setting,
    lastPurge:
      last && data
        ? { at: last.at, deleted: data.deleted ?? 0, kept: data.kept ?? null, cutoff: data.cutoff ?? '' }
        : null,
  });
}
