import { expect, test } from '@playwright/test';
import { signIn } from '../testing/e2e';

test.describe('tools inventory and policy rules', () => {
  test('an admin sees the demo servers, their trust and what each tool requires', async ({ page }) => {
    await signIn(page, 'admin');
    await page.goto('/admin/tools');
    for (const name of ['billing-mcp', 'orders-mcp']) {
      const server = page.getByTestId(`server-${name}`);
      await expect(server).toContainText('Trusted by cli since');
      await expect(server).not.toContainText('Untrusted');
      await expect(server.getByRole('button', { name: 'Stop trusting' })).toBeVisible();
    }
    const crm = page.getByTestId('server-crm-mcp');
    await expect(crm).toContainText('Untrusted');
    await expect(crm.getByRole('button', { name: 'Trust server' })).toBeVisible();

    // crm-mcp advertises lookup_customer as read-only; untrusted, policy does not believe it.
    const lookup = page.getByTestId('tool-crm-mcp-lookup_customer');
    await expect(lookup).toContainText('Read-only true');
    await expect(lookup).toContainText('MCP defaults: server untrusted');
    await expect(lookup.getByTestId('requirement')).toHaveText('2 approvals');
    // The same hints from a trusted server count.
    const getOrder = page.getByTestId('tool-orders-mcp-get_order');
    await expect(getOrder.getByTestId('requirement')).toHaveText('No approval');
    await expect(getOrder.getByTestId('requirement-basis')).toHaveText('the tool is read-only (trusted server)');
    await expect(page.getByTestId('tool-orders-mcp-update_shipping_address').getByTestId('requirement')).toHaveText(
      '1 approval',
    );
    // The demo data has calls for it within the last seven days, linked to the outcome list.
    await expect(getOrder.getByTestId('last-seen')).toContainText('UTC');
    await expect(getOrder.getByRole('link')).toHaveAttribute(
      'href',
      /\/outcomes\?server=orders-mcp&tool=get_order&from=/,
    );
  });

  test('an admin sets a tool to two approvals, sees it in force and on the policy page, then restores the default', async ({
    page,
  }) => {
    await signIn(page, 'admin');
    await page.goto('/admin/tools');
    const row = page.getByTestId('tool-orders-mcp-get_order');
    const label = 'Approvals for get_order on orders-mcp';
    await row.getByLabel(label, { exact: true }).selectOption('2');
    await row.getByRole('button', { name: `Apply: ${label}` }).click();
    await expect(row.getByTestId('requirement')).toHaveText('2 approvals');
    await expect(row.getByTestId('requirement-basis')).toHaveText('an admin rule for this tool');

    // Still in force after a reload, and listed as a rule with who made it.
    await page.reload();
    await expect(row.getByTestId('requirement')).toHaveText('2 approvals');
    await page.goto('/admin/policy');
    const rule = page.getByTestId('rule-orders-mcp-get_order');
    await expect(rule).toContainText('2 distinct reviewers');
    await expect(rule).toContainText('admin@countersign.local');

    await page.goto('/admin/tools');
    await row.getByLabel(label, { exact: true }).selectOption('default');
    await row.getByRole('button', { name: `Apply: ${label}` }).click();
    await expect(row.getByTestId('requirement')).toHaveText('No approval');
    await expect(row.getByTestId('requirement-basis')).toHaveText('the tool is read-only (trusted server)');
  });

  test('a server rule applies to every tool of the server without its own rule', async ({ page }) => {
    await signIn(page, 'admin');
    await page.goto('/admin/tools');
    const server = page.getByTestId('server-billing-mcp');
    const label = 'Approvals for every tool of billing-mcp';
    await server.getByLabel(label, { exact: true }).selectOption('1');
    await server.getByRole('button', { name: `Apply: ${label}` }).click();
    const listRefunds = page.getByTestId('tool-billing-mcp-list_refunds');
    await expect(listRefunds.getByTestId('requirement')).toHaveText('1 approval');
    await expect(listRefunds.getByTestId('requirement-basis')).toHaveText(
      'an admin rule for every tool of this server',
    );
    await expect(server).toContainText('Rule for every tool: 1 approval');

    await server.getByLabel(label, { exact: true }).selectOption('default');
    await server.getByRole('button', { name: `Apply: ${label}` }).click();
    await expect(listRefunds.getByTestId('requirement')).toHaveText('No approval');
    await expect(server).not.toContainText('Rule for every tool');
  });

  test('support staff see the inventory but no admin controls', async ({ page }) => {
    await signIn(page, 'support');
    const res = await page.goto('/admin/tools');
    expect(res?.status()).toBe(200);
    await expect(page.getByTestId('server-billing-mcp')).toContainText('Trusted by cli');
    await expect(page.getByTestId('tool-crm-mcp-lookup_customer').getByTestId('requirement')).toHaveText('2 approvals');
    const main = page.locator('main');
    await expect(main.getByRole('button')).toHaveCount(0);
    await expect(main.getByRole('combobox')).toHaveCount(0);
    await expect(main.getByRole('link', { name: /Policy rules/ })).toHaveCount(0);
  });

  for (const who of ['support', 'reviewer'] as const) {
    test(`${who} is denied the policy page`, async ({ page }) => {
      await signIn(page, who);
      const res = await page.goto('/admin/policy');
      expect(res?.status()).toBe(403);
      await expect(page.getByTestId('forbidden')).toBeVisible();
    });
  }

  test('an admin blocks a tool: shown blocked on the Tools and Policy pages, then restored', async ({ page }) => {
    await signIn(page, 'admin');
    await page.goto('/admin/tools');
    const row = page.getByTestId('tool-orders-mcp-get_order');
    const label = 'Approvals for get_order on orders-mcp';
    await row.getByLabel(label, { exact: true }).selectOption('blocked');
    await row.getByRole('button', { name: `Apply: ${label}` }).click();
    await expect(row.getByTestId('requirement')).toHaveText('Blocked');
    await page.goto('/admin/policy');
    await expect(page.getByTestId('rule-orders-mcp-get_order')).toContainText('Blocked: not exposed');
    await page.goto('/admin/tools');
    await row.getByLabel(label, { exact: true }).selectOption('default');
    await row.getByRole('button', { name: `Apply: ${label}` }).click();
    await expect(row.getByTestId('requirement')).toHaveText('No approval');
  });

  test('an admin adds policy rules, with field errors, and deletes them after confirming', async ({ page }) => {
    await signIn(page, 'admin');
    await page.goto('/admin/policy');
    await expect(page.getByText('untrusted server', { exact: false })).toBeVisible();
    const server = `e2e-policy-${Date.now()}`;
    await page.getByLabel('Server', { exact: true }).fill(server);
    await page.getByLabel('Tool', { exact: true }).fill('refund*');
    await page.getByRole('button', { name: 'Save rule' }).click();
    await expect(page.getByText('must not contain *')).toBeVisible();
    // What was typed stays, to be corrected.
    await expect(page.getByLabel('Server', { exact: true })).toHaveValue(server);

    await page.getByLabel('Tool', { exact: true }).fill('refund_payment');
    await page.getByLabel('Approvals required').selectOption('2');
    await page.getByRole('button', { name: 'Save rule' }).click();
    await expect(page.getByText(`Saved: refund_payment on ${server} needs 2 approvals.`)).toBeVisible();
    const toolRule = page.getByTestId(`rule-${server}-refund_payment`);
    await expect(toolRule).toContainText('2 distinct reviewers');
    await expect(toolRule).toContainText('admin@countersign.local');

    await page.getByLabel('Server', { exact: true }).fill(server);
    await page.getByLabel('Approvals required').selectOption('0');
    await page.getByRole('button', { name: 'Save rule' }).click();
    const serverRule = page.getByTestId(`rule-${server}-*`);
    await expect(serverRule).toContainText('every tool');
    await expect(serverRule).toContainText('None');
    await page.getByLabel('Server', { exact: true }).fill(server);
    await page.getByLabel('Approvals required').selectOption('blocked');
    await page.getByRole('button', { name: 'Save rule' }).click();
    await expect(page.getByText(`Saved: every tool of ${server} is blocked: not exposed, never called.`)).toBeVisible();
    await expect(serverRule).toContainText('Blocked: not exposed');

    // Dismissing the confirmation deletes nothing.
    page.once('dialog', (d) => d.dismiss());
    await toolRule.getByRole('button', { name: 'Delete' }).click();
    await page.reload();
    await expect(toolRule).toBeVisible();

    page.once('dialog', (d) => d.accept());
    await toolRule.getByRole('button', { name: 'Delete' }).click();
    await expect(toolRule).toHaveCount(0);
    page.once('dialog', (d) => d.accept());
    await serverRule.getByRole('button', { name: 'Delete' }).click();
    await expect(serverRule).toHaveCount(0);
  });
});
