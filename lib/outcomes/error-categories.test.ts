import { describe, expect, it } from 'vitest';
import { classifyOutcome } from './classify';
import { normalizeErrorCategory, type DeclaredCategory } from './error-categories';

const SPELLINGS: [string, DeclaredCategory][] = [
  ['RETRYABLE_UPSTREAM', 'unavailable'],
  ['retryable_upstream', 'unavailable'],
  ['UPSTREAM_UNAVAILABLE', 'unavailable'],
  ['UNAVAILABLE', 'unavailable'],
  ['temporarily_unavailable', 'unavailable'],
  ['Service Unavailable', 'unavailable'],
  ['INVALID_INPUT', 'validation'],
  ['VALIDATION_ERROR', 'validation'],
  ['VALIDATION', 'validation'],
  ['invalid-input', 'validation'],
  ['PERMISSION_DENIED', 'forbidden'],
  ['FORBIDDEN', 'forbidden'],
  ['permissionDenied', 'forbidden'],
  ['DENIED', 'denied'],
  ['NOT_FOUND', 'not_found'],
  ['NotFound', 'not_found'],
  ['not found', 'not_found'],
  ['REVISION_CONFLICT', 'conflict'],
  ['CONFLICT', 'conflict'],
  ['revision.conflict', 'conflict'],
  ['RATE_LIMITED', 'rate_limited'],
  ['TOO_MANY_REQUESTS', 'rate_limited'],
  ['too-many-requests', 'rate_limited'],
  ['rateLimited', 'rate_limited'],
  ['UNKNOWN_TOOL', 'unknown_tool'],
  ['  retryable upstream  ', 'unavailable'],
  ['Retryable--Upstream', 'unavailable'],
];

describe('normalizeErrorCategory', () => {
  it.each(SPELLINGS)('%s → %s', (raw, expected) => {
    expect(normalizeErrorCategory(raw)).toBe(expected);
  });

  it.each([null, undefined, '', '   ', 'KABOOM', 'UPSTREAM_TIMEOUT', 'constructor', '__proto__', 'toString'])(
    'treats %j as no category',
    (raw) => {
      expect(normalizeErrorCategory(raw)).toBeNull();
    },
  );

  it.each(SPELLINGS.filter(([, c]) => c !== 'unknown_tool'))(
    'a tool declaring %s is classified as %s',
    (raw, expected) => {
      const observed = { sent: true, httpStatus: 200, result: { isError: true, errorCategory: raw } };
      expect(classifyOutcome({ observed, annotations: { readOnlyHint: false }, serverTrusted: true }).category).toBe(
        expected,
      );
    },
  );
});
