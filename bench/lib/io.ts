// What a phase read from disk (Linux /proc): so a figure says whether it was served from memory.
import { readFileSync } from 'node:fs';

type IoSnapshot = { at: number; sectorsRead: number; readMs: number; iowaitMs: number };
export type IoShare = { mib: number; readMs: number; iowaitCores: number; cachedGiB: number };

function snapshot(): IoSnapshot {
  let sectorsRead = 0;
  let readMs = 0;
  for (const line of readFileSync('/proc/diskstats', 'utf8').split('\n')) {
    const f = line.trim().split(/\s+/);
    // Whole virtio, SCSI or NVMe disks only: their partitions would count the same reads twice.
    if (!/^(vd[a-z]+|sd[a-z]+|xvd[a-z]+|nvme\d+n\d+)$/.test(f[2] ?? '')) continue;
    sectorsRead += Number(f[5]);
    readMs += Number(f[6]);
  }
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
  return { at: performance.now(), sectorsRead, readMs, iowaitMs: Number(cpu[5]) * 10 };
}

/** Starts counting; the returned function gives what the disks read since (sectors are 512 bytes). */
export function ioMeter(): () => IoShare {
  const a = snapshot();
  return () => {
    const b = snapshot();
    const cached = /^Cached:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'));
    return {
      mib: ((b.sectorsRead - a.sectorsRead) * 512) / 2 ** 20,
      readMs: b.readMs - a.readMs,
      iowaitCores: (b.iowaitMs - a.iowaitMs) / (b.at - a.at),
      cachedGiB: cached ? Number(cached[1]) / 2 ** 20 : NaN,
    };
  };
}

export const describeIo = (io: IoShare) =>
  `disk read ${io.mib.toFixed(1)} MiB (${io.readMs} ms of reads), iowait ${io.iowaitCores.toFixed(2)} cores, page cache ${io.cachedGiB.toFixed(1)} GiB`;
