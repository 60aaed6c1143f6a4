import { describe, expect, it } from 'vitest';
import { accessLogQuerySchema, decodeAccessCursor, encodeAccessCursor } from './access-log';

describe('the access log query', () => {
  it('round-trips a cursor and refuses anything else', () => {
    const cursor = { at: new Date('2026-11-30T12:00:00.123Z'), id: '5f0c6e0e-1b2a-4c3d-8e9f-0a1b2c3d4e5f' };
    expect(decodeAccessCursor(encodeAccessCursor(cursor))).toEqual(cursor);
    for (const bad of ['', 'nope', btoa('["2026-11-30", "x"]'), btoa('[1,2,3]')])
      expect(decodeAccessCursor(bad)).toBeNull();
  });

  it('treats blank filters as none and names bad parameters', () => {
    expect(accessLogQuerySchema.parse({ requestRef: '', actor: '' })).toEqual({});
    expect(accessLogQuerySchema.parse({ requestRef: ' req_1 ', limit: '20' })).toEqual({
      requestRef: 'req_1',
      limit: 20,
    });
    const bad = accessLogQuerySchema.safeParse({ cursor: 'nope', limit: '1000', actorr: 'x' });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues.map((i) => i.path.join('.') || i.code).sort()).toEqual([
      'cursor',
      'limit',
      'unrecognized_keys',
    ]);
    expect(accessLogQuerySchema.safeParse({ requestRef: 'a\u0000b' }).success).toBe(false);
  });
});
