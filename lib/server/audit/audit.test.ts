import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import pg from 'pg';
import { appendAudit, verifyAuditChain, type AuditInput } from './audit';
import { AUDIT_CHAIN_LOCK } from '../db/locks';
import { db, type Tx } from '../db/db';
import { uniq } from '../../../testing/factories';
import { auditHash, GENESIS_HASH } from '@/lib/audit/chain';
import { config } from '@/lib/config';

// Tampering needs a superuser session that bypasses the append-only trigger, as an attacker with
// database access would; the app's own connection is refused (see the first test).
const superuser = new pg.Pool({ connectionString: config().DATABASE_URL, max: 1 });
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

/** How the previous release appended (hash computed in JS, three statements under the lock): instances still running it must keep extending the same chain. */
async function appendAuditTheOldWay(tx: Tx, input: AuditInput): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(${AUDIT_CHAIN_LOCK})`;
  const last = await tx.auditEntry.findFirst({ orderBy: { seq: 'desc' }, select: { seq: true, hash: true } });
  const seq = (last?.seq ?? 0n) + 1n;
  const prevHash = last?.hash ?? GENESIS_HASH;
  const at = new Date();
  const data = input.data ?? {};
  const hash = auditHash(prevHash, { ...input, seq, at, data });
  await tx.auditEntry.create({
    data: {
      seq,
      at,
      actor: input.actor,
      action: input.action,
      targetType: input.targetType,
      targetId: input.targetId,
      data: data as object,
      prevHash,
      hash,
    },
  });
}

// Text PostgreSQL can store (no NUL), in any script, with characters JSON escapes.
const text = fc
  .oneof(
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.constantFrom('"at":""', '\\"', '\n\t', 'Ünïcødé ✓', '😀', '\u2028', '</script>'),
  )
  .filter((t) => !t.includes('\u0000'));
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    text,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(text, tie('value'), { maxKeys: 4 }),
  ),
})).value;
const entry = fc.record({
  actor: text,
  action: text,
  targetType: text,
  targetId: text,
  data: fc.option(fc.dictionary(text, json, { maxKeys: 6 }), { nil: undefined }),
});

describe.sequential('audit chain (real PostgreSQL)', () => {
  it('the database refuses UPDATE, DELETE and TRUNCATE', async () => {
    await db.$transaction((tx) =>
      appendAudit(tx, { actor: 'test', action: 'test.append', targetType: 'test', targetId: uniq() }),
    );
    await expect(db.$executeRawUnsafe(`UPDATE audit_entries SET actor = 'x'`)).rejects.toThrow(/append-only/);
    await expect(db.$executeRawUnsafe(`DELETE FROM audit_entries`)).rejects.toThrow(/append-only/);
    await expect(db.$executeRawUnsafe(`TRUNCATE audit_entries`)).rejects.toThrow(/append-only/);
  });

  it('50 concurrent appends form one unbroken chain', async () => {
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        db.$transaction((tx) =>
          appendAudit(tx, { actor: 'test', action: 'test.concurrent', targetType: 'test', targetId: String(i) }),
        ),
      ),
    );
    const v = await verifyAuditChain();
    expect(v).toMatchObject({ ok: true });
    expect(v.entries).toBeGreaterThanOrEqual(51);
  });

  it('the database computes exactly the hash auditHash gives for the stored row, over many varied entries', async () => {
    await fc.assert(
      fc.asyncProperty(entry, async (input) => {
        await db.$transaction((tx) => appendAudit(tx, input));
        const row = await db.auditEntry.findFirstOrThrow({ orderBy: { seq: 'desc' } });
        const before = await db.auditEntry.findFirst({ where: { seq: { lt: row.seq } }, orderBy: { seq: 'desc' } });
        expect(row).toMatchObject({
          actor: input.actor,
          action: input.action,
          targetType: input.targetType,
          targetId: input.targetId,
          prevHash: before?.hash ?? GENESIS_HASH,
        });
        // Stored as given (a JSON round trip drops only what JSON cannot say, like -0).
        expect(row.data).toEqual(JSON.parse(JSON.stringify(input.data ?? {})));
        expect(Math.abs(Date.now() - row.at.getTime())).toBeLessThan(60_000);
        // Stored in whole milliseconds, as hashed: the hash formats `at` to milliseconds (to_char
        // … MS), so the equality below would hold for a stored sub-millisecond part too.
        const [{ whole }] = await db.$queryRaw<
          { whole: boolean }[]
        >`SELECT at = date_trunc('milliseconds', at) AS whole FROM audit_entries WHERE seq = ${row.seq}`;
        expect(whole).toBe(true);
        expect(auditHash(row.prevHash, row)).toBe(row.hash);
      }),
      { numRuns: 150 },
    );
    expect(await verifyAuditChain()).toMatchObject({ ok: true });
  });

  it('entries appended the old way (hash in JS) and the new way interleave into one chain that verifies', async () => {
    const tag = uniq('mixed');
    for (let i = 0; i < 6; i++) {
      await db.$transaction((tx) =>
        (i % 2 ? appendAudit : appendAuditTheOldWay)(tx, {
          actor: 'test',
          action: 'test.mixed',
          targetType: 'test',
          targetId: `${tag}-${i}`,
          data: { i, why: 'a rolling deploy' },
        }),
      );
    }
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        db.$transaction((tx) =>
          (i % 2 ? appendAudit : appendAuditTheOldWay)(tx, {
            actor: 'test',
            action: 'test.mixed',
            targetType: 'test',
            targetId: `${tag}-c${i}`,
          }),
        ),
      ),
    );
    const rows = await db.auditEntry.findMany({ where: { action: 'test.mixed' }, orderBy: { seq: 'asc' } });
    expect(rows).toHaveLength(26);
    const v = await verifyAuditChain();
    expect(v).toMatchObject({
      ok: true,
      head: (await db.auditEntry.findFirstOrThrow({ orderBy: { seq: 'desc' } })).hash,
    });
  });

  it('takes the same lock as the previous release: an append waits while another session holds it', async () => {
    const holder = await superuser.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock($1)', [String(AUDIT_CHAIN_LOCK)]);
      const targetId = uniq('waits');
      const append = db.$transaction((tx) =>
        appendAudit(tx, { actor: 'test', action: 'test.lock', targetType: 'test', targetId }),
      );
      for (let waited = 0; ; waited += 20) {
        const { rows } = await holder.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'",
        );
        if (rows[0].n === 1) break;
        if (waited > 10_000) throw new Error('the append never waited for the chain lock');
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(await db.auditEntry.count({ where: { targetId } })).toBe(0);
      await holder.query('COMMIT');
      await append;
      expect(await db.auditEntry.count({ where: { targetId } })).toBe(1);
    } finally {
      holder.release();
    }
  });

  it('dates entries by the database clock after the lock: `at` never goes backwards along the chain', async () => {
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        db.$transaction((tx) =>
          appendAudit(tx, { actor: 'test', action: 'test.order', targetType: 'test', targetId: String(i) }),
        ),
      ),
    );
    const ats = (
      await db.auditEntry.findMany({ where: { action: 'test.order' }, orderBy: { seq: 'asc' }, select: { at: true } })
    ).map((e) => e.at.getTime());
    expect(ats).toHaveLength(30);
    expect(ats).toEqual([...ats].sort((a, b) => a - b));
  });

  it('entries hashed before lib/json (their canonical text spelled out here by hand) still verify', async () => {
    // What the release before lib/json hashed: members sorted at every depth, null kept,
    // JSON.stringify's spelling of numbers and strings.
    const data = String.raw`{"10":1,"9":2,"B":true,"a":{"note":null},"n":1e+21,"s":"\"é😀\n\u000f","z":[1,null,0.1]}`;
    for (let i = 0; i < 3; i++) {
      await db.$transaction(async (tx) => {
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(${AUDIT_CHAIN_LOCK})`;
        const last = await tx.auditEntry.findFirst({ orderBy: { seq: 'desc' }, select: { seq: true, hash: true } });
        const seq = (last?.seq ?? 0n) + 1n;
        const prevHash = last?.hash ?? GENESIS_HASH;
        const at = new Date(Date.UTC(2026, 10, 30, 12, 0, 0, i));
        const text =
          `{"action":"test.legacy","actor":"legacy","at":"${at.toISOString()}","data":${data},` +
          `"seq":"${seq}","targetId":"legacy-${i}","targetType":"test"}`;
        const hash = 'sha256:' + createHash('sha256').update(`${prevHash}\n${text}`).digest('hex');
        await tx.auditEntry.create({
          data: {
            ...{ seq, at, actor: 'legacy', action: 'test.legacy', targetType: 'test', targetId: `legacy-${i}` },
            ...{ data: JSON.parse(data), prevHash, hash },
          },
        });
      });
      await db.$transaction((tx) =>
        appendAudit(tx, { actor: 'test', action: 'test.legacy', targetType: 'test', targetId: `now-${i}` }),
      );
    }
    expect(await verifyAuditChain()).toMatchObject({
      ok: true,
      head: (await db.auditEntry.findFirstOrThrow({ orderBy: { seq: 'desc' } })).hash,
    });
  });

  // These three break the chain for good, so they run last and in this order.
  it('detects an edited entry and names it', async () => {
    const target = await db.auditEntry.findFirstOrThrow({
      where: { action: 'test.concurrent' },
      orderBy: { seq: 'asc' },
    });
    await tamper(`UPDATE audit_entries SET actor = 'mallory' WHERE seq = $1`, [target.seq]);
    expect(await verifyAuditChain()).toMatchObject({ ok: false, firstBrokenEntry: Number(target.seq) });
    await tamper(`UPDATE audit_entries SET actor = $2 WHERE seq = $1`, [target.seq, target.actor]);
    expect(await verifyAuditChain()).toMatchObject({ ok: true });
  });

  it('detects a deleted entry', async () => {
    const target = await db.auditEntry.findFirstOrThrow({
      where: { action: 'test.concurrent' },
      orderBy: { seq: 'desc' },
      skip: 3,
    });
    await tamper(`DELETE FROM audit_entries WHERE seq = $1`, [target.seq]);
    expect(await verifyAuditChain()).toMatchObject({ ok: false, firstBrokenEntry: Number(target.seq) });
    await tamper(`INSERT INTO audit_entries SELECT * FROM json_populate_record(NULL::audit_entries, $1)`, [
      JSON.stringify({
        seq: String(target.seq),
        at: target.at,
        actor: target.actor,
        action: target.action,
        target_type: target.targetType,
        target_id: target.targetId,
        data: target.data,
        prev_hash: target.prevHash,
        hash: target.hash,
      }),
    ]);
    expect(await verifyAuditChain()).toMatchObject({ ok: true });
  });

  it('detects an inserted entry', async () => {
    const last = await db.auditEntry.findFirstOrThrow({ orderBy: { seq: 'desc' } });
    await tamper(
      `INSERT INTO audit_entries (seq, at, actor, action, target_type, target_id, data, prev_hash, hash) VALUES ($1, now(), 'mallory', 'user.create', 'user', 'x', '{}', $2, $3)`,
      [String(last.seq + 1n), last.hash, 'sha256:' + 'f'.repeat(64)],
    );
    expect(await verifyAuditChain()).toMatchObject({ ok: false, firstBrokenEntry: Number(last.seq + 1n) });
  });
});
