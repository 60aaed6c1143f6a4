import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test } from '@playwright/test';
import { Webhook } from 'standardwebhooks';
import { cli, secretFrom, signIn } from '../testing/e2e';
import { argsDigest } from '../lib/mcp/digest';

// Admin → Webhooks in a real browser against the built console, its own worker delivering to a
// receiver in this process.
let server: Server;
let url = '';
const hits: { body: string; headers: IncomingHttpHeaders }[] = [];

test.beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      hits.push({ body, headers: req.headers });
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/e2e-hook`;
});
test.afterAll(() => new Promise<void>((r) => server.close(() => r())));

test('others are denied the page', async ({ page }) => {
  await signIn(page, 'reviewer');
  expect((await page.goto('/admin/webhooks'))?.status()).toBe(403);
});

test('an admin adds a signed endpoint, sees its secret once, and its deliveries', async ({ page, request }) => {
  await signIn(page, 'admin');
  await page.goto('/admin/webhooks');
  // A bad URL names the field.
  await page.getByLabel('URL').fill('http://169.254.169.254/latest/meta-data');
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  await expect(page.locator('#webhook-url-error')).toHaveText(
    'must not point at a link-local or cloud metadata address',
  );

  await page.getByLabel('URL').fill(url);
  await page.getByLabel('Format').selectOption('standard');
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  const secret = (await page.getByTestId('secret-value').textContent()) ?? '';
  expect(secret).toMatch(/^whsec_/);
  await page.reload();
  expect(await page.content()).not.toContain(secret.slice(6));

  const key = secretFrom(
    cli('apikeys:create', '--name', `e2e-wh-${Date.now()}`, '--scopes', 'approvals:request'),
    'cs_live_',
  );
  const n = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
  // The arguments never go out in a webhook; an e-mail address and a note to look for.
  const args = { customer: `buyer.${n}@example.com`, note: `Arguments-only note ${n}` };
  const created = await request.post('/api/v1/approvals', {
    headers: { authorization: `Bearer ${key}`, 'idempotency-key': `e2e-wh-${n}` },
    data: {
      requestRef: `req_wh_${n}`,
      organization: 'acme',
      principal: 'user_193',
      server: 'orders-mcp',
      tool: { name: `e2e_wh_${n}`, annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true } },
      arguments: args,
      argsDigest: argsDigest(args),
      summary: `Secret-free summary ${n}`,
    },
  });
  expect(created.status()).toBe(201);
  const { id } = await created.json();
  await expect.poll(() => hits.filter((h) => h.body.includes(id)).length, { timeout: 15_000 }).toBeGreaterThan(0);
  const hit = hits.find((h) => h.body.includes(id))!;
  const payload = new Webhook(secret).verify(hit.body, hit.headers as Record<string, string>) as { type: string };
  expect(payload.type).toBe('approval.requested');
  expect(hit.body).not.toContain('Secret-free summary');
  expect(hit.body).not.toContain('Arguments-only note');
  expect(hit.body).not.toContain(`buyer.${n}`);

  await page.reload();
  await expect(page.getByRole('cell', { name: /approval\.requested/ }).first()).toBeVisible();
  await expect(page.getByText('delivered', { exact: true }).first()).toBeVisible();
});
