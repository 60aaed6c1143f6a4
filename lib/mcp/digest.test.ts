import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { argsDigestSchema } from '../outcomes/schemas';
import fc from 'fast-check';
import { canonicalJson } from '../json/canonical';
import { argsDigest, hashParts } from './digest';

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

  // The console hashes with lib/json's canonicalJson; the agent's arguments reach any other
  // process as JSON text, in whatever member order that process's writer chose.
  it('equals the digest the console side computes for the same arguments received as JSON', () => {
    const reordered = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(reordered)
        : v && typeof v === 'object'
          ? Object.fromEntries(
              Object.entries(v)
                .reverse()
                .map(([k, x]) => [k, reordered(x)]),
            )
          : v;
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 8 }), (args) => {
        const received = JSON.parse(JSON.stringify(reordered(args)));
        const consoleSide = `sha256:${createHash('sha256').update(canonicalJson(received), 'utf8').digest('hex')}`;
        expect(argsDigest(args)).toBe(consoleSide);
      }),
      { numRuns: 300 },
    );
    expect(argsDigest({})).toBe('sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a');
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
