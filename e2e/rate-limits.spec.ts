import { expect, test, type Browser } from '@playwright/test';
import { cli, secretFrom, users } from '../testing/e2e';
import { startConsole, type ConsoleProcess } from '../scripts/lib/console-process';
import { get, type Answer } from '../testing/http-get';
import { DEMO_PASSWORD } from '../scripts/seed';

// The main test server runs with generous limits (playwright.config.ts: far above anything a test
// does); this file starts a second one on the same build and database with tiny limits, so the
// limits can be met.
const LIMITS = {
  RATE_LIMIT_API_KEY_PER_SECOND: '0.2',
  RATE_LIMIT_API_KEY_BURST: '3', // a token every 5 s
  RATE_LIMIT_USER_PER_SECOND: '0.2',
  RATE_LIMIT_USER_BURST: '3',
  RATE_LIMIT_SIGN_IN_EMAIL_PER_HOUR: '36',
  RATE_LIMIT_SIGN_IN_EMAIL_BURST: '3', // one back every 100 s
  RATE_LIMIT_SIGN_IN_ADDRESS_PER_HOUR: '36',
  RATE_LIMIT_SIGN_IN_ADDRESS_BURST: '6',
};

let server: ConsoleProcess;
const stamp = Date.now().toString(36);

test.beforeAll(async () => {
  test.setTimeout(90_000);
  server = await startConsole(process.cwd(), LIMITS);
});

test.afterAll(async () => {
  await server?.stop();
});

const newKey = (name: string) =>
  secretFrom(cli('apikeys:create', '--name', `e2e-rl-${name}-${stamp}`, '--scopes', 'outcomes:read'), 'cs_live_');
const me = (secret: string) => get(`${server.origin}/api/v1/me`, { authorization: `Bearer ${secret}` });

async function expectLimited(res: Answer): Promise<number> {
  expect(res.status).toBe(429);
  expect(res.headers['content-type']).toContain('application/problem+json');
  const retryAfter = res.headers['retry-after'];
  expect(retryAfter).toMatch(/^[1-9]\d*$/); // whole seconds, at least 1
  const seconds = Number(retryAfter);
  expect(seconds).toBeLessThanOrEqual(5);
  expect(res.json()).toMatchObject({
    status: 429,
    code: 'rate_limited',
    title: 'Too many requests',
    detail: expect.stringContaining(`retry after ${seconds} s`),
  });
  return seconds;
}

test.describe('rate limits (second server with low limits)', () => {
  test('per API key: the N+1th request is 429 with Retry-After; another key is unaffected; after waiting it passes', async () => {
    test.setTimeout(60_000);
    const [a, b] = [newKey('a'), newKey('b')];
    for (let i = 0; i < 3; i++) expect((await me(a)).status).toBe(200);
    const wait = await expectLimited(await me(a));
    for (let i = 0; i < 3; i++) expect((await me(b)).status).toBe(200);
    await new Promise((r) => setTimeout(r, wait * 1000 + 100));
    const again = await me(a);
    expect(again.status).toBe(200);
    expect(again.json()).toMatchObject({ kind: 'api_key' });
  });

  test('concurrent requests racing for the last tokens: exactly the limit succeeds', async () => {
    const key = newKey('race');
    const statuses = (await Promise.all(Array.from({ length: 12 }, () => me(key)))).map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(9);
  });

  test('per person: one person over the limit leaves another unaffected', async () => {
    const reviewer = secretFrom(
      cli('tokens:create', '--email', users.reviewer.email, '--name', `e2e-rl-${stamp}`),
      'cs_pat_',
    );
    const support = secretFrom(
      cli('tokens:create', '--email', users.support.email, '--name', `e2e-rl-${stamp}`),
      'cs_pat_',
    );
    for (let i = 0; i < 3; i++) expect((await me(reviewer)).status).toBe(200);
    await expectLimited(await me(reviewer));
    const res = await me(support);
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ kind: 'user', email: users.support.email });
  });
});

test.describe('failed sign-ins (second server with low limits)', () => {
  // Each test signs in "from" its own client address (the last X-Forwarded-For hop).
  async function attempt(browser: Browser, address: string, email: string, password: string) {
    const context = await browser.newContext({
      baseURL: server.origin,
      extraHTTPHeaders: { 'x-forwarded-for': address },
    });
    const page = await context.newPage();
    await page.goto('/sign-in');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const error = page.getByTestId('sign-in-error');
    const viewer = page.getByTestId('viewer-email');
    await error.or(viewer).waitFor();
    const outcome = (await error.isVisible())
      ? `error: ${await error.textContent()}`
      : `signed in: ${await viewer.textContent()}`;
    await context.close();
    return outcome;
  }

  const WRONG = 'error: Wrong email or password, or the account is disabled.';

  test('after the burst of failures for one e-mail, even the right password looks like a wrong one, and is logged', async ({
    browser,
  }) => {
    const email = `locked-${stamp}@example.test`;
    cli('users:create', '--email', email, '--role', 'support', '--password', DEMO_PASSWORD);
    for (let i = 0; i < 3; i++)
      expect(await attempt(browser, `198.51.100.${i + 1}`, email, 'not-the-password')).toBe(WRONG);
    expect(await attempt(browser, '198.51.100.9', email, DEMO_PASSWORD)).toBe(WRONG);
    expect(server.output()).toContain(
      `[auth] sign-in refused for ${email} from 198.51.100.9: too many failed attempts`,
    );
    // Another account from the same address is unaffected.
    expect(await attempt(browser, '198.51.100.9', users.reviewer.email, DEMO_PASSWORD)).toBe(
      `signed in: ${users.reviewer.email}`,
    );
  });

  test('after the burst of failures from one address, a valid sign-in from it is refused; other addresses are not', async ({
    browser,
  }) => {
    for (let i = 0; i < 6; i++)
      expect(await attempt(browser, '203.0.113.77', `nobody-${i}-${stamp}@example.test`, 'guess-guess-guess')).toBe(
        WRONG,
      );
    expect(await attempt(browser, '203.0.113.77', users.support.email, DEMO_PASSWORD)).toBe(WRONG);
    expect(server.output()).toContain(`[auth] sign-in refused for ${users.support.email} from 203.0.113.77`);
    expect(await attempt(browser, '203.0.113.78', users.support.email, DEMO_PASSWORD)).toBe(
      `signed in: ${users.support.email}`,
    );
  });
});
