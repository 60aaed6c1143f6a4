// Screenshots of the main pages at 1440 and 390 px, for people to look at (not an assertion).
// Run on demand: SCREENSHOTS=1 npm run test:e2e -- e2e/layout/screenshots.spec.ts; files in test-results/screens.
import { expect, test } from '@playwright/test';
import { signIn } from '../../testing/e2e';
import { config } from '../../lib/config';

const paths = ['/', '/outcomes', '/admin/authorizations', '/admin/users', '/admin/tools', '/admin/audit', '/account'];

test.skip(!config().SCREENSHOTS, 'set SCREENSHOTS=1 to take them');

for (const width of [1440, 390] as const) {
  test(`screenshots at ${width} px`, async ({ page }) => {
    test.setTimeout(120_000);
    await page.setViewportSize({ width, height: 900 });
    await signIn(page, 'admin');
    await page.goto('/outcomes');
    const first = page.getByTestId('outcome-row').first().getByRole('link').first();
    const record = (await first.getAttribute('href')) ?? '/outcomes';
    for (const path of [...paths, record]) {
      await page.goto(path);
      await expect(page.getByTestId('findings-loading')).toHaveCount(0);
      const name = path === '/' ? 'overview' : path.slice(1).replaceAll('/', '_').slice(0, 40);
      await page.screenshot({
        path: `test-results/screens/${width}-${name}.png`,
        fullPage: true,
        clip: { x: 0, y: 0, width, height: width === 390 ? 1400 : 900 },
      });
    }
    if (width === 390) {
      await page.goto('/outcomes');
      await expect(page.getByTestId('findings-loading')).toHaveCount(0);
      await page.getByRole('button', { name: /Menu/ }).click();
      await page.screenshot({ path: `test-results/screens/390-menu-open.png` });
    }
  });
}
