import { describe, expect, it } from 'vitest';
import { achieved, mergeRuns, openLoop, scheduleTimes } from './open-loop';

describe('scheduleTimes', () => {
  it('spaces sends evenly at the rate', () => {
    expect(scheduleTimes(200, 4, 'even')).toEqual([0, 5, 10, 15]);
  });

  it('gives Poisson arrivals the same mean gap, and varied gaps', () => {
    const t = scheduleTimes(200, 20_001, 'poisson', 3);
    const gaps = t.slice(1).map((x, i) => x - t[i]);
    const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
    expect(mean).toBeGreaterThan(4.8);
    expect(mean).toBeLessThan(5.2);
    // Exponential: about 1 − e^{-1} ≈ 63% of the gaps are shorter than the mean.
    const short = gaps.filter((g) => g < 5).length / gaps.length;
    expect(short).toBeGreaterThan(0.6);
    expect(short).toBeLessThan(0.66);
  });
});

describe('openLoop', () => {
  it('measures from the scheduled send time: a server that answers one at a time shows its queue', async () => {
    // A server that takes 40 ms per request and serves one at a time, offered 100/s (one every
    // 10 ms): the n-th request waits for the n before it, and the last of 10 has waited
    // 10 × 40 − 9 × 10 = 310 ms since it was due. A closed loop (the next send after the last
    // answer) would instead see 40 ms each, and send late.
    let free = 0;
    const r = await openLoop({
      rate: 100,
      count: 10,
      schedule: 'even',
      send: async () => {
        const start = Math.max(performance.now(), free);
        free = start + 40;
        await new Promise((res) => setTimeout(res, free - performance.now()));
        return { ok: true };
      },
    });
    expect(r.sent).toBe(10);
    expect(r.ok).toBe(10);
    const last = Math.max(...r.latencies);
    expect(last).toBeGreaterThan(300);
    expect(last).toBeLessThan(400);
    // Sends kept to the schedule although answers were late (no coordinated omission).
    expect(Math.max(...r.sendLag)).toBeLessThan(30);
    expect(r.seconds).toBeGreaterThan(0.39);
  });

  it('counts refusals and thrown requests as errors, keeping the first', async () => {
    const r = await openLoop({
      rate: 1000,
      count: 3,
      schedule: 'even',
      send: async (i) => {
        if (i === 1) throw new Error('connect timeout');
        return i === 2 ? { ok: false, error: 'HTTP 500' } : { ok: true };
      },
    });
    expect([r.ok, r.errors, r.latencies.length]).toEqual([1, 2, 1]);
    expect(r.firstError).toMatch(/connect timeout|HTTP 500/);
  });

  it('merges rounds: counts and seconds add up, the rate is the same', () => {
    const a = {
      offered: 200,
      sent: 2,
      ok: 2,
      errors: 0,
      firstError: null,
      latencies: [1, 2],
      sendLag: [0, 0],
      seconds: 1,
    };
    const b = { ...a, ok: 1, errors: 1, firstError: 'x', latencies: [3], seconds: 0.5 };
    const m = mergeRuns([a, b]);
    expect([m.offered, m.sent, m.ok, m.errors, m.firstError, m.latencies, m.seconds]).toEqual([
      200,
      4,
      3,
      1,
      'x',
      [1, 2, 3],
      1.5,
    ]);
    expect(achieved(m)).toBe(2);
  });
});
