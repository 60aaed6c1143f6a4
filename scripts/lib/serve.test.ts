import { describe, expect, it } from 'vitest';
import { parseProcesses, sharedLimitsWarning } from './serve.mjs';

describe('COUNTERSIGN_PROCESSES', () => {
  it.each([
    [undefined, 1],
    ['', 1],
    ['  ', 1],
    ['1', 1],
    ['2', 2],
    [' 4 ', 4],
    ['64', 64],
    ['auto', 2], // on a 2-CPU machine
  ])('%j → %i processes', (raw, expected) => {
    expect(parseProcesses(raw, 2)).toBe(expected);
  });

  it('auto is one per CPU, at most 64', () => {
    expect(parseProcesses('auto', 8)).toBe(8);
    expect(parseProcesses('auto', 200)).toBe(64);
  });

  it.each(['0', '-1', '1.5', '65', '1e3', 'two', '2 processes', '9'.repeat(400)])(
    '%j is refused, naming the variable and the value',
    (raw) => {
      expect(() => parseProcesses(raw, 2)).toThrow(
        `COUNTERSIGN_PROCESSES must be a whole number from 1 to 64, or auto (got "${raw.trim()}")`,
      );
    },
  );
});

describe('several processes without REDIS_URL', () => {
  it('warns that each keeps its own rate limits, and by how much they add up', () => {
    expect(sharedLimitsWarning(3, undefined)).toBe(
      '[serve] 3 processes without REDIS_URL: each keeps its own rate limits, so together they allow up to 3× the configured limits; set REDIS_URL to share them',
    );
    expect(sharedLimitsWarning(2, '  ')).toContain('2 processes without REDIS_URL');
  });

  it('says nothing for one process, or with REDIS_URL', () => {
    expect(sharedLimitsWarning(1, undefined)).toBeNull();
    expect(sharedLimitsWarning(2, 'redis://127.0.0.1:6379')).toBeNull();
  });
});
