// The console's shell at three widths: the phone's Menu button and the navigation it opens, the
// desktop sidebar the full height of a long page, a wide main column, and visible focus.
import { expect, test } from '@playwright/test';
import { signIn } from '../../testing/e2e';
import { expectOnScreen, h1, sidewaysOverflow } from '../../testing/e2e-layout';

test.describe('shell', () => {
  test('at 390 px a Menu button opens the whole navigation; no row of items runs off the screen', async ({ page }) => {
    await page.setViewportSize({ width: 390, height: 844 });
    await signIn(page, 'admin');
    const nav = page.getByRole('navigation', { name: 'Main' });
    await expect(nav).toBeHidden();
    const menu = page.getByTestId('menu-button');
    await expect(menu).toHaveAccessibleName(/^Menu/);
    await expect(menu).toHaveAttribute('aria-expanded', 'false');
    await menu.click();
    await expect(menu).toHaveAttribute('aria-expanded', 'true');
    await expect(menu).toHaveAccessibleName('Close');
    // Every item of an admin's navigation, on screen and stacked (hand-listed).
    const expected = [
      'Overview',
      'Outcomes',
      'Approvals',
      'Incidents',
      'Tools',
      'Authorizations',
      'Users',
      'API keys',
      'Servers',
      'Policy',
      'Webhooks',
      'Audit log',
      'Access log',
      'API reference',
      'Account',
    ];
    for (const label of expected) await expectOnScreen(nav.getByRole('link', { name: label }), label);
    await expect(page.getByRole('button', { name: 'Sign out' })).toBeVisible();
    await nav.getByRole('link', { name: 'Users' }).click();
    await expect(h1(page, 'Users')).toBeVisible();
    await expect(nav).toBeHidden();
    expect(await sidewaysOverflow(page)).toBe(0);
  });

  test('at 1280 px the sidebar shows the navigation and runs the full height of a long page', async ({ page }) => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await signIn(page, 'admin');
    await page.goto('/outcomes');
    await expect(page.getByTestId('outcome-row').first()).toBeVisible();
    await expect(page.getByTestId('menu-button')).toBeHidden();
    await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Outcomes' })).toBeVisible();
    const { aside, doc } = await page.evaluate(() => ({
      aside: document.querySelector('aside')!.getBoundingClientRect().height,
      doc: document.documentElement.scrollHeight,
    }));
    expect(doc).toBeGreaterThan(1200); // a long page, or the check proves nothing
    expect(aside).toBe(doc);
    // Scrolled to the bottom, the navigation is still in view.
    await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
    await expect(
      page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Outcomes' }),
    ).toBeInViewport();
  });

  test('content uses a wide screen: at 1920 px the main column is wider than 1280 px', async ({ page }) => {
    await page.setViewportSize({ width: 1920, height: 1000 });
    await signIn(page, 'support');
    await page.goto('/outcomes');
    const width = await page.locator('main').evaluate((m) => m.getBoundingClientRect().width);
    expect(width).toBeGreaterThan(1280);
  });

  test('focus is visible: a focused link in the sidebar and in a table has an outline that is not clipped', async ({
    page,
  }) => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await signIn(page, 'support');
    await page.goto('/outcomes');
    for (const link of [
      page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Outcomes' }),
      page.getByTestId('outcome-row').first().getByRole('link').first(),
    ]) {
      await link.focus();
      await page.keyboard.press('Shift+Tab');
      await page.keyboard.press('Tab');
      await expect(link).toBeFocused();
      const outline = await link.evaluate((el) => {
        const s = getComputedStyle(el);
        return { style: s.outlineStyle, width: parseFloat(s.outlineWidth) };
      });
      expect(outline.style).not.toBe('none');
      expect(outline.width).toBeGreaterThanOrEqual(2);
      await expectOnScreen(link, 'focused link');
    }
  });
});
