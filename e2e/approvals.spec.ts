import { expect, test, type APIRequestContext } from '@playwright/test';
import { cli, secretFrom, signIn, users } from '../testing/e2e';
import { argsDigest } from '../lib/mcp/digest';

let agentKey = '';
let reviewer2Token = '';

test.beforeAll(() => {
  agentKey = secretFrom(
    cli('apikeys:create', '--name', `e2e-agent-${Date.now()}`, '--scopes', 'approvals:request,grants:redeem'),
    'cs_live_',
  );
  reviewer2Token = secretFrom(
    cli('tokens:create', '--email', users.reviewer2.email, '--name', 'e2e-approvals'),
    'cs_pat_',
  );
});

/** Stages a one-approval write (a trusted, non-destructive tool) through the real API. */
async function stage(request: APIRequestContext, over: { principal?: string; summary?: string } = {}) {
  // Letters and digits: a long run of digits could pass the Luhn check and be masked as a card number.
  const n = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
  const args = { order_id: n, address: { line1: 'Kastanienallee 12', postcode: '10435', city: 'Berlin' } };
  const body = {
    requestRef: `req_e2e_${n}`,
    organization: 'acme',
    principal: over.principal ?? 'user_193',
    agent: 'support-bot',
    server: 'orders-mcp',
    tool: {
      name: `e2e_update_${n}`,
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
    },
    arguments: args,
    argsDigest: argsDigest(args),
    summary: over.summary ?? `Update shipping address on order ${n}`,
    resource: { type: 'order', id: n },
  };
  const res = await request.post('/api/v1/approvals', {
    headers: { authorization: `Bearer ${agentKey}`, 'idempotency-key': `e2e-${n}` },
    data: body,
  });
  expect(res.status()).toBe(201);
  const created = await res.json();
  expect(created.requiredApprovals).toBe(1);
  return { ...created, body };
}

const redeem = (
  request: APIRequestContext,
  grantId: string,
  body: { server: string; tool: { name: string }; argsDigest: string },
) =>
  request.post(`/api/v1/grants/${grantId}/redeem`, {
    headers: { authorization: `Bearer ${agentKey}` },
    data: { server: body.server, tool: body.tool.name, argsDigest: body.argsDigest },
  });

const approval = async (request: APIRequestContext, id: string) =>
  (await request.get(`/api/v1/approvals/${id}`, { headers: { authorization: `Bearer ${agentKey}` } })).json();

test.describe('approvals', () => {
  test('a reviewer approves from the queue and the redemption succeeds, once', async ({ page, request }) => {
    const staged = await stage(request);
    await signIn(page, 'reviewer');
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: /Approvals/ })
      .click();
    const row = page.getByTestId('queue-row').filter({ hasText: staged.body.summary });
    await expect(row).toBeVisible();
    await expect(row.getByTestId('risk')).toContainText('medium risk');
    await row.getByRole('link', { name: staged.body.summary }).click();
    await expect(page.getByTestId('approval-status')).toHaveText('Pending');
    await page.getByLabel(/Reason/).fill('Customer confirmed the new address by phone.');
    await page.getByRole('button', { name: 'Approve' }).click();
    // The page refreshes to the new state: approved, with the decision and its reason.
    await expect(page.getByTestId('approval-status')).toHaveText('Approved');
    await expect(page.getByTestId('decisions')).toContainText('Customer confirmed the new address by phone.');

    const after = await approval(request, staged.id);
    expect(after.status).toBe('approved');
    expect(after.decisions).toEqual([
      expect.objectContaining({
        reviewer: users.reviewer.email,
        decision: 'approve',
        reason: 'Customer confirmed the new address by phone.',
      }),
    ]);
    expect((await redeem(request, after.grant.id, staged.body)).status()).toBe(200);
    expect((await redeem(request, after.grant.id, staged.body)).status()).toBe(409);
  });

  test('an admin revokes a live grant and the redemption gets 410', async ({ page, request }) => {
    const staged = await stage(request);
    const decided = await request.post(`/api/v1/approvals/${staged.id}/decisions`, {
      headers: { authorization: `Bearer ${reviewer2Token}` },
      data: { decision: 'approve', reason: 'fine', version: staged.version },
    });
    expect(decided.status()).toBe(200);
    const grantId = (await approval(request, staged.id)).grant.id;

    await signIn(page, 'admin');
    await page.goto('/admin/authorizations');
    const row = page.getByTestId('authorization-row').filter({ hasText: staged.body.summary });
    await row.getByLabel('Reason for revoking').fill('Agent misbehaving: pulling all its grants.');
    page.once('dialog', (d) => d.accept());
    await row.getByRole('button', { name: 'Revoke' }).click();
    // No longer live: the list refreshes without it; the history has it as revoked.
    await expect(row).toHaveCount(0);
    await page.goto('/admin/authorizations?view=history&status=revoked');
    await expect(page.getByTestId('authorization-row').filter({ hasText: staged.body.summary })).toContainText(
      'Revoked',
    );

    const res = await redeem(request, grantId, staged.body);
    expect(res.status()).toBe(410);
    expect((await res.json()).code).toBe('gone');
  });

  test('a reviewer can never approve a request made on their own behalf', async ({ page, request }) => {
    const staged = await stage(request, { principal: users.reviewer.principalId });
    await signIn(page, 'reviewer');
    await page.goto(`/approvals/${staged.id}`);
    await expect(page.getByTestId('own-request')).toBeVisible();
    await expect(page.getByRole('button', { name: 'Approve' })).toHaveCount(0);
  });

  test('a stale view gets a conflict naming who decided, never a silent overwrite', async ({ page, request }) => {
    const staged = await stage(request);
    await signIn(page, 'reviewer');
    await page.goto(`/approvals/${staged.id}`);
    await page.getByLabel(/Reason/).fill('Looks right to me.');
    // Someone else decides while this page is open.
    const other = await request.post(`/api/v1/approvals/${staged.id}/decisions`, {
      headers: { authorization: `Bearer ${reviewer2Token}` },
      data: { decision: 'deny', reason: 'Wrong order number.', version: staged.version },
    });
    expect(other.status()).toBe(200);
    await page.getByRole('button', { name: 'Approve' }).click();
    await expect(page.getByTestId('decision-error')).toContainText(users.reviewer2.email);
    expect((await approval(request, staged.id)).status).toBe('denied');
  });

  test('the queue is live: a new request appears without a reload', async ({ page, request }) => {
    await signIn(page, 'reviewer');
    await page.goto('/approvals');
    // Base 36: a run of 13 digits could pass the Luhn check and be masked as a card number.
    const staged = await stage(request, { summary: `Live queue check ${Date.now().toString(36)}` });
    await expect(page.getByTestId('queue-row').filter({ hasText: staged.body.summary })).toBeVisible({
      timeout: 15_000,
    });
    await expect(page.getByTestId('pending-count')).not.toHaveText('0');
  });

  test('support sees a request but cannot decide or revoke', async ({ page, request }) => {
    const staged = await stage(request);
    await signIn(page, 'support');
    await page.goto(`/approvals/${staged.id}`);
    await expect(page.getByText('Your role reviews but does not decide.')).toBeVisible();
    const res = await page.goto('/admin/authorizations');
    expect(res?.status()).toBe(403);
  });
});
