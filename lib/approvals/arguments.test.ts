import { describe, expect, it } from 'vitest';
import {
  ARGUMENTS_MAX_BYTES,
  ARGUMENTS_MAX_DEPTH,
  checkArguments,
  isSecretKey,
  maskArguments,
  type JsonObject,
  type JsonValue,
} from './arguments';

// Digests computed outside the code, from the canonical JSON text written here by hand:
// printf '%s' '<text>' | sha256sum
const DIGEST = {
  a2: 'sha256:7e8059f495589fcd981232cc11d00b00da3802c01d688fa1cf1f6bed6e5bb33c', // {"a":2}
  a2b1: 'sha256:d3626ac30a87e6f7a6428233b3c68299976865fa5508e4267c5415c76af7a772', // {"a":2,"b":1}
  empty: 'sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a', // {}
  note: 'sha256:0cd4101d3beb3cdd08a62cb8508f2a2a0942b290a02d6ba252d5fb481d3ce054', // {"note":null}
  // {"amount":"40.00","currency":"EUR","order_id":"4411"}
  refund: 'sha256:c14a2d971e37fed9301f3b251d14abd8c8c7a2d12ba07c4915dca7c6a62fbb7a',
  numbers: 'sha256:2f9fa32182f1ee2fb1b367dc1de10e2b99d578a85457f4fafa1de95217a48388', // {"big":1e+21,"neg":0,"small":0.1}
  unicode: 'sha256:23b92dfc64fd4c828237b125442d75c7292c56816ddd229314dbac95a5deda01', // {"€":"é"}
  // {"s":"xxx…"} with 65,528 x: 6 + 65,528 + 2 = 65,536 bytes
  x65528: 'sha256:66a43b59d62577796f2666b0b33d0e2a8abef4f04824896b5d9692e012ca6b65',
  // {"s":"ééé…"} with 32,764 é (2 bytes each): 6 + 65,528 + 2 = 65,536 bytes
  e32764: 'sha256:c760584c23a495cf6fb424a14962623187cfa95bda8b03cf43cc370adec617ad',
  // {"a":{"a":… 32 objects …1}…}
  depth32: 'sha256:8a3b491ae43f7ac82c29cb9d970374b93ed9a6bec143bde3067c09d63b6ebc88',
};

/** `levels` objects nested in each other, the innermost holding 1. Built in a loop: no recursion. */
function nested(levels: number): JsonObject {
  let value: JsonValue = 1;
  for (let i = 0; i < levels; i++) value = { a: value };
  return value as JsonObject;
}

describe('checkArguments', () => {
  it('limits are the contract', () => {
    expect(ARGUMENTS_MAX_BYTES).toBe(65_536);
    expect(ARGUMENTS_MAX_DEPTH).toBe(32);
  });

  it.each([
    ['a small object', { a: 2 }, DIGEST.a2, '{"a":2}'],
    ['the API example', { order_id: '4411', amount: '40.00', currency: 'EUR' }, DIGEST.refund, null],
    ['key order does not matter (b first)', { b: 1, a: 2 }, DIGEST.a2b1, '{"a":2,"b":1}'],
    ['key order does not matter (a first)', { a: 2, b: 1 }, DIGEST.a2b1, '{"a":2,"b":1}'],
    ['no arguments', {}, DIGEST.empty, '{}'],
    ['a null member is kept', { note: null }, DIGEST.note, '{"note":null}'],
    ['numbers in canonical form', { small: 0.1, big: 1e21, neg: -0 }, DIGEST.numbers, null],
    ['non-ASCII keys and values', { '€': 'é' }, DIGEST.unicode, null],
    ['an object without prototype', Object.assign(Object.create(null), { a: 2 }), DIGEST.a2, null],
  ])('accepts %s', (_case, args, digest, canonical) => {
    const result = checkArguments(args, digest);
    expect(result.ok).toBe(true);
    if (result.ok && canonical !== null) expect(result.canonical).toBe(canonical);
  });

  it.each([
    ['a digest of the right length over other arguments', { a: 3 }, DIGEST.a2],
    ['the digest of the arguments without their null member', { note: null }, DIGEST.empty],
    ['the right digest in capitals', { a: 2 }, DIGEST.a2.toUpperCase()],
    ['the right hex without "sha256:"', { a: 2 }, DIGEST.a2.slice('sha256:'.length)],
    ['an empty digest', { a: 2 }, ''],
  ])('refuses %s as arguments_digest_mismatch', (_case, args, digest) => {
    expect(checkArguments(args, digest)).toMatchObject({
      ok: false,
      code: 'arguments_digest_mismatch',
      path: 'arguments',
    });
  });

  it.each([
    ['an array', [{ a: 2 }]],
    ['null', null],
    ['undefined', undefined],
    ['a string', '{"a":2}'],
    ['a number', 2],
    ['a boolean', true],
    ['a Date', new Date(0)],
    ['a class instance', new (class Args {})()],
  ])('refuses %s as invalid_input on arguments', (_case, args) => {
    expect(checkArguments(args, DIGEST.a2)).toMatchObject({ ok: false, code: 'invalid_input', path: 'arguments' });
  });

  it.each([
    ['undefined', { a: undefined }, 'arguments.a'],
    ['NaN', { list: [1, NaN] }, 'arguments.list[1]'],
    ['Infinity', { 'the amount': Infinity }, 'arguments["the amount"]'],
    ['a function', { a: { b: () => 1 } }, 'arguments.a.b'],
    ['a Date', { at: new Date(0) }, 'arguments.at'],
  ])('refuses a member that is %s, naming where', (_case, args, path) => {
    expect(checkArguments(args, DIGEST.a2)).toMatchObject({ ok: false, code: 'invalid_input', path });
  });

  describe('size: UTF-8 bytes of the canonical JSON', () => {
    it('accepts exactly 65,536 bytes', () => {
      expect(checkArguments({ s: 'x'.repeat(65_528) }, DIGEST.x65528).ok).toBe(true);
      expect(checkArguments({ s: '\u00e9'.repeat(32_764) }, DIGEST.e32764).ok).toBe(true);
    });

    it.each([
      ['65,537 ASCII bytes', { s: 'x'.repeat(65_529) }],
      ['65,537 bytes in 32,765 characters', { s: '\u00e9'.repeat(32_764) + 'x' }],
      ['a 1 MB string', { s: 'x'.repeat(1_000_000) }],
      ['many small members', Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i]))],
    ])('refuses %s as arguments_too_large, before the digest', (_case, args) => {
      const result = checkArguments(args, DIGEST.a2);
      expect(result).toMatchObject({ ok: false, code: 'arguments_too_large', path: 'arguments' });
      if (!result.ok) expect(result.message).toContain('65536');
    });
  });

  describe('nesting', () => {
    it('accepts 32 levels', () => {
      expect(checkArguments(nested(32), DIGEST.depth32)).toEqual({
        ok: true,
        canonical: '{"a":'.repeat(32) + '1' + '}'.repeat(32),
      });
    });

    it('refuses 33 levels, naming the 33rd', () => {
      expect(checkArguments(nested(33), DIGEST.depth32)).toMatchObject({
        ok: false,
        code: 'invalid_input',
        path: 'arguments' + '.a'.repeat(32),
      });
    });

    it('counts arrays as levels', () => {
      let value: JsonValue = 1;
      for (let i = 0; i < 32; i++) value = [value];
      expect(checkArguments({ list: value }, DIGEST.a2)).toMatchObject({
        ok: false,
        code: 'invalid_input',
        path: 'arguments.list' + '[0]'.repeat(31),
      });
    });

    it('refuses 100,000 levels without overflowing the stack', () => {
      const result = checkArguments(nested(100_000), DIGEST.a2);
      expect(result).toMatchObject({ ok: false, code: 'invalid_input' });
      if (!result.ok) expect(result.message).toContain('deeper than 32 levels');
    });
  });
});

describe('isSecretKey: the key, folded and without separators, contains a secret word', () => {
  it.each([
    'password',
    'Password',
    'PASSWORD',
    'passwd',
    'user_password',
    'passwordHash',
    'secret',
    'client_secret',
    'clientSecret',
    'token',
    'access_token',
    'refreshToken',
    'API_KEY',
    'api-key',
    'apiKey',
    'api key',
    'apikey',
    'x-api-key',
    'private key',
    'private_key',
    'PrivateKey',
    'x_access_key',
    'AccessKey',
    'Authorization',
    'Cookie',
    'set-cookie',
    'credentials',
    'db.credential',
    'tok en',
    'p\u0430ssword', // Cyrillic а
    't\u03bfken', // Greek omicron
    '\uff30\uff21\uff33\uff33\uff37\uff2f\uff32\uff24', // fullwidth PASSWORD
    'pass\u200bword', // zero-width space
    'max_tokens', // containment: masked too
    'secretary',
  ])('%s names a secret', (key) => {
    expect(isSecretKey(key)).toBe(true);
  });

  it.each([
    'amount',
    'currency',
    'order_id',
    'key',
    'api',
    'access',
    'private',
    'pass',
    'passport',
    'authority',
    'cook',
    'credit',
    'passw0rd',
    '',
  ])('%s does not', (key) => {
    expect(isSecretKey(key)).toBe(false);
  });
});

describe('maskArguments', () => {
  const ghToken = 'ghp_' + 'a1B2c3D4e5'.repeat(4);

  it('masks strings with the masker and secret-named values whole; keeps the rest', () => {
    const masked = maskArguments({
      to: 'jane.doe@example.com',
      subject: 'Refund for order 4411',
      body: `Use ${ghToken} to sign in`,
      password: 'hunter2',
      apiKey: 12345,
      credentials: { user: 'u', pass: 'p' },
      token: null,
      amount: 12500,
      ratio: 0.1,
      big: 1e21,
      neg: -0,
      urgent: true,
      done: false,
      note: null,
      empty: '',
    });
    expect(masked).toStrictEqual({
      to: '[masked:email]',
      subject: 'Refund for order 4411',
      body: 'Use [masked:github_token] to sign in',
      password: '[masked:secret]',
      apiKey: '[masked:secret]',
      credentials: '[masked:secret]',
      token: '[masked:secret]',
      amount: 12500,
      ratio: 0.1,
      big: 1e21,
      neg: -0,
      urgent: true,
      done: false,
      note: null,
      empty: '',
    });
  });

  it('masks secret-named keys deep inside arrays of objects', () => {
    const masked = maskArguments({
      items: [
        { name: 'a', config: { api_key: 'k1', region: 'eu' } },
        [{ 'Private Key': 'k2' }, 'plain'],
        { nested: [[{ x_access_key: { id: 'k3' } }]] },
      ],
    });
    expect(masked).toStrictEqual({
      items: [
        { name: 'a', config: { api_key: '[masked:secret]', region: 'eu' } },
        [{ 'Private Key': '[masked:secret]' }, 'plain'],
        { nested: [[{ x_access_key: '[masked:secret]' }]] },
      ],
    });
  });

  it('masks keys that only look like secret names, and keeps both keys', () => {
    expect(maskArguments({ password: 'a', 'p\u0430ssword': 'b', 'to\u200dken': 'c' })).toStrictEqual({
      password: '[masked:secret]',
      'p\u0430ssword': '[masked:secret]',
      'to\u200dken': '[masked:secret]',
    });
  });

  it('keeps key order as sent', () => {
    expect(Object.keys(maskArguments({ z: 1, a: 'x', m: { y: 1, b: 2 } }))).toEqual(['z', 'a', 'm']);
    expect(Object.keys(maskArguments({ m: { y: 1, b: 2 } }).m as JsonObject)).toEqual(['y', 'b']);
  });

  it('keeps "__proto__" as a key, not a prototype', () => {
    const masked = maskArguments(JSON.parse('{"__proto__":{"password":"x","a":1}}'));
    expect(Object.getPrototypeOf(masked)).toBe(Object.prototype);
    expect(Object.hasOwn(masked, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(masked, '__proto__')?.value).toStrictEqual({
      password: '[masked:secret]',
      a: 1,
    });
  });

  it('does not change its input', () => {
    const args = { password: 'x', to: 'jane.doe@example.com' };
    maskArguments(args);
    expect(args).toStrictEqual({ password: 'x', to: 'jane.doe@example.com' });
  });
});
