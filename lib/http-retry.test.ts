import { describe, expect, it } from 'vitest';
import { isRetryableStatus, parseRetryAfter } from './http-retry';
import { retryAfterMs } from './webhooks/retry';

const now = Date.UTC(2026, 10, 30, 12, 0, 0); // Mon, 30 Nov 2026 12:00:00 GMT

describe('isRetryableStatus', () => {
  it.each([
    [408, true],
    [425, true],
    [429, true],
    [500, true],
    [502, true],
    [503, true],
    [504, true],
    [599, true],
    [200, false],
    [301, false],
    [400, false],
    [401, false],
    [403, false],
    [404, false],
    [409, false],
    [413, false],
    [422, false],
    [499, false],
  ])('%i: %s', (status, expected) => {
    expect(isRetryableStatus(status)).toBe(expected);
  });
});

// [header, parseRetryAfter, the webhook sender's reading capped at one minute]
const table: [string | null | undefined, number | undefined, number | undefined][] = [
  ['5', 5_000, 5_000],
  ['  120 ', 120_000, 60_000],
  ['0', 0, undefined],
  ['Mon, 30 Nov 2026 12:00:10 GMT', 10_000, 10_000],
  [' Mon, 30 Nov 2026 12:00:10 GMT ', 10_000, 10_000],
  ['Mon, 30 Nov 2026 13:00:00 GMT', 3_600_000, 60_000],
  ['Mon, 30 Nov 2026 11:59:00 GMT', 0, undefined],
  ['Sunday, 06-Nov-94 08:49:37 GMT', 0, undefined],
  ['99999999999', 99_999_999_999_000, 60_000],
  ['9'.repeat(400), Infinity, 60_000],
  ['-5', 0, undefined], // not delay-seconds; Date.parse reads it as a day in 2001
  ['soon', undefined, undefined],
  ['', undefined, undefined],
  ['   ', undefined, undefined],
  [null, undefined, undefined],
  [undefined, undefined, undefined],
];

describe('parseRetryAfter', () => {
  it.each(table)('%j', (header, parsed) => {
    expect(parseRetryAfter(header, now)).toBe(parsed);
  });
});

describe("the webhook sender's Retry-After (capped, no wait read as none)", () => {
  it.each(table)('%j', (header, _, webhook) => {
    expect(retryAfterMs(header ?? undefined, now, 60_000)).toBe(webhook);
  });
});
