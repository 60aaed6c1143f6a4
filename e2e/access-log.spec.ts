import { expect, test } from '@playwright/test';
import { cli, secretFrom, signIn, users } from '../testing/e2e';

// Every incident page view, API read and export leaves one row; only admins read them.
test.describe('incident access log', () => {
  test('an admin sees who opened an incident and how; filters by reference and actor', async ({
    page,
    browser,
    request,
  }) => {
    const keyName = `e2e-access-${Date.now()}`;
    const key = secretFrom(cli('apikeys:create', '--name', keyName, '--scopes', 'outcomes:read'), 'cs_live_');

    await signIn(page, 'support');
    await page.goto('/incidents/req_silent_8003');
    await expect(page.getByTestId('incident-sentence')).toBeVisible();
    expect(
      (
        await request.get('/api/v1/incidents/req_silent_8003?format=markdown', {
          headers: { authorization: `Bearer ${key}` },
        })
      ).status(),
    ).toBe(200);

    const adminContext = await browser.newContext();
    const admin = await adminContext.newPage();
    await signIn(admin, 'admin');
    await admin.goto('/admin/access-log');
    // Newest first: the key's export, then support's page view.
    const rows = admin.getByTestId('access-row');
    await expect(rows.nth(0)).toContainText(keyName);
    await expect(rows.nth(0)).toContainText('API key');
    await expect(rows.nth(0)).toContainText('Markdown');
    await expect(rows.nth(0).getByTestId('access-ref')).toHaveText('req_silent_8003');
    await expect(rows.nth(1).getByTestId('access-actor')).toHaveText(users.support.email);
    await expect(rows.nth(1)).toContainText('Console');
    await expect(rows.nth(1)).toContainText('Page view');

    // Filter by actor through the form, then by reference from a row's link.
    await admin.getByLabel('Actor').fill(users.support.email);
    await admin.getByRole('button', { name: 'Filter' }).click();
    await expect(admin).toHaveURL(/actor=support%40countersign\.local/);
    await expect(rows.first()).toBeVisible();
    for (const actor of await rows.getByTestId('access-actor').allTextContents())
      expect(actor).toBe(users.support.email);
    await rows.first().getByTestId('access-ref').click();
    await expect(admin).toHaveURL(/\/admin\/access-log\?requestRef=req_silent_8003$/);
    const actors = await rows.getByTestId('access-actor').allTextContents();
    expect(actors).toContain(users.support.email);
    expect(actors.some((a) => a.startsWith('api_key:'))).toBe(true);
    await expect(admin.getByTestId('access-ref')).toHaveText(Array(actors.length).fill('req_silent_8003'));

    // Links to incidents (a record page's, this log's own) are not views: prefetching logs nothing.
    const before = await admin.getByTestId('access-row').count();
    await admin.goto('/outcomes?requestRef=req_silent_8003');
    await admin.getByTestId('outcome-row').first().getByRole('link').first().click();
    await expect(admin.getByTestId('incident-link')).toBeVisible();
    await admin.waitForTimeout(1_000);
    await admin.goto('/admin/access-log?requestRef=req_silent_8003');
    await expect(admin.getByTestId('access-row')).toHaveCount(before);
    await adminContext.close();
  });

  for (const who of ['support', 'reviewer'] as const) {
    test(`${who} is denied the access log`, async ({ page }) => {
      await signIn(page, who);
      const res = await page.goto('/admin/access-log');
      expect(res?.status()).toBe(403);
      await expect(page.getByTestId('forbidden')).toBeVisible();
      await expect(page.getByTestId('access-row')).toHaveCount(0);
    });
  }
});
