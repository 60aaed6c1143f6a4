import { execFileSync } from 'node:child_process';
import { expect, test } from '@playwright/test';
import { DEMO_PASSWORD } from '../scripts/seed';
import { users } from '../testing/e2e';
import { childEnvironment } from '../lib/config';
import {
  account,
  auditFor,
  expectSignedIn,
  freshPage,
  group,
  query,
  ssoSignIn,
  startSsoRig,
  userByEmail,
  type SsoRig,
} from '../testing/oidc';

// A console with local passwords off and SSO on; sessions people can end.
let rig: SsoRig;

test.beforeAll(async () => {
  test.setTimeout(90_000);
  rig = await startSsoRig({ AUTH_PASSWORD_SIGN_IN: 'off' });
});

test.afterAll(async () => {
  await rig?.stop();
});

test.describe('password sign-in off', () => {
  test('the sign-in page shows single sign-on only', async ({ page }) => {
    await page.goto(`${rig.origin}/sign-in`);
    await expect(page.getByRole('button', { name: 'Sign in with Test IdP' })).toBeVisible();
    await expect(page.getByLabel('Password')).toHaveCount(0);
  });

  test('a password posted to Auth.js directly is refused: no session', async ({ page }) => {
    const origin = rig.origin;
    const { csrfToken } = await (await page.request.get(`${origin}/api/auth/csrf`)).json();
    const res = await page.request.post(`${origin}/api/auth/callback/credentials`, {
      form: { csrfToken, email: users.admin.email, password: DEMO_PASSWORD },
      maxRedirects: 0,
    });
    expect(res.status()).toBeGreaterThanOrEqual(300);
    expect(res.headers()['location'] ?? '').not.toBe(`${origin}/`);
    const me = await page.request.get(`${origin}/api/v1/me`);
    expect(me.status()).toBe(401);
    await page.goto(`${origin}/`);
    await expect(page).toHaveURL(/\/sign-in/);
  });

  test('the CLI refuses to create a password account', () => {
    let failure = '';
    try {
      execFileSync(
        'node_modules/.bin/tsx',
        [
          '--conditions=react-server',
          'scripts/cli.ts',
          'users:create',
          '--email',
          `glass-${Date.now()}@x.test`,
          '--role',
          'admin',
        ],
        {
          encoding: 'utf8',
          env: childEnvironment({
            AUTH_PASSWORD_SIGN_IN: 'off',
            AUTH_OIDC_ISSUER: rig.provider.issuer,
            AUTH_OIDC_CLIENT_ID: 'c',
            AUTH_OIDC_CLIENT_SECRET: 's',
            AUTH_OIDC_ROLE_MAP: 'a=admin',
          }),
          stdio: 'pipe',
        },
      );
    } catch (err) {
      failure = String((err as { stderr?: string }).stderr ?? err);
    }
    expect(failure).toContain('AUTH_PASSWORD_SIGN_IN is off');
  });
});

test.describe('sessions people can end', () => {
  test('"sign out everywhere" ends a second browser’s session at its next request', async ({ browser }) => {
    const who = account(rig, 'everywhere', [group('reviewers')]);
    const a = await freshPage(browser);
    const b = await freshPage(browser);
    await ssoSignIn(rig, a.page, who.id);
    await ssoSignIn(rig, b.page, who.id);
    await expectSignedIn(b.page, who.email);

    await a.page.goto(`${rig.origin}/account`);
    await expect(a.page.getByTestId('session-row')).toHaveCount(2);
    await expect(a.page.getByTestId('session-row').filter({ hasText: 'This browser' })).toContainText('Chrome');
    await a.page.getByRole('button', { name: 'Sign out everywhere' }).click();
    await expect(a.page).toHaveURL(/\/sign-in/);

    // B's cookie is still a validly signed JWT: it is not enough.
    expect((await b.page.request.get(`${rig.origin}/api/v1/me`)).status()).toBe(401);
    await b.page.goto(`${rig.origin}/approvals`);
    await expect(b.page).toHaveURL(/\/sign-in/);
    const user = await userByEmail(who.email);
    expect((await auditFor(user.id)).map((x) => x.action)).toContain('session.end_all');
    await a.context.close();
    await b.context.close();
  });

  test('an admin sees how people sign in and the claims behind the role, and ends their sessions', async ({
    browser,
  }) => {
    const admin = account(rig, 'the-admin', [group('admins'), 'unrelated']);
    const person = account(rig, 'the-person', [group('helpdesk')]);
    const p = await freshPage(browser);
    await ssoSignIn(rig, p.page, person.id);
    await expectSignedIn(p.page, person.email);
    const a = await freshPage(browser);
    await ssoSignIn(rig, a.page, admin.id);
    await a.page.goto(`${rig.origin}/admin/users`);
    const row = a.page.getByTestId(`user-row-${person.email}`);
    await expect(row.getByTestId('sign-in-method')).toHaveText('Single sign-on');
    await expect(row.getByTestId('role-claims')).toHaveText(`from ${group('helpdesk')}`);
    await expect(a.page.getByTestId(`user-row-${users.admin.email}`).getByTestId('sign-in-method')).toHaveText(
      'Password',
    );
    await expect(a.page.getByTestId(`user-row-${admin.email}`).getByTestId('role-claims')).toHaveText(
      `from ${group('admins')}`,
    );
    a.page.once('dialog', (d) => d.accept());
    await row.getByRole('button', { name: 'End sessions' }).click();
    await expect
      .poll(
        async () =>
          (
            await query(
              'select count(*)::int as n from sessions where user_id = (select id from users where email = $1) and revoked_at is null',
              [person.email],
            )
          )[0].n,
      )
      .toBe(0);
    await p.page.goto(`${rig.origin}/outcomes`);
    await expect(p.page).toHaveURL(/\/sign-in/);
    await p.context.close();
    await a.context.close();
  });

  test('an admin’s role change ends the person’s sessions at once', async ({ browser }) => {
    const admin = account(rig, 'role-admin', [group('admins')]);
    const person = account(rig, 'role-person', [group('reviewers')]);
    const p = await freshPage(browser);
    await ssoSignIn(rig, p.page, person.id);
    await expectSignedIn(p.page, person.email);
    const a = await freshPage(browser);
    await ssoSignIn(rig, a.page, admin.id);
    await a.page.goto(`${rig.origin}/admin/users`);
    await a.page.getByLabel(`Role of ${person.email}`).selectOption('support');
    await expect.poll(async () => (await userByEmail(person.email)).role).toBe('support');
    await p.page.goto(`${rig.origin}/outcomes`);
    await expect(p.page).toHaveURL(/\/sign-in/);
    await p.context.close();
    await a.context.close();
  });
});
