import 'server-only';
import { replicaSafe } from '../db/replica';
import { db, type Tx } from '../db/db';
import { affected } from '../db/kysely';
import { appendAuditEntry } from './sql';
import { auditHash, canonicalTemplate, GENESIS_HASH } from '@/lib/audit/chain';
import { canonicalJson } from '@/lib/json/canonical';
import { authorize } from '@/lib/auth/permissions';
import type { Actor } from '@/lib/auth/actor';
import { fail, ok, type Result } from '@/lib/result';

export type AuditInput = {
  actor: string;
  action: string;
  targetType: string;
  targetId: string;
  data?: Record<string, unknown>;
};

/** What audit_append takes: the entry, its data as stored and its canonical form around the holes. */
export function auditAppendArgs(input: AuditInput, holes: readonly ('at' | 'seq' | 'targetId')[] = ['at', 'seq']) {
  const data = input.data ?? {};
  return {
    data: canonicalJson(data),
    canonical: canonicalTemplate(
      { actor: input.actor, action: input.action, targetType: input.targetType, targetId: input.targetId, data },
      holes,
    ),
  };
}

/**
 * Appends one entry inside the caller's transaction, so the audit row and the change commit
 * together: one round trip, in which the database takes the chain's lock, reads its head and
 * inserts the entry with its hash (the same as `auditHash` of the stored row). The data is
 * stored as the canonical JSON that was hashed.
 */
export async function appendAudit(tx: Tx, input: AuditInput): Promise<void> {
  const { data, canonical } = auditAppendArgs(input);
  await affected(appendAuditEntry(input, data, canonical), tx);
}

export type AuditVerification =
  | { ok: true; entries: number; head: string }
  | { ok: false; entries: number; firstBrokenEntry: number; reason: string; head: string };

/** Recomputes the whole chain and names the first entry that does not follow from its predecessor. */
export async function verifyAuditChain(): Promise<AuditVerification> {
  let prevHash = GENESIS_HASH;
  let expectedSeq = 1n;
  let entries = 0;
  let cursor: bigint | undefined;
  for (;;) {
    const page = await db.auditEntry.findMany({
      where: cursor === undefined ? {} : { seq: { gt: cursor } },
      orderBy: { seq: 'asc' },
      take: 1000,
    });
    if (page.length === 0) return { ok: true, entries, head: prevHash };
    for (const e of page) {
      const broken = (reason: string, seq = e.seq) => ({
        ok: false as const,
        entries,
        firstBrokenEntry: Number(seq),
        reason,
        head: prevHash,
      });
      if (e.seq !== expectedSeq) return broken(e.seq > expectedSeq ? 'is missing' : 'is out of order', expectedSeq);
      if (e.prevHash !== prevHash) return broken('does not link to the entry before it');
      if (auditHash(prevHash, e) !== e.hash) return broken('its content does not match its hash');
      prevHash = e.hash;
      expectedSeq += 1n;
      entries += 1;
    }
    cursor = page[page.length - 1].seq;
  }
}

/** The permission-checked entry point (people, and the CLI as the system). */
export const verifyAuditChainAs = replicaSafe(async function verifyAuditChainAs(
  client: Actor,
): Promise<Result<AuditVerification>> {
  if (!authorize(client, 'audit.read')) return fail('forbidden');
  return ok(await verifyAuditChain());
});

export type AuditEntryView = {
  seq: number;
  at: Date;
  actor: string;
  action: string;
  targetType: string;
  targetId: string;
  hash: string;
};

/** The newest entries, a page at a time (before `beforeSeq`), for admins. */
export const listAuditEntries = replicaSafe(async function listAuditEntries(
  viewer: Actor,
  beforeSeq?: number,
  limit: number = 50,
): Promise<Result<{ items: AuditEntryView[]; nextBefore: number | null }>> {
  if (!authorize(viewer, 'audit.read')) return fail('forbidden');
  const rows = await db.auditEntry.findMany({
    where: beforeSeq ? { seq: { lt: BigInt(beforeSeq) } } : {},
    orderBy: { seq: 'desc' },
    take: limit + 1,
    select: { seq: true, at: true, actor: true, action: true, targetType: true, targetId: true, hash: true },
  });
  const items = rows.slice(0, limit).map((r) => ({ ...r, seq: Number(r.seq) }));
  return ok({ items, nextBefore: rows.length > limit ? items[items.length - 1].seq : null });
});
