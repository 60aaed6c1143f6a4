// The console on a real primary and streaming replica (testing/replica.ts), as two instances
// behind no balancer: the browser carries its cookies to both (cookies ignore the port). Pausing
// replay makes the replica stale, which shows where each page read from.
import { randomBytes } from 'node:crypto';
import { expect, test, type Page } from '@playwright/test';
import { createApiKey, createUser, runCli, startConsole, type ConsoleProcess } from '../scripts/lib/console-process';
import { startReplicatedPair, type ReplicatedPair } from '../testing/replica';
import { argsDigest } from '../lib/mcp/digest';

const ROOT = process.cwd();
const PASSWORD = 'replica correct horse';
const people = {
  reviewer: `replica-reviewer-${Date.now().toString(36)}@example.test`,
  admin: `replica-admin-${Date.now().toString(36)}@example.test`,
};
let pair: ReplicatedPair;
let a: ConsoleProcess;
let b: ConsoleProcess;
let key = '';

test.beforeAll(async () => {
  test.setTimeout(120_000);
  pair = await startReplicatedPair();
  key = createApiKey(ROOT, pair.primaryUrl, ['approvals:request', 'outcomes:write', 'outcomes:read'], 'replica');
  createUser(ROOT, pair.primaryUrl, { email: people.reviewer, role: 'reviewer', password: PASSWORD });
  createUser(ROOT, pair.primaryUrl, { email: people.admin, role: 'admin', password: PASSWORD });
  runCli(ROOT, pair.primaryUrl, ['servers:trust', '--name', 'orders-mcp']);
  const env = {
    DATABASE_URL: pair.primaryUrl,
    DATABASE_REPLICA_URL: pair.replicaUrl,
    DATABASE_REPLICA_MAX_LAG_MS: '30000', // replay is paused for a while in these cases: the bound is met elsewhere
    AUTH_SECRET: randomBytes(24).toString('base64url'),
    RATE_LIMIT_USER_PER_SECOND: '10000',
    RATE_LIMIT_USER_BURST: '100000',
  };
  [a, b] = await Promise.all([startConsole(ROOT, env), startConsole(ROOT, env)]);
});

test.afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await pair?.close();
});

test.afterEach(async ({}, info) => {
  if (info.status !== info.expectedStatus) console.log(`[replica] console A:\n${a?.output().slice(-4_000)}`);
});

async function signIn(page: Page, email: string, origin: string) {
  await page.goto(`${origin}/sign-in`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByTestId('viewer-email')).toHaveText(email);
}

async function stage(page: Page): Promise<{ id: string; summary: string }> {
  const n = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const summary = `Update shipping address on order ${n}`;
  const args = { order_id: n, address: { line1: 'Hafenstraße 40', postcode: '20359', city: 'Hamburg' } };
  const res = await page.request.post(`${a.origin}/api/v1/approvals`, {
    headers: { authorization: `Bearer ${key}`, 'idempotency-key': `replica-${n}` },
    data: {
      requestRef: `req_replica_${n}`,
      organization: 'acme',
      principal: 'user_193',
      server: 'orders-mcp',
      tool: { name: `update_${n}`, annotations: { readOnlyHint: false, destructiveHint: false } },
      arguments: args,
      argsDigest: argsDigest(args),
      summary,
      resource: { type: 'order', id: n },
    },
  });
  expect(res.status()).toBe(201);
  return { id: (await res.json()).id, summary };
}

test('a decision on one instance: the decider sees it at once on the other, someone else once the replica has it', async ({
  page,
  browser,
}) => {
  test.setTimeout(60_000);
  await signIn(page, people.reviewer, a.origin);
  const other = await (await browser.newContext()).newPage();
  await signIn(other, people.admin, b.origin);
  const staged = await stage(page);
  await pair.caughtUp();
  await pair.pauseReplay();
  try {
    await page.goto(`${a.origin}/approvals/${staged.id}`);
    await page.getByLabel(/Reason/).fill('Checked with the customer.');
    await page.getByRole('button', { name: 'Approve' }).click();
    await expect(page.getByTestId('approval-status')).toHaveText('Approved');
    expect((await page.context().cookies()).map((c) => c.name)).toContain('countersign-wrote');

    // The list on the other instance: fresh for the decider (their cookie), stale for the admin.
    const listed = (p: Page) => p.getByTestId('queue-row').filter({ hasText: staged.summary });
    await page.goto(`${b.origin}/approvals`);
    await expect(listed(page)).toHaveCount(0);
    await other.goto(`${b.origin}/approvals`);
    await expect(listed(other)).toHaveCount(1);
  } finally {
    await pair.resumeReplay();
  }
  await pair.caughtUp();
  await other.reload();
  await expect(other.getByTestId('queue-row').filter({ hasText: staged.summary })).toHaveCount(0);
  await other.goto(`${b.origin}/admin/audit`);
  await expect(other.getByTestId('replica')).toContainText(/Read replica: in use, \d+ ms behind/);
});

test('the replica stopped: the pages keep answering from the primary, and the admin page says so', async ({ page }) => {
  test.setTimeout(60_000);
  await signIn(page, people.admin, b.origin);
  const requestRef = `req_replica_down_${Date.now().toString(36)}`;
  const ingest = await page.request.post(`${a.origin}/api/v1/outcomes`, {
    headers: { authorization: `Bearer ${key}` },
    data: {
      records: [
        {
          eventId: `evt_${requestRef}`,
          occurredAt: new Date().toISOString(),
          requestRef,
          organization: 'acme',
          principal: 'user_193',
          server: 'orders-mcp',
          tool: { name: 'get_order' },
          observed: { sent: true, httpStatus: 200, result: { isError: false } },
        },
      ],
    },
  });
  expect(ingest.status(), await ingest.text()).toBeLessThan(300);
  pair.replica.stop('immediate');
  try {
    for (const path of ['/', `/outcomes?requestRef=${requestRef}`, '/admin/tools', `/incidents/${requestRef}`]) {
      const res = await page.goto(`${b.origin}${path}`);
      expect(res?.status(), path).toBe(200);
    }
    await page.goto(`${b.origin}/outcomes?requestRef=${requestRef}`);
    await expect(page.getByText(requestRef).first()).toBeVisible();
    await page.goto(`${b.origin}/admin/audit`);
    await expect(page.getByTestId('replica')).toContainText('Read replica: not in use');
  } finally {
    pair.replica.start();
  }
});
