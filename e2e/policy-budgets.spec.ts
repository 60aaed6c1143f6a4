// The guards' budgets on the Policy page (docs/design.md "Guards at the point of execution"):
// set with the keyboard alone, refused with the field named, listed on the rule, cleared by a blank.
import { expect, test } from '@playwright/test';
import { signIn } from '../testing/e2e';

test('an admin sets, sees and clears a rule’s budgets from the keyboard', async ({ page }) => {
  await signIn(page, 'admin');
  await page.goto('/admin/policy');
  const server = `e2e-budgets-${Date.now()}`;
  const calls = page.getByLabel('Calls', { exact: true });
  // The defaults stand in the empty fields.
  await expect(page.getByLabel('Failed attempts', { exact: true })).toHaveAttribute('placeholder', '5');
  await expect(calls).toHaveAttribute('placeholder', '200');
  await expect(page.getByLabel('Backoff base (ms)', { exact: true })).toHaveAttribute('placeholder', '1000');

  await page.getByLabel('Server', { exact: true }).fill(server);
  await page.getByLabel('Tool', { exact: true }).fill('refund_payment');
  // From the tool field on, by Tab alone: approvals, fields shown, then the three budgets.
  await page.getByLabel('Tool', { exact: true }).focus();
  await page.keyboard.press('Tab');
  await expect(page.getByLabel('Approvals required')).toBeFocused();
  await page.keyboard.press('Tab');
  await page.keyboard.press('Tab');
  await expect(page.getByLabel('Failed attempts', { exact: true })).toBeFocused();
  await page.keyboard.type('3');
  await page.keyboard.press('Tab');
  await expect(calls).toBeFocused();
  await page.keyboard.type('0');
  await page.keyboard.press('Enter');
  await expect(page.getByText('Calls must be a whole number from 1 to 100000 (empty: inherit)')).toBeVisible();
  await expect(calls).toHaveAttribute('aria-invalid', 'true');
  // What was typed stays, to be corrected.
  await expect(page.getByLabel('Failed attempts', { exact: true })).toHaveValue('3');

  await calls.fill('40');
  await calls.press('Enter');
  await expect(
    page.getByText(`Saved: refund_payment on ${server} needs 1 approval; budgets: 3 failed attempts, 40 calls.`),
  ).toBeVisible();
  const rule = page.getByTestId(`rule-${server}-refund_payment`);
  await expect(rule).toContainText('3 failed attempts');
  await expect(rule).toContainText('40 calls');

  // The form holds the whole rule: saved again with the budgets blank, they are inherited again.
  await page.getByLabel('Server', { exact: true }).fill(server);
  await page.getByLabel('Tool', { exact: true }).fill('refund_payment');
  await page.getByRole('button', { name: 'Save rule' }).click();
  await expect(page.getByText(`Saved: refund_payment on ${server} needs 1 approval.`)).toBeVisible();
  await expect(rule).toContainText('inherited');

  page.once('dialog', (d) => d.accept());
  await rule.getByRole('button', { name: 'Delete' }).click();
  await expect(rule).toHaveCount(0);
});
