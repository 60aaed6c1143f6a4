import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canonicalJson } from '../json/canonical';
import { auditHash, canonicalTemplate, GENESIS_HASH } from './chain';

const entry = {
  seq: 1n,
  at: '2026-11-30T12:00:00.000Z',
  actor: 'cli',
  action: 'user.create',
  targetType: 'user',
  targetId: 'u1',
  data: { b: 1, a: [2, { d: 1, c: null }] },
};

describe('canonicalJson', () => {
  it('sorts keys at every depth and drops undefined', () => {
    expect(canonicalJson({ b: 1, a: { y: 2, x: undefined, w: [3, { z: 1, k: 'v' }] } })).toBe(
      '{"a":{"w":[3,{"k":"v","z":1}],"y":2},"b":1}',
    );
  });
  it('is insensitive to key order', () => {
    expect(canonicalJson({ a: 1, b: 2 })).toBe(canonicalJson({ b: 2, a: 1 }));
  });
});

describe('auditHash', () => {
  it('is a sha256 of the previous hash and the entry', () => {
    const h = auditHash(GENESIS_HASH, entry);
    expect(h).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(auditHash(GENESIS_HASH, { ...entry, data: { a: [2, { c: null, d: 1 }], b: 1 } })).toBe(h);
  });
  it('changes when any field or the previous hash changes', () => {
    const h = auditHash(GENESIS_HASH, entry);
    const variants = [
      auditHash('sha256:' + '1'.repeat(64), entry),
      auditHash(GENESIS_HASH, { ...entry, seq: 2n }),
      auditHash(GENESIS_HASH, { ...entry, at: '2026-11-30T12:00:00.001Z' }),
      auditHash(GENESIS_HASH, { ...entry, actor: 'admin@x' }),
      auditHash(GENESIS_HASH, { ...entry, action: 'user.disable' }),
      auditHash(GENESIS_HASH, { ...entry, targetId: 'u2' }),
      auditHash(GENESIS_HASH, { ...entry, data: { b: 2, a: [2, { d: 1, c: null }] } }),
    ];
    for (const v of variants) expect(v).not.toBe(h);
  });
});

// Strings that try to look like the members the template cuts at.
const tricky = fc.constantFrom(
  '',
  'at',
  'seq',
  'targetId',
  '"at":""',
  '","seq":"',
  '"targetId":""',
  '\\',
  '"',
  '\n',
  'é',
  '😀',
  '\u2028',
);
const text = fc.oneof(
  fc.string({ unit: 'binary' }),
  tricky,
  fc.array(tricky, { maxLength: 4 }).map((xs) => xs.join('')),
);
const key = fc.oneof(text, fc.constantFrom('at', 'seq', 'targetId', 'data', 'action'));
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    text,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(key, tie('value'), { maxKeys: 5 }),
  ),
})).value;
const fields = fc.record({
  actor: text,
  action: text,
  targetType: text,
  targetId: text,
  data: fc.dictionary(key, json, { maxKeys: 6 }),
});
const filled = (parts: string[], holes: string[]) => parts.map((p, i) => p + (holes[i] ?? '')).join('');

describe('canonicalTemplate', () => {
  it('with `at` and `seq` filled in is canonicalJson of the whole entry', () => {
    fc.assert(
      fc.property(
        fields,
        fc.date({ noInvalidDate: true }),
        fc.bigInt({ min: 1n, max: 2n ** 63n - 1n }),
        (e, at, seq) => {
          const parts = canonicalTemplate(e);
          expect(parts).toHaveLength(3);
          const canonical = canonicalJson({ ...e, seq: String(seq), at: at.toISOString() });
          expect(filled(parts, [at.toISOString(), String(seq)])).toBe(canonical);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('with a `targetId` hole as well, for a target only the database knows (a UUID)', () => {
    fc.assert(
      fc.property(
        fields,
        fc.date({ noInvalidDate: true }),
        fc.bigInt({ min: 1n, max: 2n ** 63n - 1n }),
        fc.uuid(),
        (e, at, seq, id) => {
          const parts = canonicalTemplate({ ...e, targetId: '' }, ['at', 'seq', 'targetId']);
          expect(parts).toHaveLength(4);
          expect(filled(parts, [at.toISOString(), String(seq), id])).toBe(
            canonicalJson({ ...e, targetId: id, seq: String(seq), at: at.toISOString() }),
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it("cuts at the entry's own members, not at look-alikes nested in its data", () => {
    const e = {
      actor: '"at":""',
      action: 'a',
      targetType: 't',
      targetId: '',
      data: { at: '', seq: '', targetId: '', x: { at: '', seq: '' } },
    };
    const parts = canonicalTemplate(e, ['at', 'seq', 'targetId']);
    expect(filled(parts, ['AT', '7', 'ID'])).toBe(canonicalJson({ ...e, at: 'AT', seq: '7', targetId: 'ID' }));
    expect(() => canonicalTemplate(e, ['seq'])).toThrow(/always holes/);
  });
});
