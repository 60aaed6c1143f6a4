import { expect, test } from '@playwright/test';
import { signIn } from '../testing/e2e';

test.describe('admin pages', () => {
  for (const who of ['support', 'reviewer'] as const) {
    test(`${who} is denied the admin pages`, async ({ page }) => {
      await signIn(page, who);
      for (const path of ['/admin/users', '/admin/api-keys', '/admin/servers', '/admin/audit']) {
        const res = await page.goto(path);
        expect(res?.status()).toBe(403);
        await expect(page.getByTestId('forbidden')).toBeVisible();
      }
    });
  }

  test('at phone width no admin page or the account scrolls sideways (wide tables scroll inside their card)', async ({
    page,
  }) => {
    await page.setViewportSize({ width: 390, height: 844 });
    await signIn(page, 'admin');
    for (const path of ['/admin/users', '/admin/webhooks', '/admin/api-keys', '/admin/policy', '/account']) {
      await page.goto(path);
      const overflow = await page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      );
      expect(overflow, path).toBe(0);
    }
  });

  test('an admin creates an API key, sees it exactly once, uses it, revokes it', async ({ page, request }) => {
    await signIn(page, 'admin');
    await page.goto('/admin/api-keys');
    const name = `gateway-${Date.now()}`;
    await page.getByLabel('Name').fill(name);
    await page.getByRole('checkbox', { name: /outcomes:read/ }).check();
    await page.getByRole('button', { name: 'Create API key' }).click();
    const secret = (await page.getByTestId('secret-value').textContent()) ?? '';
    expect(secret).toMatch(/^cs_live_/);
    await expect(page.getByTestId(`apikey-row-${name}`)).toBeVisible();
    await expect(page.getByTestId(`apikey-row-${name}`)).not.toContainText(secret);

    // Shown once: a reload never shows it again, anywhere on the page.
    await page.reload();
    await expect(page.getByTestId('secret-once')).toHaveCount(0);
    expect(await page.content()).not.toContain(secret);

    const me = await request.get('/api/v1/me', { headers: { authorization: `Bearer ${secret}` } });
    expect(me.status()).toBe(200);
    expect(await me.json()).toMatchObject({ kind: 'api_key', name, scopes: ['outcomes:write', 'outcomes:read'] });

    page.once('dialog', (d) => d.accept());
    await page.getByTestId(`apikey-row-${name}`).getByRole('button', { name: 'Revoke' }).click();
    await expect(page.getByTestId(`apikey-row-${name}`)).toContainText('Revoked');
    const after = await request.get('/api/v1/me', { headers: { authorization: `Bearer ${secret}` } });
    expect(after.status()).toBe(401);
    expect(after.headers()['content-type']).toContain('application/problem+json');
  });

  test('an admin adds a user who can then sign in; a duplicate email names the field', async ({ page, browser }) => {
    await signIn(page, 'admin');
    await page.goto('/admin/users');
    const email = `new-${Date.now()}@example.test`;
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Role', { exact: true }).selectOption('support');
    await page.getByLabel('Initial password').fill('a-long-initial-password');
    await page.getByRole('button', { name: 'Create user' }).click();
    await expect(page.getByTestId(`user-row-${email}`)).toContainText('Support');

    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Initial password').fill('a-long-initial-password');
    await page.getByRole('button', { name: 'Create user' }).click();
    await expect(page.getByTestId('form-error')).toContainText('already exists');

    const other = await browser.newPage();
    await other.goto('/sign-in');
    await other.getByLabel('Email').fill(email);
    await other.getByLabel('Password').fill('a-long-initial-password');
    await other.getByRole('button', { name: 'Sign in' }).click();
    await expect(other.getByTestId('viewer-email')).toHaveText(email);
    await other.close();
  });

  test('an admin trusts a server and stops trusting it', async ({ page }) => {
    await signIn(page, 'admin');
    await page.goto('/admin/servers');
    const name = `e2e-mcp-${Date.now()}`;
    await page.getByLabel('Server name').fill('has spaces');
    await page.getByRole('button', { name: 'Trust server' }).click();
    await expect(page.getByText('letters, digits')).toBeVisible();
    await page.getByLabel('Server name').fill(name);
    await page.getByRole('button', { name: 'Trust server' }).click();
    await expect(page.getByTestId(`server-row-${name}`)).toContainText('admin@countersign.local');
    page.once('dialog', (d) => d.accept());
    await page.getByTestId(`server-row-${name}`).getByRole('button', { name: 'Stop trusting' }).click();
    await expect(page.getByTestId(`server-row-${name}`)).toHaveCount(0);
  });

  test('an admin sees the audit chain verified, its head hash and the latest entries', async ({ page }) => {
    await signIn(page, 'admin');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit log' }).click();
    await expect(page.getByTestId('audit-ok')).toContainText('Intact');
    await expect(page.getByTestId('audit-head')).toHaveText(/^sha256:[0-9a-f]{64}$/);
    await expect(page.getByTestId('retention')).toContainText(
      'Outcome records are kept 90 days after they arrive, purged hourly.',
    );
    // The demo seed alone wrote user, server, key and revocation entries.
    await expect(page.getByTestId('audit-row').filter({ hasText: 'user.create' }).first()).toBeVisible();
  });
});
