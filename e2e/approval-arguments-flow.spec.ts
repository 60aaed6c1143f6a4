// Approval arguments through the running console (docs/design.md "What a reviewer sees: what will
// run"): the fields an admin names on the Policy page lead a tool's queue rows; and a full flow
// (staged with distinctive arguments, read by a reviewer, approved, redeemed) leaves no argument
// value in the server's log (copied to a file by playwright.config.ts).
import { readFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { signIn } from '../testing/e2e';
import { harness } from '../testing/env';
import { argsDigest } from '../lib/mcp/digest';
import { bearer, redeem, setUpApprovalsApi, tokens, uniq } from '../testing/approvals-api';
import { distinctiveArguments, longNote, stageWithArguments } from '../testing/approval-arguments-e2e';

setUpApprovalsApi();

const tool = (name: string) => ({
  name,
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
});

test('the fields an admin names for a tool on the Policy page lead its queue rows', async ({ page, request }) => {
  const tag = uniq('show');
  const name = `refund_${tag}`;
  await signIn(page, 'admin');
  await page.goto('/admin/policy');
  await page.getByLabel('Server', { exact: true }).fill('billing-mcp');
  await page.getByLabel('Tool', { exact: true }).fill(name);
  await page.getByLabel('Approvals required').selectOption('1');
  const show = page.getByLabel('Fields shown in the queue');
  // Refused with the reason under the field, what was typed kept.
  await show.fill('amount,,currency');
  await page.getByRole('button', { name: 'Save rule' }).click();
  await expect(page.getByText('must not have an empty entry')).toBeVisible();
  await expect(show).toHaveValue('amount,,currency');
  await show.fill('customer.address.city, amount');
  await page.getByRole('button', { name: 'Save rule' }).click();
  await expect(
    page.getByText(
      `Saved: ${name} on billing-mcp needs 1 approval; its queue rows show customer.address.city, amount.`,
    ),
  ).toBeVisible();
  await expect(page.getByTestId(`rule-billing-mcp-${name}`)).toContainText('customer.address.city, amount');
  await page.screenshot({ path: 'test-results/screens/policy-show-fields-1280.png' });

  const s = await stageWithArguments(request, distinctiveArguments(tag), { tool: tool(name) });
  await page.goto('/approvals');
  const row = page.getByTestId('queue-row').filter({ hasText: s.summary });
  await expect(row.getByTestId('queue-arguments').getByRole('listitem')).toHaveText([
    `customer.address.city: Lyon${tag}`,
    'amount: 12500',
  ]);
});

test('a full flow leaves no argument value in the server log', async ({ page, request }) => {
  const tag = `LOGSCAN${Date.now().toString(36)}`;
  const args = {
    order_id: `ord_${tag}`,
    amount: '1234.56',
    recipient: { name: `Name${tag}`, iban_note: `Account note ${tag}x` },
    lines: [`first line ${tag}y`, `second line ${tag}z`],
    note: longNote(`Zebra${tag}`),
  };
  const values = [`ord_${tag}`, `Name${tag}`, `${tag}x`, `${tag}y`, `${tag}z`, `Zebra${tag}`];
  const s = await stageWithArguments(request, args, { tool: tool('add_note') });

  await signIn(page, 'reviewer');
  await page.goto(`/approvals/${s.id}`);
  await expect(page.locator('[data-testid="argument"][data-path="order_id"]')).toContainText(`ord_${tag}`);
  await page.getByLabel(/Reason/).fill('Checked the order and the amount.');
  await page.getByRole('button', { name: 'Approve' }).click();
  await expect(page.getByTestId('decision-done')).toContainText('It is approved');

  const approved = await (await request.get(`/api/v1/approvals/${s.id}`, { headers: bearer(tokens.admin) })).json();
  expect(approved.status).toBe('approved');
  const redeemed = await redeem(request, approved.grant.id, {
    server: 'billing-mcp',
    tool: 'add_note',
    argsDigest: argsDigest(args),
  });
  expect(redeemed.status(), await redeemed.text()).toBe(200);
  const after = await (await request.get(`/api/v1/approvals/${s.id}`, { headers: bearer(tokens.reviewer) })).json();
  expect(after).toMatchObject({ status: 'redeemed', arguments: null });
  expect(after.argumentsNote).toMatch(/^erased when its grant was redeemed at /);

  const file = harness.e2eServerLog();
  expect(file, 'playwright.config.ts sets E2E_SERVER_LOG').toBeTruthy();
  const log = readFileSync(file!, 'utf8');
  expect(log).toContain('[server-log]'); // the copy works: the server's own lines are there
  for (const value of values) expect(log, `the log holds ${value}`).not.toContain(value);
});
