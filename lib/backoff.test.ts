import { describe, expect, it } from 'vitest';
import { backoffDelay, type BackoffOptions } from './backoff';

const at = (r: number) => () => r;

describe('backoffDelay', () => {
  // attempt, options, expected (ms), worked out by hand from the formula in lib/backoff.ts.
  it.each<[number, BackoffOptions, number]>([
    // The agent's default jitter, 1× to 1.5×.
    [1, { initialMs: 500, maxMs: 10_000, random: at(0) }, 500],
    [2, { initialMs: 500, maxMs: 10_000, random: at(0) }, 1000],
    [3, { initialMs: 500, maxMs: 10_000, random: at(0) }, 2000],
    [3, { initialMs: 500, maxMs: 10_000, random: at(0.5) }, 2500],
    [3, { initialMs: 500, maxMs: 10_000, random: at(0.999) }, 2999],
    [5, { initialMs: 500, maxMs: 10_000, random: at(0) }, 8000],
    [5, { initialMs: 500, maxMs: 10_000, random: at(0.5) }, 10_000],
    [6, { initialMs: 500, maxMs: 10_000, random: at(0) }, 10_000],
    [40, { initialMs: 500, maxMs: 10_000, random: at(0.7) }, 10_000],
    [0, { initialMs: 250, maxMs: 4000, random: at(0) }, 250],
    [1, { initialMs: 10, maxMs: 80, random: at(0.33) }, 12],
    // The notifier's jitter, half to all of the doubling, capped first.
    [1, { initialMs: 40, maxMs: 1000, jitter: [0.5, 1], random: at(1) }, 40],
    [2, { initialMs: 40, maxMs: 1000, jitter: [0.5, 1], random: at(1) }, 80],
    [3, { initialMs: 40, maxMs: 1000, jitter: [0.5, 1], random: at(1) }, 160],
    [3, { initialMs: 40, maxMs: 1000, jitter: [0.5, 1], random: at(0) }, 80],
    [2, { initialMs: 1000, maxMs: 15_000, jitter: [0.5, 1], random: at(0.5) }, 1500],
    [9, { initialMs: 1000, maxMs: 15_000, jitter: [0.5, 1], random: at(0) }, 7500],
    [9, { initialMs: 1000, maxMs: 15_000, jitter: [0.5, 1], random: at(1) }, 15_000],
  ])('attempt %i with %o waits %i ms', (attempt, options, expected) => {
    expect(backoffDelay(attempt, options)).toBe(expected);
  });

  it('with the default jitter, each wait is longer than the one before until the cap', () => {
    for (const r of [0, 0.3, 0.999]) {
      const waits = [1, 2, 3, 4, 5].map((n) => backoffDelay(n, { initialMs: 100, maxMs: 1e6, random: at(r) }));
      waits.slice(1).forEach((w, i) => expect(w).toBeGreaterThan(waits[i]));
    }
  });
});
