import 'server-only';
import { db, type Tx } from './db';
import { auditHash, GENESIS_HASH } from '@/lib/audit/chain';
import { can, type Viewer } from '@/lib/auth/permissions';
import { fail, ok, type Result } from '@/lib/result';

export type AuditInput = { actor: string; action: string; targetType: string; targetId: string; data?: Record<string, unknown> };

// Any 64-bit constant unique to this lock; serializes appends so the chain never forks.
const AUDIT_LOCK = 0x636f756e746572n;

/** Appends one entry inside the caller's transaction, so the audit row and the change commit together. */
export async function appendAudit(tx: Tx, input: AuditInput): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(${AUDIT_LOCK})`;
  const last = await tx.auditEntry.findFirst({ orderBy: { seq: 'desc' }, select: { seq: true, hash: true } });
  const seq = (last?.seq ?? 0n) + 1n;
  const prevHash = last?.hash ?? GENESIS_HASH;
  const at = new Date();
  const data = input.data ?? {};
  const hash = auditHash(prevHash, { ...input, seq, at, data });
  await tx.auditEntry.create({ data: { seq, at, actor: input.actor, action: input.action, targetType: input.targetType, targetId: input.targetId, data: data as object, prevHash, hash } });
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
      const broken = (reason: string, seq = e.seq) => ({ ok: false as const, entries, firstBrokenEntry: Number(seq), reason, head: prevHash });
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

/** The permission-checked entry point for people; the CLI calls verifyAuditChain directly. */
export async function verifyAuditChainAs(client: { kind: 'user'; viewer: Viewer } | { kind: 'apiKey' }): Promise<Result<AuditVerification>> {
  if (client.kind !== 'user' || !can(client.viewer, 'audit.read')) return fail('forbidden');
  return ok(await verifyAuditChain());
}

export type AuditEntryView = { seq: number; at: Date; actor: string; action: string; targetType: string; targetId: string; hash: string };

/** The newest entries, a page at a time (before `beforeSeq`), for admins. */
export async function listAuditEntries(viewer: Viewer, beforeSeq?: number, limit = 50): Promise<Result<{ items: AuditEntryView[]; nextBefore: number | null }>> {
  if (!can(viewer, 'audit.read')) return fail('forbidden');
  const rows = await db.auditEntry.findMany({
    where: beforeSeq ? { seq: { lt: BigInt(beforeSeq) } } : {},
    orderBy: { seq: 'desc' },
    take: limit + 1,
    select: { seq: true, at: true, actor: true, action: true, targetType: true, targetId: true, hash: true },
  });
  const items = rows.slice(0, limit).map((r) => ({ ...r, seq: Number(r.seq) }));
  return ok({ items, nextBefore: rows.length > limit ? items[items.length - 1].seq : null });
}
