import { readFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { signIn, users } from '../testing/e2e';
import { harness } from '../testing/env';

test.describe('sign-in', () => {
  for (const who of ['admin', 'reviewer', 'support'] as const) {
    test(`${who} signs in and sees their role and the navigation for it`, async ({ page }) => {
      await signIn(page, who);
      await expect(page.getByTestId('viewer-role')).toHaveText(who[0].toUpperCase() + who.slice(1));
      const nav = page.getByRole('navigation', { name: 'Main' });
      for (const item of ['Overview', 'Outcomes', 'Approvals', 'Incidents'])
        await expect(nav.getByRole('link', { name: item })).toBeVisible();
      if (who === 'admin') {
        await expect(nav.getByRole('link', { name: 'Users' })).toBeVisible();
        await expect(nav.getByRole('link', { name: 'API keys' })).toBeVisible();
      } else {
        await expect(nav.getByRole('link', { name: 'Users' })).toHaveCount(0);
        await expect(nav.getByRole('link', { name: 'API keys' })).toHaveCount(0);
      }
    });
  }

  test('a wrong password is refused with a readable message', async ({ page }) => {
    await page.goto('/sign-in');
    await page.getByLabel('Email').fill(users.admin.email);
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByTestId('sign-in-error')).toContainText('Wrong email or password');
    await expect(page).toHaveURL(/\/sign-in/);
    // The email is kept so the person only retypes the password.
    await expect(page.getByLabel('Email')).toHaveValue(users.admin.email);
    // The server logs one readable line for it, never a stack trace.
    const log = readFileSync(harness.e2eServerLog()!, 'utf8');
    expect(log).toContain('[auth] sign-in refused: wrong e-mail or password');
    expect(log).not.toMatch(/CredentialsSignin/);
  });

  test('signed out, every console page redirects to sign-in', async ({ page }) => {
    for (const path of ['/', '/outcomes', '/admin/users', '/account']) {
      await page.goto(path);
      await expect(page).toHaveURL(/\/sign-in$/);
    }
  });

  test('sign-out ends the session', async ({ page }) => {
    await signIn(page, 'reviewer');
    await page.getByRole('button', { name: 'Sign out' }).first().click();
    await expect(page).toHaveURL(/\/sign-in/);
    await page.goto('/');
    await expect(page).toHaveURL(/\/sign-in$/);
  });

  test('the keyboard alone can sign in', async ({ page }) => {
    await page.goto('/sign-in');
    await page.keyboard.type(users.support.email); // the email field has focus
    await page.keyboard.press('Tab');
    await page.keyboard.type('countersign-demo');
    await page.keyboard.press('Enter');
    await expect(page.getByTestId('viewer-email')).toHaveText(users.support.email);
  });
});
