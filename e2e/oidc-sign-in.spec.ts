import { expect, test } from '@playwright/test';
import {
  account,
  auditFor,
  BUTTON,
  expectSignedIn,
  freshPage,
  group,
  ssoSignIn,
  startSsoRig,
  userByEmail,
  type SsoRig,
} from '../testing/oidc';

// A real OpenID provider (oidc-provider, in this process) and a second console configured against
// it; Chromium goes through the real redirects.
let rig: SsoRig;

test.beforeAll(async () => {
  test.setTimeout(90_000);
  rig = await startSsoRig();
});

test.afterAll(async () => {
  await rig?.stop();
});

test.afterEach(() => {
  rig.provider.tamperIdToken = null;
  rig.provider.codeTtl = 60;
  rig.provider.tamperCallback = null;
});

test.describe('SSO sign-in: roles from the provider', () => {
  // Groups → expected role, written out: several matches give the strongest.
  const cases: [string, string[], string][] = [
    ['first-admin', [group('admins')], 'admin'],
    ['first-reviewer', [group('reviewers'), 'unrelated'], 'reviewer'],
    ['first-support', [group('helpdesk')], 'support'],
    ['first-several', [group('helpdesk'), group('admins'), group('reviewers')], 'admin'],
  ];
  for (const [id, groups, role] of cases) {
    test(`first sign-in creates the person with role ${role} (${id})`, async ({ browser }) => {
      const who = account(rig, id, groups);
      const { context, page } = await freshPage(browser);
      await ssoSignIn(rig, page, who.id);
      await expectSignedIn(page, who.email);
      const user = await userByEmail(who.email);
      expect(user).toMatchObject({ role, principal_id: who.email, password_hash: null });
      expect(user.role_claims.sort()).toEqual(groups.filter((g) => g !== 'unrelated').sort());
      const audit = await auditFor(user.id);
      expect(audit.map((a) => a.action)).toEqual(['user.sso_create']);
      expect(audit[0].data).toMatchObject({ email: who.email, role });
      // No token of any kind is kept: the entry holds only the values used.
      expect(JSON.stringify(audit[0].data)).not.toMatch(/eyJ|id_token|access_token/);
      await context.close();
    });
  }

  test('a group change changes the role at the next sign-in and ends the older session', async ({ browser }) => {
    const who = account(rig, 'mover', [group('reviewers')]);
    const first = await freshPage(browser);
    await ssoSignIn(rig, first.page, who.id);
    await expectSignedIn(first.page, who.email);
    expect((await userByEmail(who.email)).role).toBe('reviewer');

    rig.provider.accounts.get(who.id)!.groups = [group('helpdesk')];
    const second = await freshPage(browser);
    await ssoSignIn(rig, second.page, who.id);
    await expectSignedIn(second.page, who.email);
    const user = await userByEmail(who.email);
    expect(user.role).toBe('support');
    expect(user.role_claims).toEqual([group('helpdesk')]);
    const audit = await auditFor(user.id);
    expect(audit.map((a) => a.action)).toEqual(['user.sso_create', 'user.sso_update']);
    expect(audit[1].data).toMatchObject({ from: { role: 'reviewer' }, to: { role: 'support' } });

    // The session signed in as a reviewer is over at its next request.
    await first.page.goto(`${rig.origin}/approvals`);
    await expect(first.page).toHaveURL(/\/sign-in/);
    await first.context.close();
    await second.context.close();
  });

  test('a sign-in that changes nothing is not audited again', async ({ browser }) => {
    const who = account(rig, 'same', [group('reviewers')]);
    for (let i = 0; i < 2; i++) {
      const { context, page } = await freshPage(browser);
      await ssoSignIn(rig, page, who.id);
      await expectSignedIn(page, who.email);
      await context.close();
    }
    const user = await userByEmail(who.email);
    expect((await auditFor(user.id)).map((a) => a.action)).toEqual(['user.sso_create']);
  });
});

test.describe('SSO sign-in: refused', () => {
  test('no mapped group: a page saying so, no session, nobody created', async ({ browser }) => {
    const who = account(rig, 'nogroup', ['unrelated', group('admins').toUpperCase()]);
    const { context, page } = await freshPage(browser);
    await ssoSignIn(rig, page, who.id);
    await expect(page).toHaveURL(/\/sign-in\/refused\?reason=no_role/);
    await expect(page.getByTestId('sign-in-refused')).toContainText('has no access to Countersign');
    expect(await userByEmail(who.email)).toBeUndefined();
    await page.goto(`${rig.origin}/`);
    await expect(page).toHaveURL(/\/sign-in/);
    await context.close();
  });

  test('a person disabled in Countersign stays out whatever the provider says', async ({ browser }) => {
    const who = account(rig, 'disabled', [group('reviewers')]);
    const first = await freshPage(browser);
    await ssoSignIn(rig, first.page, who.id);
    await expectSignedIn(first.page, who.email);
    await first.context.close();
    const { query } = await import('../testing/oidc');
    await query('update users set disabled_at = now() where email = $1', [who.email]);

    rig.provider.accounts.get(who.id)!.groups = [group('admins')];
    const { context, page } = await freshPage(browser);
    await ssoSignIn(rig, page, who.id);
    await expect(page).toHaveURL(/\/sign-in\/refused\?reason=disabled/);
    await expect(page.getByTestId('sign-in-refused')).toContainText('disabled');
    const user = await userByEmail(who.email);
    expect(user.role).toBe('reviewer'); // not promoted by the provider either
    await page.goto(`${rig.origin}/`);
    await expect(page).toHaveURL(/\/sign-in/);
    await context.close();
  });

  // Each answer below is verified by the console's own checks; none creates anyone.
  const tampered: [string, Record<string, unknown>][] = [
    ['a wrong nonce', { nonce: 'not-the-nonce-the-console-sent' }],
    ['an ID token for another audience', { aud: 'another-client' }],
    ['an ID token from another issuer', { iss: 'http://127.0.0.1:9/other-issuer' }],
    ['an expired ID token', { exp: Math.floor(Date.now() / 1000) - 3600, iat: Math.floor(Date.now() / 1000) - 7200 }],
  ];
  for (const [what, claims] of tampered) {
    test(`${what}: refused with a clear page, nothing created`, async ({ browser }) => {
      const who = account(rig, `tamper-${Object.keys(claims)[0]}`, [group('admins')]);
      rig.provider.tamperIdToken = claims;
      const { context, page } = await freshPage(browser);
      await ssoSignIn(rig, page, who.id);
      await expect(page).toHaveURL(/\/sign-in(\/error)?\?error=/);
      await expect(page.getByTestId('sign-in-failed')).toContainText('could not be verified');
      expect(await userByEmail(who.email)).toBeUndefined();
      await page.goto(`${rig.origin}/`);
      await expect(page).toHaveURL(/\/sign-in/);
      await context.close();
    });
  }

  test('a tampered state: refused, nothing created', async ({ browser }) => {
    const who = account(rig, 'tamper-state', [group('admins')]);
    const { context, page } = await freshPage(browser);
    rig.provider.tamperCallback = (url) => url.searchParams.set('state', `${url.searchParams.get('state')}x`);
    await ssoSignIn(rig, page, who.id);
    await expect(page.getByTestId('sign-in-failed')).toContainText('could not be verified');
    expect(await userByEmail(who.email)).toBeUndefined();
    await context.close();
  });

  test('a callback URL driven by hand without the sign-in cookies (forged code and state): refused', async ({
    browser,
  }) => {
    const { context, page } = await freshPage(browser);
    await page.goto(`${rig.origin}/api/auth/callback/oidc?code=forged&state=forged&iss=${rig.provider.issuer}`);
    await expect(page.getByTestId('sign-in-failed')).toContainText('could not be verified');
    await page.goto(`${rig.origin}/`);
    await expect(page).toHaveURL(/\/sign-in/);
    await context.close();
  });

  test('an expired authorization code: refused, nothing created', async ({ browser }) => {
    const who = account(rig, 'expired-code', [group('admins')]);
    rig.provider.codeTtl = 1;
    const { context, page } = await freshPage(browser);
    // Hold the provider's redirect back to the console until the code has expired.
    rig.provider.tamperCallback = () => new Promise((r) => setTimeout(r, 2_500));
    await ssoSignIn(rig, page, who.id);
    await expect(page.getByTestId('sign-in-failed')).toContainText('could not be verified');
    expect(await userByEmail(who.email)).toBeUndefined();
    await context.close();
  });

  test('the sign-in page shows the button with the configured name', async ({ page }) => {
    await page.goto(`${rig.origin}/sign-in`);
    await expect(page.getByRole('button', { name: BUTTON })).toBeVisible();
    await expect(page.getByLabel('Password')).toBeVisible(); // passwords are on for this console
  });
});
