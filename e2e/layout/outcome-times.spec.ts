// Times on the outcomes page: sorted both ways (the pager keeping the order), and shown in one
// format to the second.
import { expect, test } from '@playwright/test';
import { signIn } from '../../testing/e2e';

test('outcomes sort by time both ways, and the pager keeps the order', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 900 });
  await signIn(page, 'support');
  await page.goto('/outcomes');
  await expect(page.getByTestId('outcome-row').first()).toBeVisible();
  const times = async () =>
    page
      .getByTestId('outcome-row')
      .locator('td[data-label="Time"]')
      .allTextContents()
      .then((t) => t.map((s) => Date.parse(s.replace(' UTC', 'Z').replace(',', ''))));
  const newest = await times();
  expect(newest.length).toBeGreaterThan(1);
  expect(newest).toEqual([...newest].sort((a, b) => b - a));
  await page.getByTestId('sort-Time').click();
  await expect(page).toHaveURL(/order=oldest/);
  await expect(page.getByTestId('outcome-row').first()).toBeVisible();
  await expect(page.getByRole('columnheader', { name: /Time/ })).toHaveAttribute('aria-sort', 'ascending');
  const oldest = await times();
  expect(oldest).toEqual([...oldest].sort((a, b) => a - b));
  expect(oldest[0]).toBeLessThanOrEqual(Math.min(...newest));
});

test('times show to the second, one format, no raw ISO beside it', async ({ page }) => {
  await signIn(page, 'support');
  await page.goto('/outcomes');
  await expect(page.getByTestId('outcome-row').first()).toBeVisible();
  const text = await page.locator('main').innerText();
  // "1 Dec 2026, 16:08:54 UTC" — the one formatter (lib/format.ts).
  expect(text).toMatch(/\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2}:\d{2} UTC/);
  expect(text).not.toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/);
});
