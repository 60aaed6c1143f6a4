// A PostgreSQL primary and a real streaming replica of it on loopback, from the embedded binaries
// (the embedded binaries have no pg_basebackup): the primary is initialised and migrated, stopped cleanly, its data folder copied,
// the copy given standby.signal and primary_conninfo, and both started. Under /tmp, which the
// postgres user can reach when tests run as root. Always removed by close(), and by a last-resort
// exit hook if the process ends without it.
import { execFileSync } from 'node:child_process';
import { appendFileSync, chmodSync, copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../scripts/lib/embedded-postgres';
import { applyMigrations } from '../scripts/lib/migrations';

type Cluster = Awaited<ReturnType<typeof startEmbeddedPostgres>>;

export type ReplicatedPair = {
  /** Connection strings of the database `countersign` on each side. */
  primaryUrl: string;
  replicaUrl: string;
  primary: Cluster;
  replica: Cluster;
  /** One statement on the replica (as an administrator). */
  onReplica: <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => Promise<R[]>;
  /** Stops or resumes replaying WAL on the replica (it keeps receiving it). */
  pauseReplay: () => Promise<void>;
  resumeReplay: () => Promise<void>;
  /** Resolves once the replica has replayed everything the primary has written so far. */
  caughtUp: () => Promise<void>;
  close: () => Promise<void>;
};

const DB = 'countersign';

async function query<R extends pg.QueryResultRow>(url: string, text: string, values?: unknown[]): Promise<R[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<R>(text, values)).rows;
  } finally {
    await c.end();
  }
}

export async function startReplicatedPair(): Promise<ReplicatedPair> {
  const root = mkdtempSync(path.join(tmpdir(), 'countersign-replica-'));
  chmodSync(root, 0o711); // the postgres user must reach the data folders below
  let primary: Cluster | undefined;
  let replica: Cluster | undefined;
  const stopAll = () => {
    replica?.stop('immediate');
    primary?.stop('fast');
    rmSync(root, { recursive: true, force: true });
  };
  process.once('exit', stopAll);
  try {
    primary = await startEmbeddedPostgres(path.join(root, 'primary'), { port: 'free' });
    await query(primary.url(), `CREATE DATABASE ${DB}`);
    await applyMigrations(primary.url(DB));
    primary.stop('fast');

    // The copy of a cleanly stopped primary is a consistent base backup.
    const replicaDir = path.join(root, 'replica');
    execFileSync('mkdir', ['-m', '711', replicaDir]);
    execFileSync('cp', ['-a', primary.dataDir, path.join(replicaDir, 'pg')]);
    copyFileSync(path.join(root, 'primary', 'pg-password'), path.join(replicaDir, 'pg-password'));
    const pgData = path.join(replicaDir, 'pg');
    const owned = (file: string) => {
      if (process.getuid?.() === 0) execFileSync('chown', ['--reference', pgData, file]);
    };
    writeFileSync(path.join(pgData, 'standby.signal'), '');
    owned(path.join(pgData, 'standby.signal'));
    const conninfo = `host=127.0.0.1 port=${primary.port} user=postgres password=${primary.password} application_name=countersign-test-replica`;
    appendFileSync(path.join(pgData, 'postgresql.auto.conf'), `primary_conninfo = '${conninfo}'\n`);
    rmSync(path.join(pgData, 'server.log'), { force: true });

    primary.start();
    replica = await startEmbeddedPostgres(replicaDir, { port: 'free' });
  } catch (err) {
    stopAll();
    process.removeListener('exit', stopAll);
    throw err;
  }
  const p = primary;
  const r = replica;
  const onReplica = <R extends pg.QueryResultRow>(text: string, values?: unknown[]) =>
    query<R>(r.url(DB), text, values);

  const caughtUp = async () => {
    const [{ lsn }] = await query<{ lsn: string }>(p.url(), 'SELECT pg_current_wal_lsn()::text AS lsn');
    for (let i = 0; i < 200; i++) {
      const [{ behind }] = await onReplica<{ behind: boolean }>(
        'SELECT pg_wal_lsn_diff($1::pg_lsn, pg_last_wal_replay_lsn()) > 0 AS behind',
        [lsn],
      );
      if (!behind) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error('the replica did not catch up within 5 s');
  };

  return {
    primaryUrl: p.url(DB),
    replicaUrl: r.url(DB),
    primary: p,
    replica: r,
    onReplica,
    pauseReplay: async () => void (await onReplica('SELECT pg_wal_replay_pause()')),
    resumeReplay: async () => void (await onReplica('SELECT pg_wal_replay_resume()')),
    caughtUp,
    close: async () => {
      process.removeListener('exit', stopAll);
      stopAll();
    },
  };
}
