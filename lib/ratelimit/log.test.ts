import { describe, expect, it } from 'vitest';
import { LOGGED_ADDRESS_MAX, loggable } from './log';

describe('loggable', () => {
  it('keeps an ordinary address as it is', () => {
    for (const a of ['203.0.113.5', '2001:db8::1', 'fe80::1%eth0', 'unknown']) expect(loggable(a)).toBe(a);
  });

  it('turns control, format and separator characters into ?, so no line can be forged', () => {
    expect(loggable('1.2.3.4\n[auth] sign-in succeeded for admin@example.test')).toBe(
      '1.2.3.4?[auth] sign-in succeeded for admin@example.test',
    );
    expect(loggable('a\rb\u0000c\u001bd\u007fe\u0085f\u2028g\u2029h')).toBe('a?b?c?d?e?f?g?h');
    expect(loggable('10.0.0.1\u202egnp.exe')).toBe('10.0.0.1?gnp.exe'); // a bidi override
    expect(loggable('x\u200by\ufeffz')).toBe('x?y?z'); // zero-width
    expect(loggable('lone \ud800 half')).toBe('lone ? half');
  });

  it(`is at most ${LOGGED_ADDRESS_MAX} characters, marking the cut, never splitting a surrogate pair`, () => {
    const long = '9'.repeat(10_000);
    expect(loggable(long)).toBe(`${'9'.repeat(LOGGED_ADDRESS_MAX - 1)}…`);
    expect(Array.from(loggable(long))).toHaveLength(LOGGED_ADDRESS_MAX);
    const exact = 'a'.repeat(LOGGED_ADDRESS_MAX);
    expect(loggable(exact)).toBe(exact);
    const emoji = '\ud83d\ude00'.repeat(100);
    expect(loggable(emoji)).toBe(`${'\ud83d\ude00'.repeat(LOGGED_ADDRESS_MAX - 1)}…`);
    expect(loggable(emoji)).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
  });
});
