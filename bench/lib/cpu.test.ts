import { describe, expect, it } from 'vitest';
import { cpuMeter, describeCpu, mergeCpu, type CpuShare } from './cpu';

const share = (seconds: number, stolen: number): CpuShare => ({
  seconds,
  cores: 2,
  machine: 1,
  app: 0.5,
  postgres: 0.2,
  bench: 0.1,
  other: 0.2,
  stolen,
});

describe('CPU shares', () => {
  it('say how much time the host took from the machine (steal), apart from what ran here', () => {
    expect(describeCpu(share(10, 0.14))).toBe(
      'CPU (cores busy of 2): machine 1.00 = console 0.50 + PostgreSQL 0.20 + load generator 0.10 + other 0.20; stolen by the host 0.14',
    );
  });

  it('merge phases weighted by their length, steal included', () => {
    // (10 × 0.1 + 30 × 0.3) / 40 = 0.25
    expect(mergeCpu([share(10, 0.1), share(30, 0.3)])?.stolen).toBeCloseTo(0.25, 10);
  });

  it('measure this process: its own busy loop is counted to the load generator, steal is never negative', async () => {
    const meter = cpuMeter(-1);
    expect(meter).not.toBeNull();
    const until = performance.now() + 300;
    while (performance.now() < until); // busy
    await new Promise((r) => setTimeout(r, 10));
    const c = meter!.stop();
    expect(c.bench).toBeGreaterThan(0.2); // of the 300 ms it spun, even on a busy machine
    expect(c.stolen).toBeGreaterThanOrEqual(0);
    expect(c.machine).toBeGreaterThan(0);
  });
});
