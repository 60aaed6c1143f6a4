// What a reviewer sees: what will run (docs/design.md). A reviewer and an admin read the request's
// arguments as a tree beside the agent's words and the tool's description, and a preview in the
// queue; support staff read that only reviewers may, and no value reaches their page; a denied
// request says when its arguments were erased. The pages at 1440 and 390 px, axe on both.
import { expect, test, type Page } from '@playwright/test';
import { signIn } from '../testing/e2e';
import { bearer, decide, setUpApprovalsApi, tokens, uniq } from '../testing/approvals-api';
import { distinctiveArguments, stageWithArguments } from '../testing/approval-arguments-e2e';
import { expectAccessible, sidewaysOverflow } from '../testing/e2e-layout';

setUpApprovalsApi();

const SHOTS = 'test-results/screens';
const DESCRIPTION =
  'Refunds a payment on an order, in full or in part. The amount is in the currency of the order, in major units.';
const field = (page: Page, path: string) => page.locator(`[data-testid="argument"][data-path="${path}"]`);
const own = (page: Page, path: string) => field(page, path).locator(':scope > div').first();

async function staged(request: Parameters<typeof stageWithArguments>[0]) {
  const tag = uniq('arg');
  const args = distinctiveArguments(tag);
  const s = await stageWithArguments(request, args, {
    tool: {
      name: 'add_note',
      description: DESCRIPTION,
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    },
  });
  return { ...s, tag, args };
}

test.describe('the arguments of an approval request', () => {
  test('a reviewer reads them as a tree, beside the agent’s words and the tool’s description', async ({
    page,
    request,
  }) => {
    // Two axe runs and many checks: more than the default on a busy machine.
    test.setTimeout(90_000);
    const s = await staged(request);
    await signIn(page, 'reviewer');
    await page.goto(`/approvals/${s.id}`);
    const tree = page.getByTestId('argument-tree');
    await expect(tree).toBeVisible();

    // Each field with its value and JSON type; numbers exactly as their canonical JSON writes them.
    await expect(own(page, 'order_id')).toContainText(`ord_${s.tag}`);
    await expect(own(page, 'order_id').getByTestId('argument-type')).toHaveText('string');
    await expect(own(page, 'amount').getByTestId('argument-value')).toHaveText('12500');
    await expect(own(page, 'amount').getByTestId('argument-type')).toHaveText('number');
    await expect(own(page, 'exact').getByTestId('argument-value')).toHaveText('0.000001');
    await expect(own(page, 'huge').getByTestId('argument-value')).toHaveText('1e+21');
    await expect(own(page, 'refund_to_card').getByTestId('argument-type')).toHaveText('boolean');
    await expect(own(page, 'coupon').getByTestId('argument-value')).toHaveText('null');
    // Nested objects indented under their key; arrays with their length.
    await expect(own(page, 'customer').getByTestId('argument-type')).toHaveText('object · 2 fields');
    await expect(own(page, 'customer.address.city')).toContainText(`Lyon${s.tag}`);
    await expect(own(page, 'customer.address.lines').getByTestId('argument-type')).toHaveText('array · 2 items');
    await expect(own(page, 'customer.address.lines[1]')).toContainText('Bâtiment B');
    await expect(own(page, 'items[0].qty').getByTestId('argument-value')).toHaveText('2');
    const outer = (await own(page, 'customer').boundingBox())!;
    const inner = (await own(page, 'customer.address.city').boundingBox())!;
    expect(inner.x, 'nested fields are indented').toBeGreaterThan(outer.x + 10);

    // Masked values stand apart; a secret-named key is masked whole.
    await expect(own(page, 'api_token').locator('[data-masked]')).toHaveText('[masked:secret]');
    await expect(own(page, 'customer.email').locator('[data-masked]')).toHaveText('[masked:email]');

    // Long text is folded behind a real button, opened from the keyboard.
    const note = field(page, 'note');
    const expand = note.getByRole('button', { name: /Show all of note/ });
    await expect(expand).toHaveAttribute('aria-expanded', 'false');
    await expect(note).not.toContainText('Close the ticket');
    await expand.focus();
    await page.keyboard.press('Enter');
    const fold = note.getByRole('button', { name: 'Fold note' });
    await expect(fold).toHaveAttribute('aria-expanded', 'true');
    await expect(note).toContainText('Close the ticket once the refund shows on the statement.');
    await page.keyboard.press('Space');
    await expect(note.getByRole('button', { name: /Show all of note/ })).toHaveAttribute('aria-expanded', 'false');

    // Beside them, the agent's words, labelled as such, and the tool as its server declared it.
    await expect(page.getByRole('heading', { name: 'The agent’s own words' })).toBeVisible();
    await expect(page.getByTestId('agent-words')).toHaveText(s.summary);
    await expect(page.getByTestId('tool-description')).toContainText(DESCRIPTION);
    await expectAccessible(page, 'the request page with arguments');

    // The queue row previews the first three scalar fields.
    await page.goto('/approvals');
    const row = page.getByTestId('queue-row').filter({ hasText: s.summary });
    await expect(row.getByTestId('queue-arguments').getByRole('listitem')).toHaveText([
      `order_id: ord_${s.tag}`,
      'amount: 12500',
      'currency: EUR',
    ]);
    await expectAccessible(page, 'the queue with previews');
    // The keys still move to the row and open it.
    const rows = page.getByTestId('queue-row');
    const index = (await rows.allTextContents()).findIndex((t) => t.includes(s.summary));
    for (let i = 0; i <= index; i++) await page.keyboard.press('j');
    await expect(rows.nth(index)).toHaveAttribute('data-selected', 'true');
    await page.keyboard.press('Enter');
    await expect(page).toHaveURL(new RegExp(`/approvals/${s.id}$`));
  });

  test('keys that differ only by lookalikes are named in a warning and flagged where they are', async ({
    page,
    request,
  }) => {
    // "amount" in Latin letters, and with a Cyrillic "а" (U+0430): two fields a tool tells apart.
    const args = { amount: 12.5, '\u0430mount': 12500, currency: 'EUR', refund: { Reason: 'late', reason: 'damaged' } };
    const s = await stageWithArguments(request, args);
    await signIn(page, 'reviewer');
    await page.goto(`/approvals/${s.id}`);
    const warning = page.getByTestId('lookalike-keys');
    await expect(warning).toContainText('Some keys look alike but are different fields');
    await expect(warning.getByRole('listitem')).toHaveText([
      'amount and \u0430mount (with “\u0430” U+0430)',
      'Reason and reason in refund',
    ]);
    for (const path of ['amount', '\u0430mount', 'refund.Reason', 'refund.reason'])
      await expect(own(page, path).getByTestId('lookalike-flag')).toHaveText('⚠ looks like another key');
    await expect(own(page, 'currency').getByTestId('lookalike-flag')).toHaveCount(0);
    await expect(own(page, 'amount').getByTestId('argument-value')).toHaveText('12.5');
    await expect(own(page, '\u0430mount').getByTestId('argument-value')).toHaveText('12500');
  });

  test('support staff read that only reviewers see them, and no value is anywhere on the page', async ({
    page,
    request,
  }) => {
    const s = await staged(request);
    await signIn(page, 'support');
    await page.goto(`/approvals/${s.id}`);
    await expect(page.getByTestId('arguments-note')).toHaveText('Only reviewers and admins see the arguments.');
    await expect(page.getByTestId('argument-tree')).toHaveCount(0);
    await expect(page.getByTestId('agent-words')).toHaveText(s.summary);
    // The page as rendered, and as the server sent it (its React payload included).
    for (const html of [await page.content(), await (await page.request.get(`/approvals/${s.id}`)).text()])
      for (const value of [`ord_${s.tag}`, `Lyon${s.tag}`, `Zebra${s.tag}`]) expect(html).not.toContain(value);

    await page.goto('/approvals');
    const row = page.getByTestId('queue-row').filter({ hasText: s.summary });
    await expect(row).toBeVisible();
    await expect(row.getByTestId('queue-arguments')).toHaveCount(0);
    const queue = await page.content();
    for (const value of [`ord_${s.tag}`, `Lyon${s.tag}`]) expect(queue).not.toContain(value);
  });

  test('an admin sees them too', async ({ page, request }) => {
    const s = await staged(request);
    await signIn(page, 'admin');
    await page.goto(`/approvals/${s.id}`);
    await expect(own(page, 'order_id')).toContainText(`ord_${s.tag}`);
    await expect(page.getByTestId('arguments-note')).toHaveCount(0);
  });

  test('a denied request says when its arguments were erased, and keeps none', async ({ page, request }) => {
    const s = await staged(request);
    const denied = await decide(request, s.id, tokens.reviewer2, {
      decision: 'deny',
      reason: 'Not this order.',
      version: s.version,
    });
    expect(denied.status()).toBe(200);
    await signIn(page, 'reviewer');
    await page.goto(`/approvals/${s.id}`);
    await expect(page.getByTestId('arguments-note')).toHaveText(
      /^Arguments erased when denied at \d{1,2} \w{3,4} \d{4}, \d\d:\d\d:\d\d UTC; their digest stays\.$/,
    );
    await expect(page.getByTestId('argument-tree')).toHaveCount(0);
    expect(await page.content()).not.toContain(`ord_${s.tag}`);
    const api = await (await request.get(`/api/v1/approvals/${s.id}`, { headers: bearer(tokens.reviewer) })).json();
    expect(api).toMatchObject({ status: 'denied', arguments: null });
  });
});

test.describe('at 1440 and 390 px', () => {
  for (const width of [1440, 390]) {
    test(`the request page and the queue with arguments at ${width} px`, async ({ page, request }) => {
      test.setTimeout(90_000);
      const s = await staged(request);
      await signIn(page, 'reviewer2');
      await page.setViewportSize({ width, height: width > 500 ? 900 : 844 });
      await page.goto(`/approvals/${s.id}`);
      await expect(page.getByTestId('argument-tree')).toBeVisible();
      expect(await sidewaysOverflow(page), 'no sideways scroll on the request page').toBe(0);
      await page.screenshot({ path: `${SHOTS}/arguments-request-${width}.png`, fullPage: true });
      const card = page
        .locator('section')
        .filter({ has: page.getByTestId('arguments') })
        .first();
      await card.screenshot({ path: `${SHOTS}/arguments-card-${width}.png` });
      await expectAccessible(page, `the request page at ${width} px`);

      await page.goto('/approvals');
      const row = page.getByTestId('queue-row').filter({ hasText: s.summary });
      await expect(row.getByTestId('queue-arguments')).toBeVisible();
      for (const chip of await row.getByTestId('queue-arguments').getByRole('listitem').all()) {
        const box = (await chip.boundingBox())!;
        expect(box.x + box.width, 'a chip inside the window').toBeLessThanOrEqual(width);
      }
      expect(await sidewaysOverflow(page), 'no sideways scroll on the queue').toBe(0);
      await page.screenshot({ path: `${SHOTS}/arguments-queue-${width}.png`, fullPage: true });
      await row.screenshot({ path: `${SHOTS}/arguments-queue-row-${width}.png` });
      await expectAccessible(page, `the queue at ${width} px`);
    });
  }
});
