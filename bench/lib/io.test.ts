import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeIo, ioMeter } from './io';

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
    });
    expect(text).toBe(
      'disk read 1.3 MiB (3 ms of reads), written 40.0 MiB, iowait 0.02 cores, page cache 21.9 GiB, ' +
        'reclaimed 512.0 MiB in the background and 8.0 MiB by stalled allocations',
    );
  });
});
