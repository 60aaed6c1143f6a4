// A reviewer's day: the queue's tabs, the badge after a decision, deciding from the keyboard, a
// lost race that keeps the reason, and the pages at desktop and phone width.
import { expect, test, type Page } from '@playwright/test';
import { signIn, users } from '../testing/e2e';
import {
  bearer,
  DIGEST,
  outcomesKey,
  decide,
  pending,
  setUpApprovalsApi,
  tokens,
  uniq,
} from '../testing/approvals-api';

setUpApprovalsApi();

const SHOTS = 'test-results/screens';
const badge = (page: Page) => page.getByRole('navigation', { name: 'Main' }).getByTestId('pending-count');
const badgeCount = async (page: Page) => ((await badge(page).count()) ? Number(await badge(page).textContent()) : 0);
const row = (page: Page, summary: string) => page.getByTestId('queue-row').filter({ hasText: summary });

/** Stages a one-approval request with a summary of its own. */
async function staged(request: Parameters<typeof pending>[0], over: Record<string, unknown> = {}) {
  const summary = (over.summary as string | undefined) ?? `Queue check ${uniq('s')}`;
  const created = await pending(request, { summary, ...over });
  return { ...created, summary };
}

test.describe('the approval queue', () => {
  test('tabs: mine to decide, waiting on others (own principal, already approved), all', async ({ page, request }) => {
    const other = await staged(request);
    const own = await staged(request, { principal: users.reviewer.principalId });
    const two = await staged(request, {
      tool: {
        name: 'refund_payment',
        annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
      },
    });
    // The reviewer already approved the two-approval request (through the API).
    expect(
      (await decide(request, two.id, tokens.reviewer, { decision: 'approve', reason: 'ok', version: 1 })).status(),
    ).toBe(200);

    await signIn(page, 'reviewer');
    await page.goto('/approvals');
    await expect(page.getByRole('link', { name: 'Needs my decision' })).toHaveAttribute('aria-current', 'page');
    await expect(row(page, other.summary)).toBeVisible();
    await expect(row(page, own.summary)).toHaveCount(0);
    await expect(row(page, two.summary)).toHaveCount(0);

    await page.getByRole('link', { name: 'Waiting on others' }).click();
    await expect(row(page, own.summary)).toBeVisible();
    await expect(row(page, two.summary)).toBeVisible();
    await expect(row(page, two.summary).getByTestId('queue-approvals')).toContainText('1 of 2');
    await expect(row(page, other.summary)).toHaveCount(0);

    await page.getByRole('link', { name: 'All pending' }).click();
    for (const s of [other, own, two]) await expect(row(page, s.summary)).toBeVisible();

    // The API's count is the first tab's, for the same person.
    const count = await (
      await request.get('/api/v1/approvals/pending-count', { headers: bearer(tokens.reviewer) })
    ).json();
    const mine = await (
      await request.get('/api/v1/approvals?status=pending&queue=needs_my_decision&limit=200', {
        headers: bearer(tokens.reviewer),
      })
    ).json();
    expect(count.pending).toBe(mine.items.length);
    expect(mine.items.map((a: { id: string }) => a.id)).toContain(other.id);
    expect(mine.items.map((a: { id: string }) => a.id)).not.toContain(own.id);
  });

  test('the badge drops at once after a decision, long before its 10 s poll', async ({ page, request }) => {
    const s = await staged(request);
    await signIn(page, 'reviewer');
    await page.goto(`/approvals/${s.id}`);
    await expect(badge(page)).toBeVisible();
    const before = await badgeCount(page);
    expect(before).toBeGreaterThan(0);
    await page.getByLabel(/Reason/).fill('Address confirmed with the customer.');
    await page.getByRole('button', { name: 'Approve' }).click();
    await expect(page.getByTestId('decision-done')).toContainText('You approved this request');
    await expect(page.getByTestId('decision-done')).toContainText('It is approved');
    await expect(badge(page)).toHaveText(String(before - 1), { timeout: 2_000 });
  });

  test('support staff see every pending request, no tabs and no badge', async ({ page, request }) => {
    const s = await staged(request);
    await signIn(page, 'support');
    await page.goto('/approvals');
    await expect(row(page, s.summary)).toBeVisible();
    await expect(page.getByRole('navigation', { name: 'Queues' })).toHaveCount(0);
    await expect(badge(page)).toHaveCount(0);
    const count = await (
      await request.get('/api/v1/approvals/pending-count', { headers: bearer(tokens.support) })
    ).json();
    expect(count).toEqual({ pending: 0 });
  });

  test('keyboard: j/k to the request, a to approve with the reason focused, Enter to submit', async ({
    page,
    request,
  }) => {
    const s = await staged(request);
    await signIn(page, 'reviewer');
    await page.goto('/approvals');
    await expect(row(page, s.summary)).toBeVisible();
    const rows = page.getByTestId('queue-row');
    const summaries = await rows.allTextContents();
    const index = summaries.findIndex((t) => t.includes(s.summary));
    for (let i = 0; i <= index; i++) await page.keyboard.press('j');
    if (index > 0) {
      await page.keyboard.press('k');
      await expect(rows.nth(index - 1)).toHaveAttribute('data-selected', 'true');
      await page.keyboard.press('j');
    }
    await expect(rows.nth(index)).toHaveAttribute('data-selected', 'true');
    await page.keyboard.press('a');
    await expect(page).toHaveURL(new RegExp(`/approvals/${s.id}\\?decide=approve$`));
    const reason = page.getByLabel(/Reason to approve/);
    await expect(reason).toBeFocused();
    // Typing "a" and "d" in the field is text, not a shortcut.
    await page.keyboard.type('Verified address and order date.');
    await expect(reason).toHaveValue('Verified address and order date.');
    await page.keyboard.press('Enter');
    await expect(page.getByTestId('decision-done')).toContainText('You approved this request');
    const now = await (await request.get(`/api/v1/approvals/${s.id}`, { headers: bearer(tokens.admin) })).json();
    expect(now.status).toBe('approved');
    expect(now.decisions).toEqual([
      expect.objectContaining({
        reviewer: users.reviewer.email,
        decision: 'approve',
        reason: 'Verified address and order date.',
      }),
    ]);
  });

  test('a lost race keeps the typed reason and says in plain words what happened', async ({ page, request }) => {
    const s = await staged(request);
    await signIn(page, 'reviewer');
    await page.goto(`/approvals/${s.id}`);
    await page.getByLabel(/Reason/).fill('I checked the order history.');
    expect(
      (
        await decide(request, s.id, tokens.reviewer2, { decision: 'deny', reason: 'Wrong order.', version: 1 })
      ).status(),
    ).toBe(200);
    await page.getByRole('button', { name: 'Approve' }).click();
    const error = page.getByTestId('decision-error');
    await expect(error).toContainText('Someone else decided this request while you were reading it');
    await expect(error).toContainText(`${users.reviewer2.email} denied it`);
    await expect(error).not.toContainText(/version/i);
    await expect(error).not.toContainText(/\d{4}-\d\d-\d\dT/);
    await expect(page.getByLabel(/Reason/)).toHaveValue('I checked the order history.');
  });
});

test.describe('at 1440 and 390 px', () => {
  for (const width of [1440, 390]) {
    test(`queue, request and incidents start page at ${width} px`, async ({ page, request }) => {
      const s = await staged(request, {
        summary: `Change the delivery address of order 4490 to the pick-up point ${uniq('w')}`,
        tool: {
          name: 'update_shipping_address_with_a_long_name',
          annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
        },
      });
      // Signed in at the default size (signIn checks the sidebar's e-mail), then the width under test.
      await signIn(page, 'reviewer2');
      await page.setViewportSize({ width, height: width > 500 ? 900 : 844 });
      await page.goto('/approvals');
      const r = row(page, s.summary);
      await expect(r).toBeVisible();
      for (const id of ['risk', 'queue-approvals', 'queue-expires']) {
        const box = (await r.getByTestId(id).boundingBox())!;
        expect(box.x + box.width, `${id} inside the window`).toBeLessThanOrEqual(width);
      }
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      await page.screenshot({ path: `${SHOTS}/queue-${width}.png`, fullPage: true });

      await page.goto(`/approvals/${s.id}`);
      await expect(page.getByTestId('approval-count')).toHaveText('0 of 2 approvals');
      const approve = (await page.getByRole('button', { name: 'Approve' }).boundingBox())!;
      expect(approve.y + approve.height, 'Approve without scrolling').toBeLessThanOrEqual(width > 500 ? 900 : 844);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      await page.screenshot({ path: `${SHOTS}/request-${width}.png`, fullPage: true });

      await page.goto('/incidents');
      await expect(page.getByTestId('recent-incidents')).toBeVisible();
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      await page.screenshot({ path: `${SHOTS}/incidents-${width}.png`, fullPage: true });
    });
  }
});

test.describe('incidents search', () => {
  test('a key shared by several incidents lists each; a partial reference too; exactly one opens it', async ({
    page,
    request,
  }) => {
    const key = uniq('shared-key');
    const refs = ['a', 'b', 'c'].map((x) => `req_${key}_${x}`);
    const records = refs.map((requestRef, i) => ({
      eventId: `${key}-${i}`,
      occurredAt: new Date(Date.now() - i * 1000).toISOString(),
      requestRef,
      idempotencyKey: key,
      organization: 'acme',
      principal: 'user_193',
      server: 'billing-mcp',
      tool: { name: 'refund_payment' },
      argsDigest: DIGEST,
      summary: 'Refund 10.00 EUR',
      observed: { sent: true, clientError: 'timeout' },
    }));
    const res = await request.post('/api/v1/outcomes', { headers: bearer(outcomesKey), data: { records } });
    expect(res.status()).toBe(200);

    await signIn(page, 'support');
    const search = page.getByRole('searchbox', { name: /Find an incident/ }).first();
    await search.fill(key);
    await search.press('Enter');
    await expect(page.getByTestId('incident-matches-count')).toHaveText(`3 incidents match “${key}”`);
    for (const r of refs)
      await expect(page.getByTestId('incident-matches').getByRole('link', { name: r })).toBeVisible();

    // Part of a reference: the same three.
    await page.goto(`/incidents?q=${encodeURIComponent(key.slice(0, -1).toUpperCase())}`);
    await expect(page.getByTestId('incident-item')).toHaveCount(3);
    await expect(page.getByTestId('incident-item').first()).toContainText('matched by part of a request reference');

    // Exactly one: straight to it.
    await page.goto(`/incidents?q=${encodeURIComponent(`${key}-1`)}`);
    await expect(page).toHaveURL(new RegExp(`/incidents/${refs[1]}$`));
  });

  test('the overview’s findings link to the flagged incidents, with the same count', async ({ page }) => {
    await signIn(page, 'support');
    await page.goto('/');
    const incidents = await page.getByTestId('findings-link').locator('span.font-semibold').last().textContent();
    await page.getByTestId('findings-link').click();
    await expect(page).toHaveURL(/\/incidents#flagged$/);
    await expect(page.getByTestId('flagged-count')).toHaveText(`(${incidents})`);
  });
});
