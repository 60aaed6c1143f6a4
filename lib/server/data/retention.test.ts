import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import pg from 'pg';
import { getRetentionStatus, purgeExpiredOutcomes, PURGE_ACTION, type PurgeReport } from './retention';
import { runScheduledPurge, startRetentionSchedule, stopRetentionSchedule } from '../jobs/retention';
import { ingestOutcomes } from './outcomes';
import { decideApproval, requestApproval, revokeApproval } from './approvals';
import { redeemGrant } from './grants';
import { verifyAuditChain } from './audit';
import { createApiKey, type ApiClient } from './credentials';
import { trustServer } from './trusted-servers';
import { makeUser, uniq } from '../../../testing/factories';
import { db } from './db';
import type { Viewer } from '@/lib/auth/permissions';
import type { ApiScope } from '@/lib/credentials/scopes';
import { approvalRequestSchema } from '@/lib/approvals/schemas';
import { outcomeBatchSchema, type Outcome } from '@/lib/outcomes/schemas';
import { RETENTION_ENV } from '@/lib/outcomes/retention';
import type { Result } from '@/lib/result';
import { cli } from '@/lib/auth/actor';

// ── factories ───────────────────────────────────────────────────────────────────────────────

const TRUSTED = 'retention-mcp';
const DAY_MS = 86_400_000;
const digest = (n: number) => `sha256:${n.toString(16).padStart(2, '0').repeat(32)}`;

async function makeKey(scopes: ApiScope[]): Promise<ApiClient> {
  const created = await createApiKey(cli, { name: uniq('key'), scopes });
  if (!created.ok) throw new Error(created.failure);
  return { kind: 'apiKey', keyId: created.value.key.id, name: created.value.key.name, scopes, organization: null };
}

function value<T>(result: Result<T>): T {
  if (!result.ok) throw new Error(`${result.failure}: ${result.detail ?? ''}`);
  return result.value;
}

let writer: ApiClient;
let requester: ApiClient;
let redeemer: ApiClient;
let reviewer: Viewer;
let admin: Viewer;

beforeAll(async () => {
  await trustServer(cli, TRUSTED);
  writer = await makeKey(['outcomes:write']);
  requester = await makeKey(['approvals:request']);
  redeemer = await makeKey(['grants:redeem']);
  reviewer = await makeUser('reviewer');
  admin = await makeUser('admin');
});

afterEach(() => {
  delete process.env[RETENTION_ENV];
  vi.useRealTimers();
  stopRetentionSchedule();
});

const record = (requestRef: string, over: Partial<Outcome> = {}): Outcome => ({
  eventId: uniq('evt'),
  occurredAt: '2026-11-30T12:00:00Z',
  requestRef,
  organization: 'acme',
  principal: 'user_193',
  server: TRUSTED,
  tool: { name: 'get_order' },
  observed: { sent: true, httpStatus: 200, result: { isError: false } },
  ...over,
});

/** Ingests `n` records of a request reference (in batches of up to 1000), as the API does. */
async function ingest(requestRef: string, n: number, over: Partial<Outcome> = {}): Promise<void> {
  for (let i = 0; i < n; i += 1000) {
    const records = Array.from({ length: Math.min(1000, n - i) }, () => record(requestRef, over));
    value(await ingestOutcomes(writer, outcomeBatchSchema.parse({ records })));
  }
}

/** Moves the receipt of a request reference's records `days` into the past. */
const receivedDaysAgo = (requestRef: string, days: number) =>
  db.$executeRaw`UPDATE outcome_records SET received_at = now() - make_interval(days => ${days}::int) WHERE request_ref = ${requestRef}`;

async function oldRecords(n: number, over: Partial<Outcome> = {}): Promise<string> {
  const ref = uniq('old');
  await ingest(ref, n, over);
  await receivedDaysAgo(ref, 91);
  return ref;
}

const countOf = (requestRef: string) => db.outcomeRecord.count({ where: { requestRef } });

function ran(r: PurgeReport): Extract<PurgeReport, { ran: true }> {
  if (!r.ran) throw new Error(`the purge did not run: ${r.reason}`);
  return r;
}

const purgeEntries = () => db.auditEntry.findMany({ where: { action: PURGE_ACTION }, orderBy: { seq: 'asc' } });

const approvalBody = (requestRef: string, over: Record<string, unknown> = {}) =>
  approvalRequestSchema.parse({
    requestRef,
    organization: 'acme',
    principal: 'user_193',
    server: TRUSTED,
    argsDigest: digest(1),
    summary: 'Update the note',
    // One approval needed: a trusted server's write that is neither destructive nor open-world.
    tool: { name: 'update_note', annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false } },
    ...over,
  });
const requestFor = async (requestRef: string, over: Record<string, unknown> = {}) =>
  value(await requestApproval(requester, uniq('idem'), approvalBody(requestRef, over))).approval;
// Trusted read-only: no approval needed, a grant at once.
const grantFor = async (requestRef: string) =>
  (await requestFor(requestRef, { tool: { name: 'get_order', annotations: { readOnlyHint: true } } })).grant!;

// ── tests ───────────────────────────────────────────────────────────────────────────────────

describe('purgeExpiredOutcomes (real PostgreSQL)', () => {
  it('deletes records received before the cutoff, keeps recent ones, and judges by receipt, not occurredAt', async () => {
    const old = await oldRecords(5);
    const edge = uniq('edge');
    await ingest(edge, 2);
    await receivedDaysAgo(edge, 89);
    // Occurred long ago by the caller's clock, but received now: kept for the whole period.
    const backfilled = uniq('backfill');
    await ingest(backfilled, 3, { occurredAt: '2020-01-01T00:00:00Z' });

    const r = ran(await purgeExpiredOutcomes({ actor: 'test' }));
    expect(r).toMatchObject({ retentionDays: 90, deleted: 5, kept: 0, batches: 1 });
    const [{ now }] = await db.$queryRaw<{ now: Date }[]>`SELECT now() AS now`;
    expect(Math.abs(now.getTime() - 90 * DAY_MS - r.cutoff.getTime())).toBeLessThan(5_000);
    expect([await countOf(old), await countOf(edge), await countOf(backfilled)]).toEqual([0, 2, 3]);

    // Once past the period they go too.
    await receivedDaysAgo(edge, 90);
    await receivedDaysAgo(backfilled, 120);
    expect(ran(await purgeExpiredOutcomes())).toMatchObject({ deleted: 5, kept: 0 });
    expect([await countOf(edge), await countOf(backfilled)]).toEqual([0, 0]);
  });

  it('honours OUTCOME_RETENTION_DAYS, refuses a bad value naming the variable, and does nothing when off', async () => {
    const ref = uniq('ret');
    await ingest(ref, 4);
    await receivedDaysAgo(ref, 8);

    process.env[RETENTION_ENV] = 'off';
    expect(await purgeExpiredOutcomes()).toEqual({ ran: false, reason: 'off' });
    process.env[RETENTION_ENV] = '10';
    expect(ran(await purgeExpiredOutcomes())).toMatchObject({ retentionDays: 10, deleted: 0 });
    expect(await countOf(ref)).toBe(4);

    for (const bad of ['0', '-5', '7.5', 'ninety', '90d', '36501']) {
      process.env[RETENTION_ENV] = bad;
      await expect(purgeExpiredOutcomes(), bad).rejects.toThrow(
        /^OUTCOME_RETENTION_DAYS must be a whole number of days/,
      );
    }
    expect(await countOf(ref)).toBe(4);

    process.env[RETENTION_ENV] = '7';
    expect(ran(await purgeExpiredOutcomes())).toMatchObject({ retentionDays: 7, deleted: 4 });
    expect(await countOf(ref)).toBe(0);
  });

  it('keeps records tied to a pending approval or a live grant, and purges them once it is settled', async () => {
    const pendingRef = await oldRecords(3);
    const pending = await requestFor(pendingRef);
    expect(pending.status).toBe('pending');
    const revokedRef = await oldRecords(2);
    const revoked = await requestFor(revokedRef);
    const expiringRef = await oldRecords(2);
    await requestFor(expiringRef, { pendingTtlSeconds: 60 });
    const grantRef = await oldRecords(2);
    const grant = await grantFor(grantRef);
    // Another request reference, but naming the live grant.
    const namingGrant = await oldRecords(1, { grantId: grant.id });
    const deniedRef = await oldRecords(4);
    const denied = await requestFor(deniedRef);
    value(
      await decideApproval(reviewer, {
        id: denied.id,
        decision: 'deny',
        reason: 'not this one',
        version: denied.version,
      }),
    );
    value(await revokeApproval(admin, { id: revoked.id, reason: 'withdrawn' }));
    const plain = await oldRecords(3);

    const first = ran(await purgeExpiredOutcomes());
    expect(first).toMatchObject({ deleted: 4 + 2 + 3, kept: 3 + 2 + 2 + 1 });
    expect(
      await Promise.all([pendingRef, expiringRef, grantRef, namingGrant, deniedRef, revokedRef, plain].map(countOf)),
    ).toEqual([3, 2, 2, 1, 0, 0, 0]);

    // Two minutes on, the 60-second request has expired (read by the clock, no sweep needed).
    const later = new Date(Date.now() + 120_000);
    expect(ran(await purgeExpiredOutcomes({ now: later }))).toMatchObject({ deleted: 2, kept: 3 + 2 + 1 });
    expect(await countOf(expiringRef)).toBe(0);

    // Decided, and redeemed: nothing is in play any more.
    value(await decideApproval(reviewer, { id: pending.id, decision: 'deny', reason: 'no', version: pending.version }));
    value(await redeemGrant(redeemer, grant.id, { server: TRUSTED, tool: 'get_order', argsDigest: digest(1) }));
    expect(ran(await purgeExpiredOutcomes())).toMatchObject({ deleted: 3 + 2 + 1, kept: 0 });
    expect(await Promise.all([pendingRef, grantRef, namingGrant].map(countOf))).toEqual([0, 0, 0]);
  });

  it('works in batches: 10 old records with a batch size of 3 take 4 batches, one audit entry', async () => {
    const before = (await purgeEntries()).length;
    const ref = await oldRecords(10);
    const r = ran(await purgeExpiredOutcomes({ batchSize: 3, actor: 'test' }));
    expect(r).toMatchObject({ deleted: 10, batches: 4 });
    expect(await countOf(ref)).toBe(0);

    // A multiple of the batch size: the last statement finds nothing, and is no batch.
    const nine = await oldRecords(9);
    expect(ran(await purgeExpiredOutcomes({ batchSize: 3 }))).toMatchObject({ deleted: 9, batches: 3 });
    expect(await countOf(nine)).toBe(0);
    expect((await purgeEntries()).length).toBe(before + 2);

    await expect(purgeExpiredOutcomes({ batchSize: 0 })).rejects.toThrow(/batchSize/);
  });

  it('audits each run that deletes something, with its counts, and the chain verifies', async () => {
    const before = await purgeEntries();
    const kept = await oldRecords(2);
    const approval = await requestFor(kept);
    await oldRecords(7);
    const r = ran(await purgeExpiredOutcomes({ batchSize: 5, actor: 'test' }));
    expect(r).toMatchObject({ deleted: 7, kept: 2, batches: 2 });

    // Nothing left to delete: no entry.
    expect(ran(await purgeExpiredOutcomes())).toMatchObject({ deleted: 0, kept: 2, batches: 0 });
    const entries = await purgeEntries();
    expect(entries.length).toBe(before.length + 1);
    const entry = entries.at(-1)!;
    expect(entry).toMatchObject({
      actor: 'test',
      action: 'outcomes.purge',
      targetType: 'outcome_records',
      targetId: 'retention',
    });
    expect(entry.data).toEqual({
      retentionDays: 90,
      cutoff: r.cutoff.toISOString(),
      deleted: 7,
      kept: 2,
      batches: 2,
      batchSize: 5,
      completed: true,
    });
    expect(await verifyAuditChain()).toMatchObject({ ok: true });

    value(await revokeApproval(admin, { id: approval.id, reason: 'clean up' }));
    expect(ran(await purgeExpiredOutcomes())).toMatchObject({ deleted: 2, kept: 0 });
  });

  it('loses nothing ingested while a purge runs', async () => {
    const old = await oldRecords(2_000);
    const fresh = uniq('fresh');
    let purging = true;
    const purge = purgeExpiredOutcomes({ batchSize: 100 }).finally(() => (purging = false));
    // Three writers post batches until the purge is over (and at least three each).
    const writers = Array.from({ length: 3 }, async () => {
      let batches = 0;
      let whilePurging = 0;
      while (purging || batches < 3) {
        await ingest(fresh, 50);
        batches++;
        if (purging) whilePurging++;
      }
      return { batches, whilePurging };
    });
    const [report, ...written] = await Promise.all([purge, ...writers]);
    expect(ran(report)).toMatchObject({ deleted: 2_000, batches: 20 });
    // A real race: batches were stored while the purge was still deleting.
    expect(written.reduce((n, w) => n + w.whilePurging, 0)).toBeGreaterThan(0);
    expect(await countOf(old)).toBe(0);
    expect(await countOf(fresh)).toBe(50 * written.reduce((n, w) => n + w.batches, 0));
  });

  it('runs once at a time: a second purge skips while one runs, and ingestion never waits for it', async () => {
    const ref = await oldRecords(3);
    // Hold the audit table: the purge then stops in its last transaction, rows deleted but
    // uncommitted, holding the purge lock.
    const blocker = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await blocker.connect();
    let first!: Promise<PurgeReport>;
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE audit_entries IN EXCLUSIVE MODE');
      first = purgeExpiredOutcomes();
      for (let waited = 0; ; waited += 20) {
        const { rows } = await blocker.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = 'audit_entries'::regclass",
        );
        if (rows[0].n >= 1) break;
        if (waited > 15_000) throw new Error('the purge never reached its audit entry');
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(await purgeExpiredOutcomes()).toEqual({ ran: false, reason: 'busy' });

      const fresh = uniq('fresh');
      const t0 = Date.now();
      await ingest(fresh, 50);
      expect(Date.now() - t0).toBeLessThan(5_000);
      expect(await countOf(fresh)).toBe(50);
    } finally {
      await blocker.query('COMMIT');
      await blocker.end();
    }
    expect(ran(await first)).toMatchObject({ deleted: 3 });
    expect(await countOf(ref)).toBe(0);
    // The lock is free again.
    expect((await purgeExpiredOutcomes()).ran).toBe(true);
  });
});

describe('an interrupted purge', () => {
  it('stops when its lock connection is lost, and audits the batches it committed', async () => {
    const ref = await oldRecords(300);
    const before = (await purgeEntries()).length;
    const run = purgeExpiredOutcomes({ batchSize: 1 }).then(
      () => null,
      (e: Error) => e,
    );
    // Once some batches are in, end the session that holds the purge lock (as a dropped connection would).
    const watcher = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await watcher.connect();
    try {
      for (let waited = 0; ; waited += 10) {
        const { rows } = await watcher.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM outcome_records WHERE request_ref = $1',
          [ref],
        );
        if (rows[0].n < 295) break;
        if (waited > 15_000) throw new Error('the purge never started');
        await new Promise((r) => setTimeout(r, 10));
      }
      const { rowCount } = await watcher.query(
        `SELECT pg_terminate_backend(pid) FROM pg_locks
         WHERE locktype = 'advisory' AND granted AND classid = x'72657465'::int::oid AND objid = x'6e74696f'::int::oid AND objsubid = 1`,
      );
      expect(rowCount).toBe(1);
    } finally {
      await watcher.end();
    }
    const err = await run;
    expect(err?.message).toMatch(/lost its lock/);
    const entries = await purgeEntries();
    expect(entries.length).toBe(before + 1);
    const data = entries.at(-1)!.data as { deleted: number; kept: number | null; batches: number; completed: boolean };
    expect(data).toMatchObject({ kept: null, completed: false });
    expect(data.deleted).toBeGreaterThanOrEqual(5);
    expect(data.batches).toBe(data.deleted);
    expect(await countOf(ref)).toBe(300 - data.deleted);
    expect(await verifyAuditChain()).toMatchObject({ ok: true });

    // The next run carries on.
    expect(ran(await purgeExpiredOutcomes())).toMatchObject({ deleted: 300 - data.deleted });
  });
});

describe('the schedule', () => {
  it('logs one line and carries on when the database is down', async () => {
    const url = process.env.DATABASE_URL;
    process.env.DATABASE_URL = 'postgresql://postgres@127.0.0.1:1/nowhere';
    const log = { log: vi.fn(), error: vi.fn() };
    try {
      await expect(runScheduledPurge(log)).resolves.toBeUndefined();
    } finally {
      process.env.DATABASE_URL = url;
    }
    expect(log.error).toHaveBeenCalledTimes(1);
    expect(log.error.mock.calls[0][0]).toBe(
      '[retention] purge failed: the database is unavailable; next try in an hour',
    );
    expect(log.log).not.toHaveBeenCalled();
  });

  it('logs what a scheduled run deleted', async () => {
    await oldRecords(2);
    const log = { log: vi.fn(), error: vi.fn() };
    await runScheduledPurge(log);
    expect(log.error).not.toHaveBeenCalled();
    expect(log.log.mock.calls[0][0]).toMatch(
      /^\[retention\] Purged 2 outcome records received before \S+ \(90 days\) in 1 batch\.$/,
    );
    const entry = (await purgeEntries()).at(-1)!;
    expect(entry.actor).toBe('system');
  });

  it('runs a minute after start, then hourly; refuses a bad setting at start', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'setInterval', 'clearTimeout', 'clearInterval'] });
    const run = vi.fn();
    const log = { log: vi.fn(), error: vi.fn() };
    expect(startRetentionSchedule(run, log)).toBe('started');
    expect(startRetentionSchedule(run, log)).toBe('running');
    vi.advanceTimersByTime(59_000);
    expect(run).toHaveBeenCalledTimes(0);
    vi.advanceTimersByTime(1_000);
    expect(run).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(3 * 3_600_000);
    expect(run).toHaveBeenCalledTimes(4);
    stopRetentionSchedule();
    vi.advanceTimersByTime(3_600_000);
    expect(run).toHaveBeenCalledTimes(4);

    vi.useRealTimers();
    // Real timers, unref'd: they never keep a process (the CLI, a test run) alive.
    startRetentionSchedule(run, log);
    const timers = (globalThis as unknown as { countersignRetention?: NodeJS.Timeout[] }).countersignRetention ?? [];
    expect(timers.length).toBe(2);
    expect(timers.map((t) => t.hasRef())).toEqual([false, false]);
    stopRetentionSchedule();

    process.env[RETENTION_ENV] = 'forever';
    expect(() => startRetentionSchedule(run, log)).toThrow(/OUTCOME_RETENTION_DAYS must be/);
    process.env[RETENTION_ENV] = 'OFF';
    expect(startRetentionSchedule(run, log)).toBe('off');
    expect(log.log).toHaveBeenCalledWith(
      '[retention] off (OUTCOME_RETENTION_DAYS=off): outcome records are kept forever',
    );
  });
});

describe('getRetentionStatus', () => {
  it('shows admins the setting and the last purge that deleted something; nobody else', async () => {
    expect(await getRetentionStatus(reviewer)).toEqual({ ok: false, failure: 'forbidden' });
    const kept = await oldRecords(1);
    const approval = await requestFor(kept);
    await oldRecords(4);
    const r = ran(await purgeExpiredOutcomes());
    await purgeExpiredOutcomes(); // deletes nothing: not the "last purge"
    const status = value(await getRetentionStatus(admin));
    expect(status.setting).toEqual({ enabled: true, days: 90 });
    expect(status.lastPurge).toMatchObject({ deleted: 4, kept: 1, cutoff: r.cutoff.toISOString() });
    expect(Date.now() - status.lastPurge!.at.getTime()).toBeLessThan(60_000);

    process.env[RETENTION_ENV] = 'soon';
    const invalid = value(await getRetentionStatus(admin)).setting;
    expect(invalid).toMatchObject({
      enabled: false,
      invalid: expect.stringMatching(/^OUTCOME_RETENTION_DAYS must be/),
    });
    value(await revokeApproval(admin, { id: approval.id, reason: 'clean up' }));
  });
});
