// Where the CPU went during a phase (Linux /proc): the console's process group, PostgreSQL's
// processes, this benchmark process (the load generator shares the machine), and the rest.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';

const TICK_MS = 10; // USER_HZ is 100 on every Linux the project targets

type Snapshot = {
  at: number;
  machineBusyMs: number;
  stolenMs: number;
  appMs: number;
  /** Per PostgreSQL process (other databases' sessions come and go meanwhile on a shared server). */
  postgres: Map<string, number>;
  selfMs: number;
};
export type CpuShare = {
  seconds: number;
  cores: number;
  machine: number;
  app: number;
  postgres: number;
  bench: number;
  other: number;
  /** Cores' worth of time the host did not run this VM's ready vCPUs (steal): a stall no process here caused. */
  stolen: number;
};

/** The machine's /proc/stat line: busy time and the time the host gave its vCPUs to others (steal). */
function machineTimes(): { busyMs: number; stolenMs: number } {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
  // user nice system idle iowait irq softirq steal …
  const n = fields.map(Number);
  const busy = n[0] + n[1] + n[2] + n[5] + n[6];
  return { busyMs: busy * TICK_MS, stolenMs: (n[7] ?? 0) * TICK_MS };
}
const machineBusyMs = () => machineTimes().busyMs;

function processesMs(appGroup: number): { app: number; postgres: Map<string, number> } {
  let app = 0;
  const postgres = new Map<string, number>();
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ms = (Number(f[11]) + Number(f[12])) * TICK_MS; // utime, stime
    if (Number(f[2]) === appGroup) app += ms;
    else if (comm === 'postgres') postgres.set(pid, ms);
  }
  return { app, postgres };
}

function snapshot(appGroup: number): Snapshot {
  const { user, system } = process.cpuUsage();
  const { app, postgres } = processesMs(appGroup);
  const { busyMs, stolenMs } = machineTimes();
  return {
    at: performance.now(),
    machineBusyMs: busyMs,
    stolenMs,
    appMs: app,
    postgres,
    selfMs: (user + system) / 1000,
  };
}

/** Starts counting; `stop()` gives each part's CPU as cores used on average (1.0 = one core busy). Null off Linux. */
export function cpuMeter(appGroup: number): { stop: () => CpuShare } | null {
  if (!existsSync('/proc/stat')) return null;
  const a = snapshot(appGroup);
  return {
    stop: () => {
      const b = snapshot(appGroup);
      const wall = b.at - a.at;
      const share = (x: number) => x / wall;
      const machine = share(b.machineBusyMs - a.machineBusyMs);
      const app = share(b.appMs - a.appMs);
      // A process that ended meanwhile is not counted (its last ticks are lost); one that started
      // counts from zero. Summing totals instead would go negative when a busy session ends.
      let pgMs = 0;
      for (const [pid, ms] of b.postgres) pgMs += ms - (a.postgres.get(pid) ?? 0);
      const postgres = share(pgMs);
      const bench = share(b.selfMs - a.selfMs);
      return {
        seconds: wall / 1000,
        cores: os.availableParallelism(),
        machine,
        app,
        postgres,
        bench,
        other: Math.max(0, machine - app - postgres - bench),
        stolen: share(b.stolenMs - a.stolenMs),
      };
    },
  };
}

export const describeCpu = (c: CpuShare) =>
  `CPU (cores busy of ${c.cores}): machine ${c.machine.toFixed(2)} = console ${c.app.toFixed(2)} + PostgreSQL ${c.postgres.toFixed(2)} + load generator ${c.bench.toFixed(2)} + other ${c.other.toFixed(2)}; stolen by the host ${c.stolen.toFixed(2)}`;

/** Several phases' shares as one, each weighted by its length. */
export function mergeCpu(shares: (CpuShare | undefined)[]): CpuShare | undefined {
  const got = shares.filter((s): s is CpuShare => !!s);
  if (!got.length) return undefined;
  const seconds = got.reduce((a, s) => a + s.seconds, 0);
  const avg = (k: 'machine' | 'app' | 'postgres' | 'bench' | 'other' | 'stolen') =>
    got.reduce((a, s) => a + s[k] * s.seconds, 0) / seconds;
  return {
    seconds,
    cores: got[0].cores,
    machine: avg('machine'),
    app: avg('app'),
    postgres: avg('postgres'),
    bench: avg('bench'),
    other: avg('other'),
    stolen: avg('stolen'),
  };
}

/**
 * Waits until the whole machine has been nearly idle (at most `maxCores` busy) over a 5-second
 * window, for at most `limitMs`; answers how long it waited and the busy cores of the last
 * window. For long benchmarks on a shared machine: what is measured waits for others' work to
 * stop; what only prepares (loading rows) goes on meanwhile.
 */
export async function waitForQuiet(
  maxCores: number,
  limitMs = 30 * 60_000,
): Promise<{ waitedMs: number; cores: number; quiet: boolean }> {
  const t0 = Date.now();
  for (;;) {
    const a = machineBusyMs();
    const at = Date.now();
    await new Promise((r) => setTimeout(r, 5_000));
    const cores = (machineBusyMs() - a) / (Date.now() - at);
    const waitedMs = Date.now() - t0;
    if (cores <= maxCores || waitedMs >= limitMs) return { waitedMs, cores, quiet: cores <= maxCores };
  }
}
