import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { closeDb, db } from './db';
import { afterOwnWrite, forgetReplicaState, getReplicaStatus, replicaSafe } from './replica';
import { ingestOutcomes, listOutcomes } from '../outcomes';
import { listApprovals } from '../approvals';
import { startReplicatedPair, type ReplicatedPair } from '@/testing/replica';
import { makeUser, uniq } from '@/testing/factories';
import { makeKey, makeRecord, batchOf, value } from '@/testing/outcomes-fixtures';
import { approve, makeApproval, setUpApprovalActors, reviewer, admin } from '@/testing/approvals-fixtures';
import type { Actor } from '@/lib/auth/actor';
import type { Viewer } from '@/lib/auth/permissions';
import { restoreEnv, setEnv } from '@/testing/env';

// A real primary and a real streaming replica (testing/replica.ts). Pausing replay on the replica
// makes the two differ: a read the replica served shows the old state, one the primary served
// the new. That is how each case proves where a read went.

let pair: ReplicatedPair;
let writer: Actor;
let support: Viewer;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  pair = await startReplicatedPair();
  await closeDb();
  setEnv({ DATABASE_URL: pair.primaryUrl, DATABASE_REPLICA_URL: pair.replicaUrl });
  await setUpApprovalActors();
  writer = await makeKey(['outcomes:write', 'outcomes:read']);
  support = await makeUser('support');
}, 120_000);

afterAll(async () => {
  await closeDb();
  restoreEnv();
  await pair?.close();
});

beforeEach(async () => {
  setEnv({
    DATABASE_REPLICA_MAX_LAG_MS: '10000', // a loaded machine must not make a case fall back by itself
    DATABASE_REPLICA_CHECK_MS: '0', // measured at every read, unless a case says otherwise
  });
  forgetReplicaState();
  await pair.resumeReplay().catch(() => {});
  await pair.caughtUp().catch(() => {});
});

/** Writes one record on the primary and waits until the replica has it, then stops replay. */
async function divergeAfter(): Promise<void> {
  value(await ingestOutcomes(writer, batchOf(makeRecord())));
  await pair.caughtUp();
  await pair.pauseReplay();
}

const refsListed = async (requestRef: string) =>
  value(await listOutcomes(support, { requestRef })).items.map((i) => i.requestRef);

describe('reads declared replica-safe', () => {
  it('come from the replica: a record written while replay is paused is not listed, a plain read sees it', async () => {
    await divergeAfter();
    const requestRef = uniq('req');
    value(await ingestOutcomes(writer, batchOf(makeRecord({ requestRef }))));
    expect(await refsListed(requestRef)).toEqual([]); // served by the replica, stale
    expect(await db.outcomeRecord.count({ where: { requestRef } })).toBe(1); // not declared: the primary
    const sessions = await pair.onReplica<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'countersign-replica-reads'",
    );
    expect(sessions[0].n).toBeGreaterThan(0);
    await pair.resumeReplay();
    await pair.caughtUp();
    expect(await refsListed(requestRef)).toEqual([requestRef]);
  });

  it('inside a transaction, go to the primary', async () => {
    await divergeAfter();
    const requestRef = uniq('req');
    value(await ingestOutcomes(writer, batchOf(makeRecord({ requestRef }))));
    const where = { requestRef };
    const both = replicaSafe(async () => [
      await db.outcomeRecord.count({ where }),
      await db.$transaction((tx) => tx.outcomeRecord.count({ where })),
    ]);
    expect(await both()).toEqual([0, 1]);
  });

  it('follow the person’s own write for a few seconds (read-your-writes after a decision), then the replica again', async () => {
    const created = await makeApproval();
    await pair.caughtUp();
    await pair.pauseReplay();
    expect(value(await approve(reviewer, created.id, 1))).toMatchObject({ status: 'approved' });
    const statusOf = async () =>
      value(await listApprovals(admin, {})).items.find((a) => a.id === created.id)?.status ?? 'missing';

    expect(await statusOf()).toBe('pending'); // someone else, on the replica: not yet
    expect(await afterOwnWrite(Date.now(), statusOf)).toBe('approved'); // the one who decided: the primary
    // Past the window (max lag + check interval + 1 s), back to the replica.
    expect(await afterOwnWrite(Date.now() - 11_100, statusOf)).toBe('pending');
    // A timestamp from the future is ignored rather than pinning reads to the primary.
    expect(await afterOwnWrite(Date.now() + 60_000, statusOf)).toBe('pending');
  });

  it('lagging past DATABASE_REPLICA_MAX_LAG_MS, go to the primary, and the status says why', async () => {
    await divergeAfter();
    const requestRef = uniq('req');
    value(await ingestOutcomes(writer, batchOf(makeRecord({ requestRef }))));
    expect(await refsListed(requestRef)).toEqual([]);
    setEnv({ DATABASE_REPLICA_MAX_LAG_MS: '300' });
    await sleep(500);
    expect(await refsListed(requestRef)).toEqual([requestRef]);
    const status = value(await getReplicaStatus(await makeUser('admin')));
    expect(status).toMatchObject({ configured: true, usable: false, maxLagMs: 300 });
    expect(status.configured && status.lagMs).toBeGreaterThan(300);
    expect(status.configured && status.reason).toMatch(/DATABASE_REPLICA_MAX_LAG_MS/);
  });

  it('with the replica caught up, the status shows lag 0 and reads use it', async () => {
    // The admin is a write on the primary: made first, and replayed, before the lag is measured.
    const admin = await makeUser('admin');
    await pair.caughtUp();
    const status = value(await getReplicaStatus(admin));
    expect(status).toMatchObject({ configured: true, usable: true, lagMs: 0, reason: null });
    expect(await getReplicaStatus(support)).toMatchObject({ ok: false, failure: 'forbidden' });
  });
});

describe('the replica stopped', () => {
  afterAll(() => {
    pair.replica.start();
  });

  it('a read already routed to it fails over to the primary, and the next ones skip it', async () => {
    setEnv({ DATABASE_REPLICA_CHECK_MS: '600000' }); // the cached "usable" outlives the stop
    const requestRef = uniq('req');
    value(await ingestOutcomes(writer, batchOf(makeRecord({ requestRef }))));
    await pair.caughtUp();
    expect(await refsListed(requestRef)).toEqual([requestRef]); // on the replica, caching its state
    pair.replica.stop('immediate');
    expect(await refsListed(requestRef)).toEqual([requestRef]);
    const status = value(await getReplicaStatus(await makeUser('admin')));
    expect(status).toMatchObject({ configured: true, usable: false });
    expect(status.configured && status.reason).toMatch(/a read failed/);
  });

  it('reads go to the primary when the check finds it down, never an error', async () => {
    const requestRef = uniq('req');
    value(await ingestOutcomes(writer, batchOf(makeRecord({ requestRef }))));
    const started = Date.now();
    expect(await refsListed(requestRef)).toEqual([requestRef]);
    expect(Date.now() - started).toBeLessThan(3_000);
    const status = value(await getReplicaStatus(await makeUser('admin')));
    expect(status.configured && status.reason).toMatch(/did not answer/);
  });

  it('a DATABASE_REPLICA_URL that is no standby is not used', async () => {
    await closeDb();
    setEnv({ DATABASE_REPLICA_URL: pair.primaryUrl });
    try {
      const status = value(await getReplicaStatus(await makeUser('admin')));
      expect(status).toMatchObject({ configured: true, usable: false });
      expect(status.configured && status.reason).toMatch(/not a standby/);
    } finally {
      await closeDb();
      setEnv({ DATABASE_REPLICA_URL: pair.replicaUrl });
    }
  });
});
