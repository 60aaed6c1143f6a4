import { describe, expect, it } from 'vitest';
import { relativeTime, riskOf } from './present';

describe('riskOf', () => {
  it.each([
    [{ readOnlyHint: true, openWorldHint: false }, true, 'low'],
    [{ readOnlyHint: false, destructiveHint: false, openWorldHint: true }, true, 'medium'],
    [{ readOnlyHint: false, destructiveHint: true, openWorldHint: true }, true, 'high'],
    [null, true, 'high'],
    // An untrusted server's hints never lower the risk.
    [{ readOnlyHint: true, destructiveHint: false, openWorldHint: false }, false, 'high'],
  ] as const)('%j trusted=%s → %s', (annotations, trusted, level) => {
    expect(riskOf(annotations, trusted).level).toBe(level);
  });

  it('says when hints were ignored', () => {
    expect(riskOf({ readOnlyHint: true }, false).traits).toContain('untrusted server: hints ignored');
    expect(riskOf({ readOnlyHint: true }, true).traits).not.toContain('untrusted server: hints ignored');
  });
});

describe('relativeTime', () => {
  const now = Date.UTC(2026, 10, 30, 12);
  it.each([
    [now + 30_000, 'in under a minute'],
    [now + 12 * 60_000, 'in 12 min'],
    [now + 125 * 60_000, 'in 2 h 5 min'],
    [now - 3 * 60_000, '3 min ago'],
  ])('%s → %s', (t, text) => expect(relativeTime(new Date(t), now)).toBe(text));
});
