import { expect, test } from '@playwright/test';
import {
  account,
  auditFor,
  expectSignedIn,
  freshPage,
  group,
  ssoSignIn,
  startSsoRig,
  userByEmail,
  type SsoRig,
} from '../testing/oidc';

// Company sign-in under either loopback name: the console reached as http://127.0.0.1:PORT or as
// http://localhost:PORT, with COUNTERSIGN_PUBLIC_URL naming that same address (as an operator sets it)
// or not set at all. The redirect URI, the state, PKCE and nonce checks must all hold under the name
// the browser uses, through the real provider and Chromium's real redirects.
const cases: { host: '127.0.0.1' | 'localhost'; publicUrl: boolean }[] = [
  { host: '127.0.0.1', publicUrl: true },
  { host: 'localhost', publicUrl: true },
  { host: '127.0.0.1', publicUrl: false },
  { host: 'localhost', publicUrl: false },
];

for (const { host, publicUrl } of cases) {
  test.describe(`SSO at http://${host}:PORT, COUNTERSIGN_PUBLIC_URL ${publicUrl ? 'naming it' : 'not set'}`, () => {
    let rig: SsoRig;

    test.beforeAll(async () => {
      test.setTimeout(90_000);
      rig = await startSsoRig({}, { host, publicUrl });
    });

    test.afterAll(async () => {
      await rig?.stop();
    });

    test('a company sign-in ends signed in, at that address, with the person created', async ({ browser }) => {
      const id = `loopback-${host.replace(/\W/g, '')}-${publicUrl ? 'public' : 'seen'}`;
      const who = account(rig, id, [group('reviewers')]);
      const { context, page } = await freshPage(browser);
      await ssoSignIn(rig, page, who.id);
      expect(new URL(page.url()).origin).toBe(rig.origin);
      expect(page.url()).not.toMatch(/\/sign-in/);
      await expectSignedIn(page, who.email);
      const user = await userByEmail(who.email);
      expect(user).toMatchObject({ role: 'reviewer', principal_id: who.email });
      expect((await auditFor(user.id)).map((a) => a.action)).toEqual(['user.sso_create']);
      // The session holds at that address: a page that needs it opens.
      await page.goto(`${rig.origin}/approvals`);
      await expect(page).toHaveURL(`${rig.origin}/approvals`);
      await context.close();
    });
  });
}
