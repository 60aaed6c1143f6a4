import {
  closeSync,
  fsyncSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { damonPagedOut, describeIo, ioMeter } from './io';

describe('ioMeter', () => {
  it('counts a synced write of 16 MiB to a file on this machine’s disk among what was written', () => {
    const dir = mkdtempSync(path.join(process.cwd(), '.io-test-'));
    try {
      const meter = ioMeter();
      const fd = openSync(path.join(dir, 'f'), 'w');
      const chunk = Buffer.alloc(2 ** 20, 7);
      for (let i = 0; i < 16; i++) writeSync(fd, chunk);
      fsyncSync(fd);
      closeSync(fd);
      const io = meter();
      expect(io.writtenMib).toBeGreaterThanOrEqual(16);
      expect(io.mib).toBeGreaterThanOrEqual(0);
      expect(io.reclaimedMib.kswapd).toBeGreaterThanOrEqual(0);
      expect(io.reclaimedMib.direct).toBeGreaterThanOrEqual(0);
      expect(io.cachedGiB).toBeGreaterThan(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says each figure with its unit', () => {
    const text = describeIo({
      mib: 1.25,
      writtenMib: 40,
      readMs: 3,
      iowaitCores: 0.02,
      cachedGiB: 21.9,
      reclaimedMib: { kswapd: 512, direct: 8 },
      damonMib: null,
    });
    expect(text).toBe(
      'disk read 1.3 MiB (3 ms of reads), written 40.0 MiB, iowait 0.02 cores, page cache 21.9 GiB, ' +
        'reclaimed 512.0 MiB in the background and 8.0 MiB by stalled allocations',
    );
    const withDamon = describeIo({
      mib: 0,
      writtenMib: 0,
      readMs: 0,
      iowaitCores: 0,
      cachedGiB: 20,
      reclaimedMib: { kswapd: 0, direct: 0 },
      damonMib: 2048,
    });
    expect(withDamon.endsWith(', paged out by DAMON 2048.0 MiB')).toBe(true);
  });
});

/** A DAMON sysfs tree (Documentation/admin-guide/mm/damon/usage.rst) of kdamonds, each a state and its schemes. */
function damonTree(kdamonds: { state: string; schemes: { action: string; applied: number }[] }[]): string {
  const admin = mkdtempSync(path.join(tmpdir(), 'damon-'));
  kdamonds.forEach((k, i) => {
    const kdamond = path.join(admin, 'kdamonds', String(i));
    mkdirSync(kdamond, { recursive: true });
    writeFileSync(path.join(kdamond, 'state'), `${k.state}\n`);
    k.schemes.forEach((s, j) => {
      const scheme = path.join(kdamond, 'contexts', '0', 'schemes', String(j));
      mkdirSync(path.join(scheme, 'stats'), { recursive: true });
      writeFileSync(path.join(scheme, 'action'), `${s.action}\n`);
      writeFileSync(path.join(scheme, 'stats', 'sz_applied'), `${s.applied}\n`);
    });
  });
  return admin;
}

describe('damonPagedOut', () => {
  it('sums what the pageout schemes of running kdamonds applied, after asking each for fresh statistics', () => {
    const admin = damonTree([
      {
        state: 'on',
        schemes: [
          { action: 'pageout', applied: 4096 },
          { action: 'stat', applied: 99 },
        ],
      },
      { state: 'off', schemes: [{ action: 'pageout', applied: 7 }] },
      { state: 'on', schemes: [{ action: 'pageout', applied: 1000 }] },
    ]);
    try {
      expect(damonPagedOut(admin)).toBe(5096);
      expect(readFileSync(path.join(admin, 'kdamonds', '0', 'state'), 'utf8')).toBe('update_schemes_stats');
      expect(readFileSync(path.join(admin, 'kdamonds', '1', 'state'), 'utf8')).toBe('off\n');
    } finally {
      rmSync(admin, { recursive: true, force: true });
    }
  });

  it('is null without DAMON, and without a pageout scheme', () => {
    expect(damonPagedOut(path.join(tmpdir(), 'no-damon-here'))).toBeNull();
    const admin = damonTree([{ state: 'on', schemes: [{ action: 'stat', applied: 12 }] }]);
    try {
      expect(damonPagedOut(admin)).toBeNull();
    } finally {
      rmSync(admin, { recursive: true, force: true });
    }
  });
});
