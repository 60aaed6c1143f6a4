// Set-up for the SSO specs: a test OpenID provider and a console configured against it (a second
// console process on the same build and database), and the browser steps of a sign-in.
import { expect, type Browser, type BrowserContext, type Page } from '@playwright/test';
import pg from 'pg';
import { freePort } from '../scripts/lib/embedded-postgres';
import { startConsole, type ConsoleProcess } from '../scripts/lib/console-process';
import { startTestProvider, type TestProvider } from './oidc-provider';

export const stamp = Date.now().toString(36);
export const group = (name: string) => `cs-${name}-${stamp}`;
export const BUTTON = 'Sign in with Test IdP';

/** `origin` is the console as the browser opens it (and as the provider sends the browser back to it). */
export type SsoRig = { origin: string; provider: TestProvider; console: ConsoleProcess; stop: () => Promise<void> };

/**
 * `host`: the name the browser uses for the console (default `localhost`); `publicUrl`: also name
 * that address in COUNTERSIGN_PUBLIC_URL, as an operator would (default: not set).
 */
export async function startSsoRig(
  env: Record<string, string> = {},
  { host = 'localhost', publicUrl = false }: { host?: 'localhost' | '127.0.0.1'; publicUrl?: boolean } = {},
): Promise<SsoRig> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const secret = 'countersign-e2e-secret-that-is-long-enough';
  const consolePort = await freePort();
  const origin = `http://${host}:${consolePort}`;
  const console = await startConsole(
    process.cwd(),
    {
      AUTH_OIDC_ISSUER: issuer,
      AUTH_OIDC_CLIENT_ID: 'countersign-e2e',
      AUTH_OIDC_CLIENT_SECRET: secret,
      AUTH_OIDC_NAME: 'Test IdP',
      AUTH_OIDC_ROLE_MAP: `${group('admins')}=admin,${group('reviewers')}=reviewer,${group('helpdesk')}=support`,
      RATE_LIMIT_USER_PER_SECOND: '10000',
      RATE_LIMIT_USER_BURST: '100000',
      ...(publicUrl ? { COUNTERSIGN_PUBLIC_URL: origin } : {}),
      ...env,
    },
    [],
    consolePort,
  );
  const provider = await startTestProvider(port, `${origin}/api/auth/callback/oidc`);
  return {
    origin,
    provider,
    console,
    stop: async () => {
      await console.stop();
      await provider.stop();
    },
  };
}

/** A test account at the provider; its id is what one types as "login" there. */
export function account(rig: SsoRig, id: string, groups: string[]): { id: string; email: string } {
  const email = `${id}-${stamp}@sso.example.test`;
  rig.provider.accounts.set(id, { email, name: `Person ${id}`, groups });
  return { id, email };
}

/** From the console's sign-in page through the provider's login form and back; the page where it ends. */
export async function ssoSignIn(rig: SsoRig, page: Page, id: string): Promise<void> {
  await page.goto(`${rig.origin}/sign-in`);
  await page.getByRole('button', { name: BUTTON }).click();
  await page.waitForURL((u) => u.origin === rig.provider.issuer);
  await page.locator('input[name="login"]').fill(id);
  await page.locator('input[name="password"]').fill('any');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.waitForURL((u) => u.origin === rig.origin && !u.pathname.startsWith('/api/auth'), {
    timeout: 15_000,
  });
}

export async function freshPage(browser: Browser): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  return { context, page: await context.newPage() };
}

/** Read-only looks at the test database (the specs check what was and was not created). */
export async function query<T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

export const userByEmail = async (email: string) =>
  (
    await query<{
      id: string;
      role: string;
      principal_id: string;
      role_claims: string[];
      password_hash: string | null;
    }>('select id, role, principal_id, role_claims, password_hash from users where email = $1', [email])
  )[0];

export const auditFor = (userId: string) =>
  query<{ action: string; actor: string; data: Record<string, unknown> }>(
    'select action, actor, data from audit_entries where target_id = $1 order by seq',
    [userId],
  );

export async function expectSignedIn(page: Page, email: string) {
  await expect(page.getByTestId('viewer-email')).toHaveText(email);
}
