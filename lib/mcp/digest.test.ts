import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { argsDigestSchema } from '../outcomes/schemas';
import { argsDigest, canonicalJson, hashParts } from './digest';

describe('canonicalJson', () => {
  it.each([
    [
      'sorted keys at every depth, no whitespace',
      { b: 1, a: { d: [3, { z: 1, y: 2 }], c: 'x' } },
      '{"a":{"c":"x","d":[3,{"y":2,"z":1}]},"b":1}',
    ],
    ['null is kept, undefined members are left out', { a: null, b: undefined }, '{"a":null}'],
    ['array holes and undefined read as null', [1, undefined, 3], '[1,null,3]'],
    ['JSON number spelling', { n: 1e21, m: 0.1, z: -0, i: 10 }, '{"i":10,"m":0.1,"n":1e+21,"z":0}'],
    ['non-finite numbers as null, as JSON.stringify', { a: Number.NaN, b: Infinity }, '{"a":null,"b":null}'],
    ['strings escaped as JSON', { s: 'line\n"quote" é \u2028' }, JSON.stringify({ s: 'line\n"quote" é \u2028' })],
    [
      'keys sorted by UTF-16 code units',
      { b: 1, B: 2, a: 3, é: 4, '10': 5, '9': 6 },
      '{"10":5,"9":6,"B":2,"a":3,"b":1,"é":4}',
    ],
    ['toJSON is honoured (dates)', { at: new Date('2026-11-30T12:00:00Z') }, '{"at":"2026-11-30T12:00:00.000Z"}'],
    ['empty containers', { a: {}, b: [] }, '{"a":{},"b":[]}'],
  ])('%s', (_name, value, expected) => {
    expect(canonicalJson(value)).toBe(expected);
  });

  it('refuses what JSON cannot hold', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow(TypeError);
    expect(() => canonicalJson({ n: 10n })).toThrow(TypeError);
  });

  it('allows the same object twice when it is not a cycle', () => {
    const shared = { x: 1 };
    expect(canonicalJson({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
  });
});

describe('argsDigest', () => {
  it('is sha256 of the canonical JSON, in the shape the record schema accepts', () => {
    const args = { orderId: '4411', amount: 40 };
    const digest = argsDigest(args);
    expect(digest).toBe(`sha256:${createHash('sha256').update('{"amount":40,"orderId":"4411"}').digest('hex')}`);
    expect(argsDigestSchema.safeParse(digest).success).toBe(true);
  });

  it('does not depend on key order; does depend on every value', () => {
    expect(argsDigest({ a: 1, b: { c: 2, d: 3 } })).toBe(argsDigest({ b: { d: 3, c: 2 }, a: 1 }));
    expect(argsDigest({ amount: 40 })).not.toBe(argsDigest({ amount: 40.01 }));
    expect(argsDigest({ amount: 40 })).not.toBe(argsDigest({ amount: '40' }));
    expect(argsDigest({ note: null })).not.toBe(argsDigest({}));
  });

  it('reads no arguments as {}', () => {
    expect(argsDigest(undefined)).toBe(argsDigest({}));
    expect(argsDigest(null)).toBe(argsDigest({}));
  });

  it('hashParts is stable and separates parts', () => {
    expect(hashParts('a', 'b')).toBe(hashParts('a', 'b'));
    expect(hashParts('ab', 'c')).not.toBe(hashParts('a', 'bc'));
    expect(hashParts('a', 1)).not.toBe(hashParts('a', '1'));
  });
});
