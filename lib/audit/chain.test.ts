import { describe, expect, it } from 'vitest';
import { auditHash, canonicalJson, GENESIS_HASH } from './chain';

const entry = { seq: 1n, at: '2026-11-30T12:00:00.000Z', actor: 'cli', action: 'user.create', targetType: 'user', targetId: 'u1', data: { b: 1, a: [2, { d: 1, c: null }] } };

describe('canonicalJson', () => {
  it('sorts keys at every depth and drops undefined', () => {
    expect(canonicalJson({ b: 1, a: { y: 2, x: undefined, w: [3, { z: 1, k: 'v' }] } })).toBe('{"a":{"w":[3,{"k":"v","z":1}],"y":2},"b":1}');
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
