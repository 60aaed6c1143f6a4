import { describe, expect, it } from 'vitest';
import { BucketStore, retryAfterSeconds } from './bucket';

// A hand-driven clock, in milliseconds.
function clock(start = 1_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

const takeN = (store: BucketStore, key: string, n: number) => Array.from({ length: n }, () => store.take(key).allowed);

describe('BucketStore', () => {
  it('allows a burst of exactly `burst`, then refuses', () => {
    const c = clock();
    const store = new BucketStore({ perSecond: 2, burst: 5, now: c.now });
    expect(takeN(store, 'k', 5)).toEqual([true, true, true, true, true]);
    const refused = store.take('k');
    expect(refused).toEqual({ allowed: false, retryAfterSeconds: 1, first: true });
    expect(store.take('k')).toMatchObject({ allowed: false, first: false });
  });

  it('counts down what remains', () => {
    const store = new BucketStore({ perSecond: 1, burst: 3, now: clock().now });
    expect([store.take('k'), store.take('k'), store.take('k')]).toEqual([
      { allowed: true, remaining: 2 },
      { allowed: true, remaining: 1 },
      { allowed: true, remaining: 0 },
    ]);
  });

  it('refills continuously at the rate, never above the burst', () => {
    const c = clock();
    const store = new BucketStore({ perSecond: 4, burst: 8, now: c.now });
    takeN(store, 'k', 8);
    expect(store.take('k').allowed).toBe(false);
    c.advance(250); // one token at 4/s
    expect(store.take('k').allowed).toBe(true);
    expect(store.take('k').allowed).toBe(false);
    c.advance(1_000); // four more
    expect(takeN(store, 'k', 5)).toEqual([true, true, true, true, false]);
    c.advance(60_000); // a minute idle refills to the burst, not to 240
    expect(store.peek('k')).toBe(8);
    expect(takeN(store, 'k', 9).filter(Boolean)).toHaveLength(8);
  });

  it('sustains the rate over time: about perSecond × seconds + burst', () => {
    const c = clock();
    const store = new BucketStore({ perSecond: 100, burst: 50, now: c.now });
    let allowed = 0;
    for (let ms = 0; ms < 10_000; ms++) {
      // 1,000 attempts a second for 10 s against a limit of 100/s
      if (store.take('k').allowed) allowed++;
      c.advance(1);
    }
    expect(allowed).toBeGreaterThanOrEqual(1_049);
    expect(allowed).toBeLessThanOrEqual(1_050);
  });

  it('a refused request takes nothing: waiting Retry-After is enough', () => {
    const c = clock();
    const store = new BucketStore({ perSecond: 0.5, burst: 2, now: c.now });
    takeN(store, 'k', 2);
    for (let i = 0; i < 10; i++) expect(store.take('k')).toMatchObject({ allowed: false, retryAfterSeconds: 2 });
    c.advance(2_000);
    expect(store.take('k').allowed).toBe(true);
  });

  it('Retry-After is whole seconds, rounded up, at least 1', () => {
    const c = clock();
    const slow = new BucketStore({ perSecond: 0.1, burst: 1, now: c.now });
    slow.take('k');
    expect(slow.take('k')).toMatchObject({ retryAfterSeconds: 10 });
    c.advance(500);
    expect(slow.take('k')).toMatchObject({ retryAfterSeconds: 10 }); // 9.5 s → 10
    c.advance(8_600);
    expect(slow.take('k')).toMatchObject({ retryAfterSeconds: 1 }); // 0.9 s → 1
    const fast = new BucketStore({ perSecond: 5_000, burst: 1, now: c.now });
    fast.take('k');
    expect(fast.take('k')).toMatchObject({ retryAfterSeconds: 1 }); // 0.2 ms → 1, never 0
    expect(retryAfterSeconds(1, 3)).toBe(1);
    expect(retryAfterSeconds(1, 0.3)).toBe(4);
    expect(retryAfterSeconds(1 - 1e-12, 1)).toBe(1); // float noise is not another second
    expect(retryAfterSeconds(1 + 1e-6, 1)).toBe(2);
  });

  it('keeps keys independent', () => {
    const c = clock();
    const store = new BucketStore({ perSecond: 1, burst: 2, now: c.now });
    expect(takeN(store, 'a', 3)).toEqual([true, true, false]);
    expect(takeN(store, 'b', 2)).toEqual([true, true]);
    expect(store.take('a').allowed).toBe(false);
    expect(store.take('b').allowed).toBe(false);
    expect(store.take('c').allowed).toBe(true);
  });

  it('refund gives a token back, never above the burst', () => {
    const store = new BucketStore({ perSecond: 0.001, burst: 2, now: clock().now });
    takeN(store, 'k', 2);
    store.refund('k');
    expect(takeN(store, 'k', 2)).toEqual([true, false]);
    store.refund('k');
    store.refund('k');
    store.refund('k');
    expect(store.peek('k')).toBe(2);
    store.refund('never-seen'); // no bucket, nothing to do
    expect(store.size).toBe(1);
  });

  it('says `first` once per spell of refusals', () => {
    const c = clock();
    const store = new BucketStore({ perSecond: 1, burst: 1, now: c.now });
    store.take('k');
    expect(store.take('k')).toMatchObject({ first: true });
    expect(store.take('k')).toMatchObject({ first: false });
    c.advance(1_000);
    expect(store.take('k').allowed).toBe(true);
    expect(store.take('k')).toMatchObject({ first: true });
  });

  it('drops buckets idle long enough to be full again, and only those', () => {
    const c = clock();
    const store = new BucketStore({ perSecond: 10, burst: 20, now: c.now }); // full again after 2 s
    for (let i = 0; i < 1_000; i++) store.take(`idle-${i}`);
    expect(store.size).toBe(1_000);
    c.advance(1_000);
    takeN(store, 'busy', 20);
    expect(store.size).toBe(1_001); // not yet idle for 2 s: kept
    c.advance(1_000);
    store.take('other');
    expect(store.size).toBe(2); // the thousand are full again: gone; "busy" (1 s) stays
    // A dropped bucket comes back full, exactly as it would have been.
    expect(store.peek('idle-0')).toBe(20);
    expect(store.take('busy').allowed).toBe(true); // 10 tokens back after 1 s
    expect(store.peek('busy')).toBeCloseTo(9, 6);
  });

  it('holds at most maxBuckets, dropping the least recently used', () => {
    const c = clock();
    const store = new BucketStore({ perSecond: 1, burst: 1, maxBuckets: 100, now: c.now });
    store.take('old');
    for (let i = 0; i < 99; i++) store.take(`k${i}`);
    store.take('old'); // touched: now the most recently used
    expect(store.size).toBe(100);
    for (let i = 0; i < 1_000; i++) {
      store.take(`n${i}`);
      expect(store.size).toBeLessThanOrEqual(100);
    }
    expect(store.size).toBe(100);
    // The most recent 100 survive; "old" was pushed out as well by then.
    expect(store.peek('n999')).toBe(0);
    expect(store.peek('n900')).toBe(0);
    expect(store.peek('n899')).toBe(1);
    expect(store.peek('old')).toBe(1);
  });

  it('LRU order follows touches: a touched key outlives untouched older ones', () => {
    const store = new BucketStore({ perSecond: 1, burst: 1, maxBuckets: 3, now: clock().now });
    store.take('a');
    store.take('b');
    store.take('c');
    store.take('a'); // a is now newest
    store.take('d'); // pushes out b
    expect(store.peek('a')).toBe(0);
    expect(store.peek('b')).toBe(1);
    expect(store.peek('c')).toBe(0);
    expect(store.peek('d')).toBe(0);
  });

  it('a clock that steps back does not mint tokens', () => {
    const c = clock(10_000);
    const store = new BucketStore({ perSecond: 1, burst: 1, now: c.now });
    store.take('k');
    c.advance(-5_000);
    expect(store.take('k').allowed).toBe(false);
  });

  it('refuses nonsense limits', () => {
    expect(() => new BucketStore({ perSecond: 0, burst: 1 })).toThrow(/perSecond/);
    expect(() => new BucketStore({ perSecond: Number.NaN, burst: 1 })).toThrow(/perSecond/);
    expect(() => new BucketStore({ perSecond: 1, burst: 0 })).toThrow(/burst/);
  });
});
