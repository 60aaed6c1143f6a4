// The rate limits, from the environment. Pure: the configuration schema (lib/config) runs it over the
// variables it is given, once; lib/server/rate-limit/rate-limit.ts reads the result on first use.
import type { BucketLimit } from './bucket';

export type RateLimitConfig = {
  /** Per API key, on every /api/v1 request. */
  apiKey: BucketLimit;
  /** Per person (personal token, console session, console server action). */
  user: BucketLimit;
  /** Failed sign-in attempts per e-mail address. */
  signInEmail: BucketLimit;
  /** Failed sign-in attempts per client address. */
  signInAddress: BucketLimit;
};

type Spec = {
  name: keyof RateLimitConfig;
  rate: string;
  burst: string;
  unit: 'second' | 'hour';
  defaults: { rate: number; burst: number };
};

// An agent gateway may post thousands of single-record requests a second from one key (as
// bench:ingest does); a person clicking, or a script with a personal token, far fewer.
export const RATE_LIMIT_SPECS: Spec[] = [
  {
    name: 'apiKey',
    rate: 'RATE_LIMIT_API_KEY_PER_SECOND',
    burst: 'RATE_LIMIT_API_KEY_BURST',
    unit: 'second',
    defaults: { rate: 5_000, burst: 10_000 },
  },
  {
    name: 'user',
    rate: 'RATE_LIMIT_USER_PER_SECOND',
    burst: 'RATE_LIMIT_USER_BURST',
    unit: 'second',
    defaults: { rate: 20, burst: 100 },
  },
  {
    name: 'signInEmail',
    rate: 'RATE_LIMIT_SIGN_IN_EMAIL_PER_HOUR',
    burst: 'RATE_LIMIT_SIGN_IN_EMAIL_BURST',
    unit: 'hour',
    defaults: { rate: 20, burst: 10 },
  },
  {
    name: 'signInAddress',
    rate: 'RATE_LIMIT_SIGN_IN_ADDRESS_PER_HOUR',
    burst: 'RATE_LIMIT_SIGN_IN_ADDRESS_BURST',
    unit: 'hour',
    defaults: { rate: 200, burst: 50 },
  },
];

function number(
  env: Record<string, string | undefined>,
  name: string,
  fallback: number,
  kind: 'rate' | 'burst',
): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw.trim());
  if (kind === 'burst') {
    if (!/^\s*\d+\s*$/.test(raw) || !Number.isSafeInteger(value) || value < 1) {
      throw new Error(`${name} must be a whole number of at least 1 (got "${raw}")`);
    }
  } else if (!/^\s*(\d+(\.\d*)?|\.\d+)\s*$/.test(raw) || !(value > 0) || !Number.isFinite(value)) {
    throw new Error(`${name} must be a positive number (got "${raw}")`);
  }
  return value;
}

/** The limits the environment sets, defaults for the rest; throws naming the variable on a bad value. */
export function rateLimitConfig(env: Record<string, string | undefined>): RateLimitConfig {
  const out = {} as RateLimitConfig;
  for (const spec of RATE_LIMIT_SPECS) {
    const rate = number(env, spec.rate, spec.defaults.rate, 'rate');
    const burst = number(env, spec.burst, spec.defaults.burst, 'burst');
    out[spec.name] = { perSecond: spec.unit === 'hour' ? rate / 3600 : rate, burst };
  }
  return out;
}
