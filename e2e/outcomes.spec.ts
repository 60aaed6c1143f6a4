import { expect, test } from '@playwright/test';
import { signIn } from '../testing/e2e';

// Runs on the demo data that `npm test` seeds (scripts/demo-outcomes.ts).
test.describe('outcome log', () => {
  test('support filters to unknown-outcome writes, opens one and reads what was and was not done', async ({ page }) => {
    await signIn(page, 'support');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Outcomes' }).click();
    // Unresolved ones: a resolved unknown's next step says what settled it, not "check state".
    await page
      .getByRole('navigation', { name: 'Quick views' })
      .getByRole('link', { name: 'Unresolved unknown writes', exact: true })
      .click();
    await expect(page).toHaveURL(/resolution=unresolved/);
    const rows = page.getByTestId('outcome-row');
    await expect(rows.first()).toBeVisible();
    const count = await rows.count();
    expect(count).toBeGreaterThan(1);
    for (let i = 0; i < count; i++) {
      await expect(rows.nth(i).getByTestId('delivery-badge')).toHaveText('Unknown');
      await expect(rows.nth(i)).toContainText('Write may have happened');
    }
    await rows.first().getByRole('link').first().click();
    await expect(page.getByTestId('what-happened')).toContainText('was sent but no trustworthy answer came back');
    await expect(page.getByTestId('what-happened')).toContainText('it may have taken effect');
    await expect(page.getByTestId('next-step')).toContainText(/Check the current state first|check state/i);
  });

  test('a request reference filter shows one incident, in the URL, and never shows a failure as success', async ({
    page,
  }) => {
    await signIn(page, 'reviewer');
    await page.goto('/outcomes');
    await page.locator('summary', { hasText: 'Filters' }).click();
    await page.getByRole('textbox', { name: 'Request reference', exact: true }).fill('req_refund_4411');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect(page).toHaveURL(/requestRef=req_refund_4411/);
    const rows = page.getByTestId('outcome-row');
    await expect(rows).toHaveCount(4);
    // Newest first: the replay that completed, the check, then the timeout (unknown) before it.
    await expect(rows.nth(0).getByTestId('delivery-badge')).toHaveText('Completed');
    await expect(rows.nth(2).getByTestId('delivery-badge')).toHaveText('Unknown');
  });

  test("a task record shows the task's current status, its history and the classifier version", async ({ page }) => {
    await signIn(page, 'support');
    await page.goto('/outcomes?requestRef=req_task_ledger_5120');
    const rows = page.getByTestId('outcome-row');
    await expect(rows).toHaveCount(2);
    // Newest first: open the older record, the task still working when it was seen.
    await rows.nth(1).getByRole('link').first().click();
    await expect(page.getByTestId('what-happened')).toContainText('runs as an MCP task that has not finished');
    // The task's later record settled it (resolution by task id): the next step says so, and
    // no longer asks to poll a task that has ended.
    await expect(page.getByTestId('next-step')).toContainText(
      'completed: the write took effect. Do not call it again.',
    );
    await expect(page.getByTestId('classifier-version')).toHaveText('3');
    await expect(page.getByTestId('task-current')).toHaveText('Current status: completed');
    const history = page.getByTestId('task-history').locator('li');
    await expect(history).toHaveCount(2);
    await expect(history.nth(0)).toContainText('working (this record)');
    // The later record of the same task is one click away.
    await history.nth(1).getByRole('link', { name: 'completed' }).click();
    await expect(page.getByTestId('what-happened')).toContainText('ran and completed successfully');
  });

  test('an expired task and the folded -32602 on a write say to check state first', async ({ page }) => {
    await signIn(page, 'support');
    await page.goto('/outcomes?requestRef=req_task_export_5140');
    await page.getByTestId('outcome-row').first().getByRole('link').first().click();
    await expect(page.getByTestId('task-current')).toHaveText('Current status: expired (last seen working)');
    await expect(page.getByTestId('next-step')).toContainText('Check the current state first');
    await page.goto('/outcomes?requestRef=req_refund_4520');
    await page.getByTestId('outcome-row').first().getByRole('link').first().click();
    await expect(page.getByTestId('what-happened')).toContainText('ended in error -32602');
    await expect(page.getByTestId('task-current')).toHaveCount(0);
  });

  test('masked free text: the email in a summary is shown by its kind only', async ({ page }) => {
    await signIn(page, 'support');
    await page.goto('/outcomes?requestRef=req_crm_9100');
    await expect(page.getByTestId('outcome-row')).toHaveCount(2);
    await expect(page.locator('main')).toContainText('[masked:email]');
    await expect(page.locator('main')).toContainText('[masked:phone]');
    await expect(page.locator('main')).not.toContainText('jane.doe@example.com');
  });

  test('pages go back in time without repeating a record', async ({ page }) => {
    await signIn(page, 'support');
    await page.goto('/outcomes');
    const first = await page.getByTestId('outcome-row').first().getByRole('link').first().getAttribute('href');
    const firstPageLinks = await page
      .getByTestId('outcome-row')
      .locator('a[href^="/outcomes/"]')
      .evaluateAll((as) => as.map((a) => a.getAttribute('href')));
    await page.getByTestId('next-page').click();
    await expect(page).toHaveURL(/cursor=/);
    const second = await page
      .getByTestId('outcome-row')
      .locator('a[href^="/outcomes/"]')
      .evaluateAll((as) => as.map((a) => a.getAttribute('href')));
    expect(second.length).toBeGreaterThan(0);
    expect(second).not.toContain(first);
    for (const href of second) expect(firstPageLinks).not.toContain(href);
  });

  test('a bad filter value gets a readable message naming the field', async ({ page }) => {
    await signIn(page, 'support');
    await page.goto('/outcomes?delivery=bogus');
    await expect(page.getByTestId('filter-error')).toContainText('delivery');
  });

  test('the overview counts unknown writes and charts the week', async ({ page }) => {
    await signIn(page, 'support');
    await expect(page.getByTestId('unknown-writes-count').first()).not.toHaveText('0');
    await expect(page.getByRole('img', { name: /Outcome records per six hours/ })).toBeVisible();
    await page.getByTestId('tile-unknown').first().click();
    await expect(page).toHaveURL(/delivery=unknown/);
    await expect(page.getByTestId('outcome-row').first()).toBeVisible();
  });

  test('an unknown record id is a 404 page', async ({ page }) => {
    await signIn(page, 'support');
    const res = await page.goto('/outcomes/00000000-0000-4000-8000-000000000000');
    expect(res?.status()).toBe(404);
    await page.goto('/outcomes/not-a-uuid');
    await expect(page.getByText('Nothing here')).toBeVisible();
  });
});
