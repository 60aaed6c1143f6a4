import { afterEach, describe, expect, it } from 'vitest';
import { deriveKey, keyedHash, keyId, KEY_PURPOSES, open, seal } from './secrets';
import { openSecret, sealSecret } from './webhooks/secret';
import { restoreEnv, setEnv } from '@/testing/env';

afterEach(restoreEnv);

// Sealed before lib/server/secrets.ts existed, by the code of the time (HKDF-SHA256 of AUTH_SECRET,
// salt "countersign", info "webhook-secret:v1"; AES-256-GCM; "v1.iv.tag.body" in base64), with:
const OLD = {
  authSecret: 'an-auth-secret-sealed-before-secrets-ts',
  box: 'v1.AAECAwQFBgcICQoL.pXdDln9Xm65N7ox/T7DStA==.ax+nm65CnpzYP5QRFSNEmzUGLefBrs7THGHkGzJIhu3IEvWC7cs=',
  plain: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  key: 'd4fb5ce192698ea0aee17912467c35c8d99910659241401a0468c675b3544608',
};

describe('deriveKey', () => {
  it('knows every purpose, and gives each its own 32-byte key', () => {
    expect([...KEY_PURPOSES].sort()).toEqual([
      'approval-arguments',
      'approval-request-hash',
      'outcome-content-hash',
      'outcome-session-hash',
      'webhook-secret-box',
    ]);
    setEnv({ AUTH_SECRET: 'one-secret' });
    const keys = KEY_PURPOSES.map((p) => deriveKey(p).toString('hex'));
    expect(keys.every((k) => k.length === 64)).toBe(true);
    expect(new Set(keys).size).toBe(KEY_PURPOSES.length);
  });

  it('gives the same key for the same secret and purpose, and another for another secret', () => {
    setEnv({ AUTH_SECRET: 'one-secret' });
    const first = KEY_PURPOSES.map((p) => deriveKey(p).toString('hex'));
    expect(KEY_PURPOSES.map((p) => deriveKey(p).toString('hex'))).toEqual(first);
    setEnv({ AUTH_SECRET: 'another-secret' });
    const other = KEY_PURPOSES.map((p) => deriveKey(p).toString('hex'));
    other.forEach((k, i) => expect(k).not.toBe(first[i]));
    setEnv({ AUTH_SECRET: 'one-secret' });
    expect(KEY_PURPOSES.map((p) => deriveKey(p).toString('hex'))).toEqual(first);
  });

  it('reproduces the key webhook secrets were sealed under before it', () => {
    setEnv({ AUTH_SECRET: OLD.authSecret });
    expect(deriveKey('webhook-secret-box').toString('hex')).toBe(OLD.key);
  });

  it('refuses, naming AUTH_SECRET, when it is not set', () => {
    for (const unset of [undefined, '']) {
      setEnv({ AUTH_SECRET: unset });
      for (const purpose of KEY_PURPOSES) expect(() => deriveKey(purpose)).toThrow(/^AUTH_SECRET is not set/);
      expect(() => keyedHash('outcome-content-hash', 'x')).toThrow(/^AUTH_SECRET is not set/);
      expect(() => sealSecret('whsec_x')).toThrow(/^AUTH_SECRET is not set/);
    }
  });
});

describe('keyedHash', () => {
  it('is HMAC-SHA256 in hex, the same for the same input, and different per purpose', () => {
    setEnv({ AUTH_SECRET: 'one-secret' });
    const a = keyedHash('outcome-content-hash', 'value');
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(keyedHash('outcome-content-hash', 'value')).toBe(a);
    expect(keyedHash('outcome-content-hash', 'value2')).not.toBe(a);
    expect(keyedHash('outcome-session-hash', 'value')).not.toBe(a);
    expect(keyedHash('approval-request-hash', 'value')).not.toBe(a);
  });
});

describe('webhook secret boxes', () => {
  it('opens a box sealed before lib/server/secrets.ts', () => {
    setEnv({ AUTH_SECRET: OLD.authSecret });
    expect(openSecret(OLD.box)).toBe(OLD.plain);
  });

  it('seals and opens again, and a box does not open under another AUTH_SECRET', () => {
    setEnv({ AUTH_SECRET: 'one-secret' });
    const box = sealSecret('whsec_round_trip');
    expect(box).toMatch(/^v2\.[0-9a-f]{12}\./);
    expect(openSecret(box)).toBe('whsec_round_trip');
    setEnv({ AUTH_SECRET: 'another-secret' });
    expect(() => openSecret(box)).toThrow(/^webhook-secret-box: sealed under key [0-9a-f]{12}, not this server's/);
    expect(() => openSecret(OLD.box)).toThrow(/sealed under another AUTH_SECRET, or altered/);
  });
});

describe('seal and open', () => {
  const ID = '0b9f6c1e-8f1a-4c3e-9d2b-5a7e6f1c2d3e';

  it('round-trips, with a fresh IV each time and the key id in the box', () => {
    setEnv({ AUTH_SECRET: 'one-secret' });
    const a = seal('approval-arguments', '{"amount":"40.00"}', ID);
    const b = seal('approval-arguments', '{"amount":"40.00"}', ID);
    expect(a).not.toBe(b);
    const [version, kid, iv, tag] = a.split('.');
    expect(version).toBe('v2');
    expect(kid).toBe(keyId('approval-arguments'));
    expect(Buffer.from(iv, 'base64url')).toHaveLength(12);
    expect(Buffer.from(tag, 'base64url')).toHaveLength(16);
    expect(a).not.toContain('40.00');
    expect(open('approval-arguments', a, ID)).toBe('{"amount":"40.00"}');
    expect(open('approval-arguments', b, ID)).toBe('{"amount":"40.00"}');
  });

  it('is bound to its associated data: the box of one row does not open as another', () => {
    setEnv({ AUTH_SECRET: 'one-secret' });
    const box = seal('approval-arguments', '{"amount":"40.00"}', ID);
    expect(() => open('approval-arguments', box, '7d1c0a2b-0000-4000-8000-000000000000')).toThrow(
      'approval-arguments: the box does not open (altered, or sealed for another record)',
    );
  });

  it('says which key a box was sealed under when this server has another (AUTH_SECRET changed, another purpose)', () => {
    setEnv({ AUTH_SECRET: 'one-secret' });
    const box = seal('approval-arguments', 'x', ID);
    const kid = keyId('approval-arguments');
    expect(() => open('webhook-secret-box', box, ID)).toThrow(
      /^webhook-secret-box: sealed under key [0-9a-f]{12}, not/,
    );
    setEnv({ AUTH_SECRET: 'another-secret' });
    expect(keyId('approval-arguments')).not.toBe(kid);
    expect(() => open('approval-arguments', box, ID)).toThrow(
      `approval-arguments: sealed under key ${kid}, not this server's ${keyId('approval-arguments')} (AUTH_SECRET changed since, or the box belongs to another purpose)`,
    );
  });

  it('refuses an altered box and text that is no box', () => {
    setEnv({ AUTH_SECRET: 'one-secret' });
    const box = seal('approval-arguments', 'hello', ID);
    const parts = box.split('.');
    const body = Buffer.from(parts[4], 'base64url');
    body[0] ^= 1;
    const altered = [...parts.slice(0, 4), body.toString('base64url')].join('.');
    expect(() => open('approval-arguments', altered, ID)).toThrow(/does not open \(altered/);
    expect(() => open('approval-arguments', 'hello', ID)).toThrow(
      'approval-arguments: not a sealed box this server knows',
    );
    // An old, unbound box is never taken for one bound to a row.
    expect(() => open('approval-arguments', OLD.box, ID)).toThrow(/not a sealed box this server knows/);
  });
});
