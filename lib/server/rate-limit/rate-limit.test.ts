import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { Viewer } from '@/lib/auth/permissions';
import { ok } from '@/lib/result';
import { cli } from '@/lib/auth/actor';

// The console session is Auth.js' (request-bound); server actions get their viewer from here.
const session = vi.hoisted(() => ({ viewer: null as Viewer | null }));
vi.mock('../auth/session', () => ({ getViewer: async () => session.viewer }));
// Auth.js cannot load outside Next; these tests authenticate with bearer secrets only.
vi.mock('../auth/auth', () => ({ auth: async () => null }));

const { apiRoute } = await import('../http/api-route');
const { runAction } = await import('../http/action');
const { admitSignIn, clientAddress, resetRateLimits } = await import('./rate-limit');
const { createApiKey, createPersonalToken } = await import('../credentials/credentials');
const { makeUser, uniq } = await import('../../../testing/factories');
const { restoreEnv, setEnv } = await import('../../../testing/env');

const LIMITS = {
  RATE_LIMIT_API_KEY_PER_SECOND: '0.5',
  RATE_LIMIT_API_KEY_BURST: '3',
  RATE_LIMIT_USER_PER_SECOND: '0.25',
  RATE_LIMIT_USER_BURST: '2',
  RATE_LIMIT_SIGN_IN_EMAIL_PER_HOUR: '3600',
  RATE_LIMIT_SIGN_IN_EMAIL_BURST: '3',
  RATE_LIMIT_SIGN_IN_ADDRESS_PER_HOUR: '1800',
  RATE_LIMIT_SIGN_IN_ADDRESS_BURST: '5',
};

// Low limits of its own, over the generous ones testing/vitest-setup.ts sets for other suites.
beforeEach(() => {
  // Only the monotonic clock the buckets read is faked: database I/O keeps real timers.
  vi.useFakeTimers({ toFake: ['performance'] });
  setEnv(LIMITS);
  resetRateLimits();
});

afterEach(() => {
  vi.useRealTimers();
  restoreEnv();
  resetRateLimits();
});

const route = apiRoute({ action: 'outcomes.read' }, async ({ actor }) => ok({ kind: actor.kind }));
const call = (secret: string) =>
  route(new Request('http://console.test/api/v1/me', { headers: { authorization: `Bearer ${secret}` } }), {
    params: Promise.resolve({}),
  });

async function newKey(organization?: string) {
  const created = await createApiKey(cli, { name: uniq('rl-key'), scopes: ['outcomes:read'], organization });
  if (!created.ok) throw new Error(created.failure);
  return created.value.secret;
}

async function newToken(userId: string) {
  const created = await createPersonalToken(cli, userId, uniq('rl-token'));
  if (!created.ok) throw new Error(created.failure);
  return created.value.secret;
}

async function expectLimited(res: Response, seconds: number) {
  expect(res.status).toBe(429);
  expect(res.headers.get('content-type')).toBe('application/problem+json');
  expect(res.headers.get('retry-after')).toBe(String(seconds));
  const body = await res.json();
  expect(body).toEqual({
    type: '/problems/rate_limited',
    title: 'Too many requests',
    status: 429,
    code: 'rate_limited',
    detail: expect.stringContaining(`retry after ${seconds} s`),
  });
}

describe('rate limits in the API wrapper (real PostgreSQL)', () => {
  it('per API key: the burst passes, the next is 429 with Retry-After, other keys are unaffected, and waiting helps', async () => {
    const [a, b] = [await newKey(), await newKey('acme')];
    for (let i = 0; i < 3; i++) expect((await call(a)).status).toBe(200);
    await expectLimited(await call(a), 2); // one token per 2 s
    await expectLimited(await call(a), 2); // a refused request does not push the wait further out
    for (let i = 0; i < 3; i++) expect((await call(b)).status).toBe(200);
    vi.advanceTimersByTime(1_000);
    await expectLimited(await call(a), 1);
    vi.advanceTimersByTime(1_000);
    expect((await call(a)).status).toBe(200);
    await expectLimited(await call(a), 2);
  });

  it('requests racing for the last tokens: exactly the burst succeeds', async () => {
    const key = await newKey();
    const statuses = (await Promise.all(Array.from({ length: 12 }, () => call(key)))).map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(9);
  });

  it('per person: their personal tokens share one budget; another person is unaffected', async () => {
    const [ana, bo] = [await makeUser('support'), await makeUser('support')];
    const [t1, t2, t3] = [await newToken(ana.userId), await newToken(ana.userId), await newToken(bo.userId)];
    expect((await call(t1)).status).toBe(200);
    expect((await call(t2)).status).toBe(200);
    await expectLimited(await call(t1), 4);
    await expectLimited(await call(t2), 4);
    expect((await call(t3)).status).toBe(200);
    vi.advanceTimersByTime(4_000);
    expect((await call(t2)).status).toBe(200);
  });

  it("no credential is no bucket: 401 stays 401, and spends nobody's budget", async () => {
    const key = await newKey();
    for (let i = 0; i < 10; i++) expect((await call('cs_live_unknown')).status).toBe(401);
    for (let i = 0; i < 3; i++) expect((await call(key)).status).toBe(200);
  });

  it('counts before the scope check: a key hammering a route it may not use is limited too', async () => {
    const key = await newKey();
    const forbidden = apiRoute({ action: 'outcomes.write' }, async () => ok({}));
    const hit = () =>
      forbidden(new Request('http://console.test/api/v1/x', { headers: { authorization: `Bearer ${key}` } }), {
        params: Promise.resolve({}),
      });
    for (let i = 0; i < 3; i++) expect((await hit()).status).toBe(403);
    await expectLimited(await hit(), 2);
  });

  it('an invalid limit fails naming the variable (logged; the client gets a plain 500)', async () => {
    const key = await newKey(); // first: a bad value stops every use of the configuration
    setEnv({ RATE_LIMIT_API_KEY_BURST: 'lots' });
    resetRateLimits();
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    const res = await call(key);
    expect(res.status).toBe(500);
    expect(await res.text()).not.toContain('RATE_LIMIT');
    expect(String(logged.mock.calls[0]?.[3])).toContain('RATE_LIMIT_API_KEY_BURST must be a whole number');
    logged.mockRestore();
  });
});

describe('rate limits in console server actions', () => {
  const schema = z.object({ n: z.number() });

  it('per person, with the same budget as their API use', async () => {
    const [ana, bo] = [await makeUser('admin'), await makeUser('admin')];
    const run = vi.fn(async () => ok('done'));
    session.viewer = ana;
    expect(await runAction(schema, { n: 1 }, run)).toMatchObject({ status: 'ok', value: 'done' });
    expect((await call(await newToken(ana.userId))).status).toBe(200); // the second of two
    const refused = await runAction(schema, { n: 2 }, run);
    expect(refused).toMatchObject({ status: 'error', message: 'Too many requests; wait 4 s and try again.' });
    expect(run).toHaveBeenCalledTimes(1); // the data layer never saw the refused one
    session.viewer = bo;
    expect(await runAction(schema, { n: 3 }, run)).toMatchObject({ status: 'ok' });
    session.viewer = ana;
    vi.advanceTimersByTime(4_000);
    expect(await runAction(schema, { n: 4 }, run)).toMatchObject({ status: 'ok' });
  });
});

describe('sign-in attempts', () => {
  const guess = (email: string, address: string | null, succeeds = false) => {
    const a = admitSignIn(email, address);
    if (a.admitted && succeeds) a.refund();
    return a.admitted;
  };

  it('per e-mail address: after the burst of failures even the right password is refused, until tokens come back', () => {
    const email = `${uniq('victim')}@example.test`;
    expect([guess(email, '198.51.100.1'), guess(email, '198.51.100.2'), guess(email, '198.51.100.3')]).toEqual([
      true,
      true,
      true,
    ]);
    const locked = admitSignIn(email, '198.51.100.4');
    expect(locked).toEqual({ admitted: false, retryAfterSeconds: 1 }); // 3600/h: one a second
    expect(guess(`${uniq('other')}@example.test`, '198.51.100.4')).toBe(true); // other addresses and accounts are fine
    vi.advanceTimersByTime(1_000);
    expect(guess(email, '198.51.100.5')).toBe(true);
    expect(guess(email, '198.51.100.5')).toBe(false);
  });

  it('per client address: many accounts from one address are refused after its burst', () => {
    const address = '203.0.113.9';
    for (let i = 0; i < 5; i++) expect(guess(`${uniq('spray')}@example.test`, address)).toBe(true);
    expect(admitSignIn(`${uniq('spray')}@example.test`, address)).toEqual({ admitted: false, retryAfterSeconds: 2 });
    expect(guess(`${uniq('spray')}@example.test`, '203.0.113.10')).toBe(true);
  });

  it('only failures count: successful sign-ins are free; a refused attempt spends nothing', () => {
    const email = `${uniq('ok')}@example.test`;
    for (let i = 0; i < 20; i++) expect(guess(email, '192.0.2.1', true)).toBe(true);
    // Lock the address with other accounts; the refused attempt must not spend the e-mail's tokens.
    for (let i = 0; i < 5; i++) guess(`${uniq('x')}@example.test`, '192.0.2.1');
    for (let i = 0; i < 10; i++) expect(guess(email, '192.0.2.1')).toBe(false);
    for (let i = 0; i < 3; i++) expect(guess(email, '192.0.2.2')).toBe(true);
    expect(guess(email, '192.0.2.3')).toBe(false);
  });

  it('concurrent guesses cannot slip past: the tokens are taken before the password is checked', async () => {
    const email = `${uniq('race')}@example.test`;
    const results = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const a = admitSignIn(email, `192.0.2.${100 + i}`);
        await new Promise((r) => setTimeout(r, 5)); // "checking the password"
        return a.admitted;
      }),
    );
    expect(results.filter(Boolean)).toHaveLength(3);
  });

  it('logs a refusal once per spell of each e-mail or address, not once per refused attempt', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const email = `${uniq('flood')}@example.test`;
    for (let i = 0; i < 3; i++) guess(email, `198.51.100.${10 + i}`);
    for (let i = 0; i < 20; i++) expect(guess(email, `198.51.100.${20 + i}`)).toBe(false);
    expect(warn.mock.calls.map((c) => String(c[0]))).toEqual([
      `[auth] sign-in refused for ${email} from 198.51.100.20: too many failed attempts (retry after 1 s)`,
    ]);
    // A token back, spent on one more failure: the next refusal starts a new spell.
    vi.advanceTimersByTime(1_000);
    expect(guess(email, '198.51.100.50')).toBe(true);
    for (let i = 0; i < 5; i++) expect(guess(email, '198.51.100.51')).toBe(false);
    expect(warn).toHaveBeenCalledTimes(2);
    // An address spraying accounts: one line for its spell, whichever accounts follow.
    for (let i = 0; i < 5; i++) guess(`${uniq('spray')}@example.test`, '203.0.113.99');
    for (let i = 0; i < 10; i++) expect(guess(`${uniq('spray')}@example.test`, '203.0.113.99')).toBe(false);
    expect(warn).toHaveBeenCalledTimes(3);
    expect(String(warn.mock.calls[2][0])).toMatch(
      /from 203\.0\.113\.99: too many failed attempts \(retry after 2 s\)$/,
    );
    warn.mockRestore();
  });

  it('logs a client-chosen address without control characters and at most 64 characters long', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const address = `6.6.6.6\n[auth] sign-in succeeded for admin@example.test\u202e${'x'.repeat(5_000)}`;
    for (let i = 0; i < 6; i++) guess(`${uniq('forge')}@example.test`, address);
    expect(warn).toHaveBeenCalledTimes(1);
    const line = String(warn.mock.calls[0][0]);
    expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/);
    const logged = /from (.*): too many failed attempts/.exec(line)![1];
    expect(logged.startsWith('6.6.6.6?[auth] sign-in succeeded for admin@example.test?xx')).toBe(true);
    expect(Array.from(logged)).toHaveLength(64);
    warn.mockRestore();
  });

  it('without a known address only the e-mail limit applies', () => {
    const email = `${uniq('anon')}@example.test`;
    expect([guess(email, null), guess(email, null), guess(email, null), guess(email, null)]).toEqual([
      true,
      true,
      true,
      false,
    ]);
  });
});

describe('clientAddress', () => {
  it('is the last X-Forwarded-For hop (what the nearest proxy, or Next.js, wrote)', () => {
    expect(clientAddress(new Headers({ 'x-forwarded-for': '10.0.0.1, 203.0.113.5' }))).toBe('203.0.113.5');
    expect(clientAddress(new Headers({ 'x-forwarded-for': '::1' }))).toBe('::1');
    expect(clientAddress(new Headers({ 'x-forwarded-for': ' , ', 'x-real-ip': '198.51.100.7' }))).toBe('198.51.100.7');
    expect(clientAddress(new Headers())).toBeNull();
  });

  it('keeps at most 64 characters of a forged address (bucket keys stay small)', () => {
    expect(clientAddress(new Headers({ 'x-forwarded-for': 'a'.repeat(8_000) }))).toBe('a'.repeat(64));
  });
});
