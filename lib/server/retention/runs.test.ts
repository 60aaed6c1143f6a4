import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import pg from 'pg';
import { purgeExpiredOutcomes } from './retention';
import { getRetentionStatus } from './status';
import { runScheduledPurge, startRetentionSchedule, stopRetentionSchedule } from './job';
import { revokeApproval } from '../approvals';
import { verifyAuditChain } from '../audit/audit';
import { RETENTION_ENV } from '@/lib/outcomes/retention';
import { config } from '@/lib/config';
import { setEnv } from '@/testing/env';
import {
  value,
  reviewer,
  admin,
  setUpRetentionActors,
  resetRetention,
  oldRecords,
  countOf,
  ran,
  purgeEntries,
  requestFor,
} from '@/testing/retention-fixtures';

beforeAll(setUpRetentionActors);
afterEach(resetRetention);

describe('an interrupted purge', () => {
  it('stops when its lock connection is lost, and audits the batches it committed', async () => {
    const ref = await oldRecords(300);
    const before = (await purgeEntries()).length;
    const run = purgeExpiredOutcomes({ batchSize: 1 }).then(
      () => null,
      (e: Error) => e,
    );
    // Once some batches are in, end the session that holds the purge lock (as a dropped connection would).
    const watcher = new pg.Client({ connectionString: config().DATABASE_URL });
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
         WHERE locktype = 'advisory' AND granted AND classid = x'72657465'::int::oid AND objid = x'6e74696f'::int::oid AND objsubid = 1
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
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
    const url = config().DATABASE_URL;
    setEnv({ DATABASE_URL: 'postgresql://postgres@127.0.0.1:1/nowhere' });
    const log = { log: vi.fn(), error: vi.fn() };
    try {
      await expect(runScheduledPurge(log)).resolves.toBeUndefined();
    } finally {
      setEnv({ DATABASE_URL: url });
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

    setEnv({ [RETENTION_ENV]: 'forever' });
    expect(() => startRetentionSchedule(run, log)).toThrow(/OUTCOME_RETENTION_DAYS must be/);
    setEnv({ [RETENTION_ENV]: 'OFF' });
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

    setEnv({ [RETENTION_ENV]: 'soon' });
    const invalid = value(await getRetentionStatus(admin)).setting;
    expect(invalid).toMatchObject({
      enabled: false,
      invalid: expect.stringMatching(/^OUTCOME_RETENTION_DAYS must be/),
    });
    value(await revokeApproval(admin, { id: approval.id, reason: 'clean up' }));
  });
});
