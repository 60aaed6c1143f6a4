import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { appendAudit, verifyAuditChain } from './audit';
import { db } from './db';
import { uniq } from './testing';

// Tampering needs a superuser session that bypasses the append-only trigger, as an attacker with
// database access would; the app's own connection is refused (see the first test).
const superuser = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 1 });
afterAll(() => superuser.end());

async function tamper(sql: string, params: unknown[] = []) {
  const c = await superuser.connect();
  try {
    await c.query('BEGIN');
    await c.query('SET LOCAL session_replication_role = replica');
    await c.query(sql, params);
    await c.query('COMMIT');
  } finally {
    c.release();
  }
}

describe.sequential('audit chain (real PostgreSQL)', () => {
  it('the database refuses UPDATE, DELETE and TRUNCATE', async () => {
    await db.$transaction((tx) => appendAudit(tx, { actor: 'test', action: 'test.append', targetType: 'test', targetId: uniq() }));
    await expect(db.$executeRawUnsafe(`UPDATE audit_entries SET actor = 'x'`)).rejects.toThrow(/append-only/);
    await expect(db.$executeRawUnsafe(`DELETE FROM audit_entries`)).rejects.toThrow(/append-only/);
    await expect(db.$executeRawUnsafe(`TRUNCATE audit_entries`)).rejects.toThrow(/append-only/);
  });

  it('50 concurrent appends form one unbroken chain', async () => {
    await Promise.all(Array.from({ length: 50 }, (_, i) =>
      db.$transaction((tx) => appendAudit(tx, { actor: 'test', action: 'test.concurrent', targetType: 'test', targetId: String(i) }))));
    const v = await verifyAuditChain();
    expect(v).toMatchObject({ ok: true });
    expect(v.entries).toBeGreaterThanOrEqual(51);
  });

  // These three break the chain for good, so they run last and in this order.
  it('detects an edited entry and names it', async () => {
    const target = await db.auditEntry.findFirstOrThrow({ where: { action: 'test.concurrent' }, orderBy: { seq: 'asc' } });
    await tamper(`UPDATE audit_entries SET actor = 'mallory' WHERE seq = $1`, [target.seq]);
    expect(await verifyAuditChain()).toMatchObject({ ok: false, firstBrokenEntry: Number(target.seq) });
    await tamper(`UPDATE audit_entries SET actor = $2 WHERE seq = $1`, [target.seq, target.actor]);
    expect(await verifyAuditChain()).toMatchObject({ ok: true });
  });

  it('detects a deleted entry', async () => {
    const target = await db.auditEntry.findFirstOrThrow({ where: { action: 'test.concurrent' }, orderBy: { seq: 'desc' }, skip: 3 });
    await tamper(`DELETE FROM audit_entries WHERE seq = $1`, [target.seq]);
    expect(await verifyAuditChain()).toMatchObject({ ok: false, firstBrokenEntry: Number(target.seq) });
    await tamper(`INSERT INTO audit_entries SELECT * FROM json_populate_record(NULL::audit_entries, $1)`, [JSON.stringify({
      seq: String(target.seq), at: target.at, actor: target.actor, action: target.action, target_type: target.targetType,
      target_id: target.targetId, data: target.data, prev_hash: target.prevHash, hash: target.hash,
    })]);
    expect(await verifyAuditChain()).toMatchObject({ ok: true });
  });

  it('detects an inserted entry', async () => {
    const last = await db.auditEntry.findFirstOrThrow({ orderBy: { seq: 'desc' } });
    await tamper(`INSERT INTO audit_entries (seq, at, actor, action, target_type, target_id, data, prev_hash, hash) VALUES ($1, now(), 'mallory', 'user.create', 'user', 'x', '{}', $2, $3)`,
      [String(last.seq + 1n), last.hash, 'sha256:' + 'f'.repeat(64)]);
    expect(await verifyAuditChain()).toMatchObject({ ok: false, firstBrokenEntry: Number(last.seq + 1n) });
  });
});
