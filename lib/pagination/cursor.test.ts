// The one cursor codec: the strings clients hold today still decode, and anything that is not a
// cursor this API wrote (garbage, another shape, a tampered value, a huge string) is refused by
// every listing's query schema with an issue at `cursor` (the API's 422). Expected strings are
// base64url JSON computed by hand (outside this code), so a change of encoding fails here.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { cursorCodec, cursorId, cursorInstant } from './cursor';
import { approvalListQuerySchema, decodeApprovalCursor, encodeApprovalCursor } from '@/lib/approvals/schemas';
import { accessLogQuerySchema, decodeAccessCursor, encodeAccessCursor } from '@/lib/incidents/access-log';
import { decodeOutcomeCursor, encodeOutcomeCursor, outcomeQuerySchema } from '@/lib/outcomes/query';

const AT = '2026-03-01T12:00:00.000Z';
const ID = '0b7e4a1c-3f2d-4c5b-9a8e-1d2c3b4a5f60';
// ["2026-03-01T12:00:00.000Z","0b7e4a1c-…"] and ["expires", …], base64url without padding.
const PAIR = 'WyIyMDI2LTAzLTAxVDEyOjAwOjAwLjAwMFoiLCIwYjdlNGExYy0zZjJkLTRjNWItOWE4ZS0xZDJjM2I0YTVmNjAiXQ';
const EXPIRES =
  'WyJleHBpcmVzIiwiMjAyNi0wMy0wMVQxMjowMDowMC4wMDBaIiwiMGI3ZTRhMWMtM2YyZC00YzViLTlhOGUtMWQyYzNiNGE1ZjYwIl0';

// Not cursors, each for its own reason.
const NOT_A_CURSOR = {
  garbage: '%%%not base64%%%',
  'not JSON': 'bm90IGpzb24',
  'an object, not an array': 'eyJhdCI6IjIwMjYtMDMtMDFUMTI6MDA6MDAuMDAwWiJ9',
  'an instant not as written (no milliseconds)':
    'WyIyMDI2LTAzLTAxVDEyOjAwOjAwWiIsIjBiN2U0YTFjLTNmMmQtNGM1Yi05YThlLTFkMmMzYjRhNWY2MCJd',
  'an id that is no uuid': 'WyIyMDI2LTAzLTAxVDEyOjAwOjAwLjAwMFoiLCJub3QtYS11dWlkIl0',
  'one value too many':
    'WyIyMDI2LTAzLTAxVDEyOjAwOjAwLjAwMFoiLCIwYjdlNGExYy0zZjJkLTRjNWItOWE4ZS0xZDJjM2I0YTVmNjAiLCJ4Il0',
  'a tampered character': PAIR.slice(0, 10) + 'Q' + PAIR.slice(11),
  empty: '',
};

describe('the cursors clients hold today', () => {
  it('are written as before', () => {
    expect(encodeOutcomeCursor({ occurredAt: new Date(AT), id: ID })).toBe(PAIR);
    expect(encodeAccessCursor({ at: new Date(AT), id: ID })).toBe(PAIR);
    expect(encodeApprovalCursor({ order: 'expires', at: new Date(AT), id: ID })).toBe(EXPIRES);
  });

  it('still decode', () => {
    expect(decodeOutcomeCursor(PAIR)).toEqual({ occurredAt: new Date(AT), id: ID });
    expect(decodeAccessCursor(PAIR)).toEqual({ at: new Date(AT), id: ID });
    expect(decodeApprovalCursor(EXPIRES)).toEqual({ order: 'expires', at: new Date(AT), id: ID });
  });

  it('belong to their shape: an approval cursor is no outcome cursor, and the reverse', () => {
    expect(decodeOutcomeCursor(EXPIRES)).toBeNull();
    expect(decodeApprovalCursor(PAIR)).toBeNull();
    // An order the approvals listing does not have: ["sideways", AT, ID].
    expect(
      decodeApprovalCursor(
        'WyJzaWRld2F5cyIsIjIwMjYtMDMtMDFUMTI6MDA6MDAuMDAwWiIsIjBiN2U0YTFjLTNmMmQtNGM1Yi05YThlLTFkMmMzYjRhNWY2MCJd',
      ),
    ).toBeNull();
  });
});

describe('what is not a cursor', () => {
  for (const [why, raw] of Object.entries(NOT_A_CURSOR)) {
    it(`is refused: ${why}`, () => {
      expect(decodeOutcomeCursor(raw)).toBeNull();
      expect(decodeAccessCursor(raw)).toBeNull();
      expect(decodeApprovalCursor(raw)).toBeNull();
    });
  }
});

const issuesAt = (result: { success: boolean; error?: z.ZodError }) =>
  result.success ? [] : result.error!.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));

describe("each listing's query: a bad cursor is an issue at `cursor`", () => {
  const listings = [
    ['outcomes', outcomeQuerySchema, 200, 'is not a cursor this API returned'],
    ['approvals', approvalListQuerySchema, 300, 'is not a cursor this API returned'],
    ['the access log', accessLogQuerySchema, 200, 'is not a cursor this page returned'],
  ] as const;
  for (const [name, schema, max, message] of listings) {
    it(`${name}: tampered or wrong`, () => {
      for (const raw of Object.values(NOT_A_CURSOR).filter(Boolean))
        expect(issuesAt(schema.safeParse({ cursor: raw }))).toEqual([{ path: 'cursor', message }]);
    });
    it(`${name}: huge (over ${max} characters) is refused before it is decoded`, () => {
      const issues = issuesAt(schema.safeParse({ cursor: 'A'.repeat(max + 1) }));
      expect(issues).toHaveLength(1);
      expect(issues[0].path).toBe('cursor');
      expect(issues[0].message).not.toBe(message);
    });
    it(`${name}: empty means no cursor`, () => {
      const parsed = schema.safeParse({ cursor: '' });
      expect(parsed.success && parsed.data.cursor).toBeUndefined();
    });
  }
});

describe('cursorCodec', () => {
  const codec = cursorCodec(
    z.tuple([cursorInstant, z.number().int(), cursorId]).transform(([at, n, id]) => ({ at, n, id })),
    (c) => [c.at.toISOString(), c.n, c.id],
  );

  it('round-trips its shape', () => {
    const c = { at: new Date(AT), n: 7, id: ID };
    expect(codec.decode(codec.encode(c))).toEqual(c);
  });

  it('writes base64url without padding', () => {
    // ["2026-03-01T12:00:00.000Z",7,"0b7e4a1c-…"]
    expect(codec.encode({ at: new Date(AT), n: 7, id: ID })).toBe(
      'WyIyMDI2LTAzLTAxVDEyOjAwOjAwLjAwMFoiLDcsIjBiN2U0YTFjLTNmMmQtNGM1Yi05YThlLTFkMmMzYjRhNWY2MCJd',
    );
  });
});
