import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ok } from '@/lib/result';
import { cli } from '@/lib/auth/actor';
import { config } from '@/lib/config';

// REDIS_URL: the limits shared by two instances (this module's, and a second limiter on its own
// connection, as another process has), on the machine's Redis under a prefix of this run; and a
// Redis of our own, killed mid-test.
vi.mock('../auth/session', () => ({ getViewer: async () => null }));
vi.mock('../auth/auth', () => ({ auth: async () => null }));

const { apiRoute } = await import('../http/api-route');
const { admitSignInShared, resetRateLimits } = await import('./rate-limit');
const { createSharedLimits } = await import('./rate-limit-shared');
const { createApiKey } = await import('../credentials/credentials');
const { uniq } = await import('../../../testing/factories');
const { freePort } = await import('../../../testing/webhooks-fixtures');
const { restoreEnv, setEnv } = await import('../../../testing/env');

const LIMITS = {
  RATE_LIMIT_API_KEY_PER_SECOND: '0.5',
  RATE_LIMIT_API_KEY_BURST: '3',
  RATE_LIMIT_SIGN_IN_EMAIL_PER_HOUR: '3600',
  RATE_LIMIT_SIGN_IN_EMAIL_BURST: '2',
};
const PREFIX = `countersign-test-${randomBytes(6).toString('hex')}:`;

beforeEach(() => {
  setEnv({ ...LIMITS, REDIS_URL: 'redis://127.0.0.1:6379', REDIS_KEY_PREFIX: PREFIX });
  resetRateLimits();
});
afterEach(() => {
  restoreEnv();
  resetRateLimits();
});

const route = apiRoute({ action: 'outcomes.read' }, async () => ok({}));
const call = (secret: string) =>
  route(new Request('http://console.test/api/v1/me', { headers: { authorization: `Bearer ${secret}` } }), {
    params: Promise.resolve({}),
  });
async function newKey() {
  const created = await createApiKey(cli, { name: uniq('rl-key'), scopes: ['outcomes:read'] });
  if (!created.ok) throw new Error(created.failure);
  return { secret: created.value.secret, id: created.value.key.id };
}
const second = () => createSharedLimits({ url: 'redis://127.0.0.1:6379', prefix: PREFIX, config: config().rateLimits });

describe('REDIS_URL: one limit across instances', () => {
  it('a key’s burst of 3 holds across both: 2 here, 1 there, then 429 everywhere', async () => {
    const other = second();
    try {
      const key = await newKey();
      expect((await call(key.secret)).status).toBe(200);
      expect((await call(key.secret)).status).toBe(200);
      expect(await other.take('apiKey', key.id)).toEqual({ allowed: true, remaining: 0 });
      const refused = await call(key.secret);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('2'); // one token per 2 s
      expect(await other.take('apiKey', key.id)).toMatchObject({ allowed: false, retryAfterSeconds: 2, first: false });
      // Another key is unaffected.
      expect((await call((await newKey()).secret)).status).toBe(200);
    } finally {
      await other.close();
    }
  });

  it('racing through both instances: exactly the burst succeeds', async () => {
    const other = second();
    try {
      const key = await newKey();
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          i % 2
            ? call(key.secret).then((r) => r.status === 200)
            : other.take('apiKey', key.id).then((t) => !!t?.allowed),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(3);
    } finally {
      await other.close();
    }
  });
});

describe('REDIS_URL: sign-in attempts', () => {
  it('failed guesses count across instances; a success gives its token back', async () => {
    const other = second();
    try {
      const email = `${uniq('victim')}@example.test`;
      const ok1 = await admitSignInShared(email, null);
      expect(ok1.admitted).toBe(true);
      if (ok1.admitted) ok1.refund(); // a successful sign-in: free
      await new Promise((r) => setTimeout(r, 50)); // the refund is sent in the background
      expect((await admitSignInShared(email, null)).admitted).toBe(true);
      expect(await other.take('signInEmail', email)).toEqual({ allowed: true, remaining: 0 });
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
      expect(await admitSignInShared(email, null)).toEqual({ admitted: false, retryAfterSeconds: 1 });
      warn.mockRestore();
    } finally {
      await other.close();
    }
  });
});

describe('Redis stopped mid-test', () => {
  let server: ChildProcess | null = null;
  afterAll(() => {
    if (server && server.exitCode === null) server.kill('SIGKILL');
  });

  it('no 500: limited per process from then on, said in the log once', async () => {
    const port = await freePort();
    // Our own Redis, never the machine's: started here, killed here.
    server = spawn(
      '/usr/bin/redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: 'ignore',
      },
    );
    for (let i = 0; i < 50; i++) {
      const up = await new Promise<boolean>((resolve) => {
        const s = connect(port, '127.0.0.1');
        s.once('connect', () => (s.end(), resolve(true)));
        s.once('error', () => resolve(false));
      });
      if (up) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    setEnv({ REDIS_URL: `redis://127.0.0.1:${port}` });
    resetRateLimits();
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const key = await newKey();
      // Two through Redis.
      expect((await call(key.secret)).status).toBe(200);
      expect((await call(key.secret)).status).toBe(200);
      expect(warn.mock.calls.filter(([m]) => /Redis/.test(String(m)))).toHaveLength(0);

      server.kill('SIGKILL');
      await new Promise((r) => server!.once('exit', r));
      // This process's own bucket for the key, full: 3 pass, then 429; never a 500.
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await call(key.secret)).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
      const said = warn.mock.calls.map(([m]) => String(m)).filter((m) => /Redis/.test(m));
      expect(said).toHaveLength(1);
      expect(said[0]).toMatch(
        /^\[rate-limit\] Redis \(REDIS_URL\) is unavailable \(.+\): limiting per process until it answers$/,
      );
      expect(said[0]).not.toContain(String(port));
    } finally {
      warn.mockRestore();
    }
  });
});
