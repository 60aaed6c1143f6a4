// What a phase read from and wrote to disk, and what the kernel reclaimed from memory meanwhile
// (Linux /proc): so a figure says whether it was served from memory, and whether it ran while the
// kernel had to free page cache to make room (a page cache holding nearly all of RAM). Only the
// reclaim /proc/vmstat counts as pgsteal_kswapd and pgsteal_direct: a DAMON `pageout` scheme's
// proactive reclaim (as these machines' kernel runs) is not among them, and is read apart from
// the scheme's own statistics (damonPagedOut).
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

type IoSnapshot = {
  at: number;
  sectorsRead: number;
  sectorsWritten: number;
  readMs: number;
  iowaitMs: number;
  reclaimedPages: { kswapd: number; direct: number };
  damonBytes: number | null;
};
export type IoShare = {
  mib: number;
  writtenMib: number;
  readMs: number;
  iowaitCores: number;
  cachedGiB: number;
  /** Page cache the kernel freed: by its background thread, and by the processes themselves (a stall). */
  reclaimedMib: { kswapd: number; direct: number };
  /** Memory DAMON's pageout schemes reclaimed (cold page cache dropped); null without such a scheme. */
  damonMib: number | null;
};

const PAGE = 4096;

function snapshot(): IoSnapshot {
  let sectorsRead = 0;
  let sectorsWritten = 0;
  let readMs = 0;
  for (const line of readFileSync('/proc/diskstats', 'utf8').split('\n')) {
    const f = line.trim().split(/\s+/);
    // Whole virtio, SCSI or NVMe disks only: their partitions would count the same reads twice.
    if (!/^(vd[a-z]+|sd[a-z]+|xvd[a-z]+|nvme\d+n\d+)$/.test(f[2] ?? '')) continue;
    sectorsRead += Number(f[5]);
    readMs += Number(f[6]);
    sectorsWritten += Number(f[9]);
  }
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
  const vm = readFileSync('/proc/vmstat', 'utf8');
  const counter = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(vm)?.[1] ?? NaN);
  return {
    at: performance.now(),
    sectorsRead,
    sectorsWritten,
    readMs,
    iowaitMs: Number(cpu[5]) * 10,
    reclaimedPages: { kswapd: counter('pgsteal_kswapd'), direct: counter('pgsteal_direct') },
    damonBytes: damonPagedOut(),
  };
}

export const DAMON_ADMIN = '/sys/kernel/mm/damon/admin';
const subdirs = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((d) => /^\d+$/.test(d)) : []);
const read = (file: string) => readFileSync(file, 'utf8').trim();

/**
 * Bytes the running DAMON schemes whose action is `pageout` have reclaimed since they started
 * (the kernel's sysfs interface: each kdamond that is on is first asked to refresh its schemes'
 * statistics, which needs root); null where there is no such scheme or it cannot be read.
 */
export function damonPagedOut(admin = DAMON_ADMIN): number | null {
  let total: number | null = null;
  try {
    for (const k of subdirs(path.join(admin, 'kdamonds'))) {
      const kdamond = path.join(admin, 'kdamonds', k);
      if (read(path.join(kdamond, 'state')) !== 'on') continue;
      writeFileSync(path.join(kdamond, 'state'), 'update_schemes_stats');
      for (const c of subdirs(path.join(kdamond, 'contexts'))) {
        const schemes = path.join(kdamond, 'contexts', c, 'schemes');
        for (const s of subdirs(schemes)) {
          if (read(path.join(schemes, s, 'action')) !== 'pageout') continue;
          total = (total ?? 0) + Number(read(path.join(schemes, s, 'stats', 'sz_applied')));
        }
      }
    }
  } catch {
    return null;
  }
  return total;
}

/** Starts counting; the returned function gives what happened since (sectors are 512 bytes). */
export function ioMeter(): () => IoShare {
  const a = snapshot();
  return () => {
    const b = snapshot();
    const cached = /^Cached:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'));
    return {
      mib: ((b.sectorsRead - a.sectorsRead) * 512) / 2 ** 20,
      writtenMib: ((b.sectorsWritten - a.sectorsWritten) * 512) / 2 ** 20,
      readMs: b.readMs - a.readMs,
      iowaitCores: (b.iowaitMs - a.iowaitMs) / (b.at - a.at),
      cachedGiB: cached ? Number(cached[1]) / 2 ** 20 : NaN,
      reclaimedMib: {
        kswapd: ((b.reclaimedPages.kswapd - a.reclaimedPages.kswapd) * PAGE) / 2 ** 20,
        direct: ((b.reclaimedPages.direct - a.reclaimedPages.direct) * PAGE) / 2 ** 20,
      },
      damonMib: a.damonBytes === null || b.damonBytes === null ? null : (b.damonBytes - a.damonBytes) / 2 ** 20,
    };
  };
}

export const describeIo = (io: IoShare) =>
  `disk read ${io.mib.toFixed(1)} MiB (${io.readMs} ms of reads), written ${io.writtenMib.toFixed(1)} MiB, ` +
  `iowait ${io.iowaitCores.toFixed(2)} cores, page cache ${io.cachedGiB.toFixed(1)} GiB, ` +
  `reclaimed ${io.reclaimedMib.kswapd.toFixed(1)} MiB in the background and ${io.reclaimedMib.direct.toFixed(1)} MiB by stalled allocations` +
  (io.damonMib === null ? '' : `, paged out by DAMON ${io.damonMib.toFixed(1)} MiB`);
