import { describe, expect, it } from 'vitest';
import { rateLimitConfig, RATE_LIMIT_SPECS } from './config';

describe('rateLimitConfig', () => {
  it('defaults: keys take an agent gateway at 2,000 requests/s with bursts; people far less', () => {
    const c = rateLimitConfig({});
    expect(c.apiKey).toEqual({ perSecond: 5_000, burst: 10_000 });
    expect(c.apiKey.perSecond).toBeGreaterThanOrEqual(2 * 2_000);
    expect(c.user).toEqual({ perSecond: 20, burst: 100 });
    expect(c.signInEmail).toEqual({ perSecond: 20 / 3600, burst: 10 });
    expect(c.signInAddress).toEqual({ perSecond: 200 / 3600, burst: 50 });
  });

  it('reads every variable; sign-in rates are per hour', () => {
    const c = rateLimitConfig({
      RATE_LIMIT_API_KEY_PER_SECOND: '0.5',
      RATE_LIMIT_API_KEY_BURST: '3',
      RATE_LIMIT_USER_PER_SECOND: ' 7 ',
      RATE_LIMIT_USER_BURST: '9',
      RATE_LIMIT_SIGN_IN_EMAIL_PER_HOUR: '3600',
      RATE_LIMIT_SIGN_IN_EMAIL_BURST: '2',
      RATE_LIMIT_SIGN_IN_ADDRESS_PER_HOUR: '.5',
      RATE_LIMIT_SIGN_IN_ADDRESS_BURST: '4',
    });
    expect(c).toEqual({
      apiKey: { perSecond: 0.5, burst: 3 },
      user: { perSecond: 7, burst: 9 },
      signInEmail: { perSecond: 1, burst: 2 },
      signInAddress: { perSecond: 0.5 / 3600, burst: 4 },
    });
    expect(rateLimitConfig({ RATE_LIMIT_USER_BURST: '' }).user.burst).toBe(100); // empty: the default
  });

  it('names the variable of a bad value', () => {
    for (const spec of RATE_LIMIT_SPECS) {
      for (const bad of ['0', '-1', 'abc', '1e3', 'Infinity', '10/s']) {
        expect(() => rateLimitConfig({ [spec.rate]: bad })).toThrow(
          new RegExp(`^${spec.rate} must be a positive number \\(got "${bad.replace('/', '\\/')}"\\)`),
        );
      }
      for (const bad of ['0', '1.5', '-3', 'ten', '99999999999999999999']) {
        expect(() => rateLimitConfig({ [spec.burst]: bad })).toThrow(
          new RegExp(`^${spec.burst} must be a whole number of at least 1`),
        );
      }
    }
  });
});
