// Every console page, for each role, at desktop (1280) and phone (390) width: the page never scrolls
// sideways, the controls people come for are on screen (not clipped by a scrolling box), and axe
// finds no serious or critical violation. The key items are listed by hand, page by page.
import AxeBuilder from '@axe-core/playwright';
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { expect, test, type Locator, type Page } from '@playwright/test';
import { cli, secretFrom, signIn } from '../../testing/e2e';

type Role = 'admin' | 'reviewer' | 'support';
type Width = 1280 | 390;
type Ids = { outcome: string; requestRef: string; approval: string };

type PageSpec = {
  name: string;
  path: (ids: Ids) => string;
  roles: readonly Role[];
  /** What must be shown, by role and width (hand-listed). */
  shown: (page: Page, width: Width) => Locator[];
};

const everyone = ['admin', 'reviewer', 'support'] as const;
const admin = ['admin'] as const;
const h1 = (page: Page, name: string | RegExp) => page.getByRole('heading', { level: 1, name });
/** A column: its heading on a desktop; below md (cards) its first cell, which carries the heading as its label. */
const col = (page: Page, name: string, width: Width = 1280) =>
  width === 390
    ? page.locator(`td[data-label="${name}"]`).first()
    : page.getByRole('columnheader', { name, exact: false }).first();
// The request page's own layout belongs to the reviewer-workflow change (issue #17, other half);
// today axe finds a serious contrast failure in its heading ("on", text-slate-400).

const pages: PageSpec[] = [
  {
    name: 'overview',
    path: () => '/',
    roles: everyone,
    shown: (page) => [h1(page, 'Overview'), page.getByTestId('tile-unknown').first()],
  },
  {
    name: 'outcomes',
    path: () => '/outcomes',
    roles: everyone,
    shown: (page, width) => {
      const row = page.getByTestId('outcome-row').first();
      return width === 390
        ? // Cards: tool, category, request reference and time of the first record.
          [
            row.getByRole('link').first(),
            row.locator('td[data-label="Outcome"]'),
            row.getByTestId('request-ref'),
            row.locator('td[data-label="Time"]'),
          ]
        : [
            col(page, 'Time'),
            col(page, 'Tool'),
            col(page, 'What happened'),
            col(page, 'Outcome'),
            // Next step is shown from 1440 px (and on the record page); Request must fit at 1280.
            col(page, 'Request reference'),
            row.getByTestId('request-ref'),
          ];
    },
  },
  {
    name: 'outcome record',
    path: (ids) => `/outcomes/${ids.outcome}`,
    roles: everyone,
    shown: (page) => [
      page.getByTestId('what-happened'),
      page.getByTestId('next-step'),
      page.getByTestId('incident-link'),
    ],
  },
  {
    name: 'incidents',
    path: () => '/incidents',
    roles: everyone,
    shown: (page) => [h1(page, 'Incidents'), page.getByRole('main').getByRole('searchbox').first()],
  },
  {
    name: 'incident',
    path: (ids) => `/incidents/${encodeURIComponent(ids.requestRef)}`,
    roles: everyone,
    shown: (page) => [page.getByTestId('incident-sentence'), page.getByTestId('download-markdown')],
  },
  {
    name: 'approvals queue',
    path: () => '/approvals',
    roles: everyone,
    // A list at every width (components/approvals/approval-queue.tsx): a row's tool, its expiry
    // and its "n of m" approvals must be in view.
    shown: (page) => [
      h1(page, 'Approvals'),
      page.getByTestId('queue-row').first().getByRole('link').first(),
      page.getByTestId('queue-expires').first(),
      page.getByTestId('queue-approvals').first(),
    ],
  },
  {
    name: 'approval request',
    path: (ids) => `/approvals/${ids.approval}`,
    roles: everyone,
    shown: (page) => [page.getByTestId('approval-summary'), page.getByTestId('approval-status')],
  },
  {
    name: 'tools',
    path: () => '/admin/tools',
    roles: everyone,
    shown: (page, width) => [
      h1(page, 'Tools'),
      col(page, 'Tool', width),
      col(page, 'Approvals required', width),
      col(page, 'Failures', width),
    ],
  },
  {
    name: 'authorizations',
    path: () => '/admin/authorizations',
    roles: admin,
    shown: (page) => {
      const row = page.getByTestId('authorization-row').first();
      return [h1(page, 'Authorizations'), row.getByRole('button', { name: 'Revoke' }), row.getByRole('link').first()];
    },
  },
  {
    name: 'users',
    path: () => '/admin/users',
    roles: admin,
    shown: (page, width) => {
      const row = page.locator('[data-testid^="user-row-"]').nth(1);
      return [
        h1(page, 'Users'),
        row.getByRole('combobox'),
        row.getByRole('button').first(),
        col(page, 'Email', width),
        col(page, 'Status', width),
      ];
    },
  },
  {
    name: 'API keys',
    path: () => '/admin/api-keys',
    roles: admin,
    shown: (page) => [
      h1(page, 'API keys'),
      page.getByRole('button', { name: 'Create API key' }),
      page.locator('[data-testid^="apikey-row-"]').first().getByRole('button', { name: 'Revoke' }),
    ],
  },
  {
    name: 'trusted servers',
    path: () => '/admin/servers',
    roles: admin,
    shown: (page) => [
      h1(page, 'Trusted servers'),
      page.locator('[data-testid^="server-row-"]').first().getByRole('button', { name: 'Stop trusting' }),
    ],
  },
  {
    name: 'policy',
    path: () => '/admin/policy',
    roles: admin,
    shown: (page) => [h1(page, 'Policy rules'), page.getByRole('button', { name: /add rule|save/i }).first()],
  },
  {
    name: 'webhooks',
    path: () => '/admin/webhooks',
    roles: admin,
    shown: (page) => [h1(page, 'Webhooks')],
  },
  {
    name: 'audit log',
    path: () => '/admin/audit',
    roles: admin,
    shown: (page, width) => [
      h1(page, 'Audit log'),
      page.getByTestId('audit-row').first(),
      col(page, 'Action', width),
      col(page, 'Hash', width),
    ],
  },
  {
    name: 'access log',
    path: () => '/admin/access-log',
    roles: admin,
    shown: (page) => [h1(page, 'Incident access log')],
  },
  {
    name: 'API reference',
    path: () => '/api-docs',
    roles: everyone,
    shown: (page) => [h1(page, 'API reference')],
  },
  {
    name: 'account',
    path: () => '/account',
    roles: everyone,
    shown: (page) => [h1(page, 'Account'), page.getByRole('heading', { name: 'Personal tokens' })],
  },
];

/** How far the page scrolls sideways (0 when it fits). */
const sidewaysOverflow = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

/**
 * Visible, inside the viewport's width, and not cut off by any box around it that clips
 * (a table scrolling inside its card counts as cut off: people do not find what is off to the side).
 */
async function expectOnScreen(item: Locator, what: string) {
  await expect(item, what).toBeVisible();
  // Sideways only, as the page opened: no scrolling here (scrolling into view would also scroll a
  // table's box sideways and hide the very clipping this looks for).
  const clip = await item.evaluate((el) => {
    const r = el.getBoundingClientRect();
    const vw = document.documentElement.clientWidth;
    if (r.left < -0.5 || r.right > vw + 0.5)
      return `outside the viewport: ${Math.round(r.left)}–${Math.round(r.right)} of ${vw}`;
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      const style = getComputedStyle(a);
      if (style.overflowX === 'visible') continue;
      if (a.scrollLeft !== 0) return `<${a.tagName.toLowerCase()}> was scrolled sideways by ${a.scrollLeft} px`;
      const b = a.getBoundingClientRect();
      if (r.left < b.left - 0.5 || r.right > b.right + 0.5)
        return `clipped by <${a.tagName.toLowerCase()} class="${a.className}">: ${Math.round(r.left)}–${Math.round(r.right)} in ${Math.round(b.left)}–${Math.round(b.right)}`;
    }
    return null;
  });
  expect(clip, what).toBeNull();
}

async function expectAccessible(page: Page, what: string) {
  const results = await new AxeBuilder({ page }).analyze();
  const serious = results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help} — ${v.nodes
          .map((n) => n.target.join(' '))
          .slice(0, 3)
          .join(' | ')}`,
    );
  expect(serious, what).toEqual([]);
}

const ids: Ids = { outcome: '', requestRef: '', approval: '' };
const stateFile = (role: Role) => path.join(os.tmpdir(), `countersign-layout-${process.pid}-${role}.json`);

test.describe('layout and accessibility of every console page', () => {
  test.beforeAll(async ({ browser, playwright, baseURL }) => {
    const fresh = { storageState: { cookies: [], origins: [] } };
    // Signed in once per role (a password check per test would be most of the run).
    for (const role of everyone) {
      const context = await browser.newContext(fresh);
      await signIn(await context.newPage(), role);
      await context.storageState({ path: stateFile(role) });
      await context.close();
    }
    const request = await playwright.request.newContext({ baseURL, ...fresh });
    // One pending request of our own, so the request page has something to show whatever the seed holds.
    const key = secretFrom(
      cli('apikeys:create', '--name', `e2e-layout-${Date.now()}`, '--scopes', 'approvals:request'),
      'cs_live_',
    );
    const n = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
    const res = await request.post('/api/v1/approvals', {
      headers: { authorization: `Bearer ${key}`, 'idempotency-key': `e2e-layout-${n}` },
      data: {
        requestRef: `req_layout_${n}`,
        organization: 'acme',
        principal: 'user_layout',
        agent: 'support-bot',
        server: 'orders-mcp',
        tool: { name: `layout_update_${n}`, annotations: { readOnlyHint: false, destructiveHint: false } },
        argsDigest: 'sha256:' + createHash('sha256').update(n).digest('hex'),
        summary: `Update the shipping address on order ${n} to the new one the customer sent`,
        resource: { type: 'order', id: n },
      },
    });
    expect(res.status()).toBe(201);
    ids.approval = (await res.json()).id;
    await request.dispose();

    const page = await (await browser.newContext({ storageState: stateFile('support') })).newPage();
    await page.goto('/outcomes');
    const first = page.getByTestId('outcome-row').first();
    ids.outcome = ((await first.getByRole('link').first().getAttribute('href')) ?? '').split('/').pop() ?? '';
    ids.requestRef = (await first.getByTestId('request-ref').textContent()) ?? '';
    expect(ids.outcome).toMatch(/^[0-9a-f-]{36}$/);
    expect(ids.requestRef).not.toBe('');
    await page.close();
  });

  for (const role of everyone) {
    test.describe(role, () => {
      test.use({ storageState: stateFile(role) });
      for (const width of [1280, 390] as const) {
        for (const spec of pages.filter((p) => p.roles.includes(role))) {
          test(`${spec.name} as ${role} at ${width} px`, async ({ page }) => {
            await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
            const res = await page.goto(spec.path(ids));
            expect(res?.status(), spec.name).toBe(200);
            await expect(page.getByTestId('findings-loading')).toHaveCount(0);
            expect(await sidewaysOverflow(page), `${spec.name} scrolls sideways`).toBe(0);
            const items = spec.shown(page, width);
            for (const [i, item] of items.entries()) await expectOnScreen(item, `${spec.name}: item ${i + 1}`);
            await expect(page.getByTestId('viewer-role')).toHaveCount(1);
            await expectAccessible(page, `${spec.name} as ${role} at ${width} px`);
          });
        }
      }
    });
  }
});

test.describe('shell', () => {
  test('at 390 px a Menu button opens the whole navigation; no row of items runs off the screen', async ({ page }) => {
    await page.setViewportSize({ width: 390, height: 844 });
    await signIn(page, 'admin');
    const nav = page.getByRole('navigation', { name: 'Main' });
    await expect(nav).toBeHidden();
    const menu = page.getByTestId('menu-button');
    await expect(menu).toHaveAccessibleName(/^Menu/);
    await expect(menu).toHaveAttribute('aria-expanded', 'false');
    await menu.click();
    await expect(menu).toHaveAttribute('aria-expanded', 'true');
    await expect(menu).toHaveAccessibleName('Close');
    // Every item of an admin's navigation, on screen and stacked (hand-listed).
    const expected = [
      'Overview',
      'Outcomes',
      'Approvals',
      'Incidents',
      'Tools',
      'Authorizations',
      'Users',
      'API keys',
      'Servers',
      'Policy',
      'Webhooks',
      'Audit log',
      'Access log',
      'API reference',
      'Account',
    ];
    for (const label of expected) await expectOnScreen(nav.getByRole('link', { name: label }), label);
    await expect(page.getByRole('button', { name: 'Sign out' })).toBeVisible();
    await nav.getByRole('link', { name: 'Users' }).click();
    await expect(h1(page, 'Users')).toBeVisible();
    await expect(nav).toBeHidden();
    expect(await sidewaysOverflow(page)).toBe(0);
  });

  test('at 1280 px the sidebar shows the navigation and runs the full height of a long page', async ({ page }) => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await signIn(page, 'admin');
    await page.goto('/outcomes');
    await expect(page.getByTestId('outcome-row').first()).toBeVisible();
    await expect(page.getByTestId('menu-button')).toBeHidden();
    await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Outcomes' })).toBeVisible();
    const { aside, doc } = await page.evaluate(() => ({
      aside: document.querySelector('aside')!.getBoundingClientRect().height,
      doc: document.documentElement.scrollHeight,
    }));
    expect(doc).toBeGreaterThan(1200); // a long page, or the check proves nothing
    expect(aside).toBe(doc);
    // Scrolled to the bottom, the navigation is still in view.
    await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
    await expect(
      page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Outcomes' }),
    ).toBeInViewport();
  });

  test('content uses a wide screen: at 1920 px the main column is wider than 1280 px', async ({ page }) => {
    await page.setViewportSize({ width: 1920, height: 1000 });
    await signIn(page, 'support');
    await page.goto('/outcomes');
    const width = await page.locator('main').evaluate((m) => m.getBoundingClientRect().width);
    expect(width).toBeGreaterThan(1280);
  });

  test('focus is visible: a focused link in the sidebar and in a table has an outline that is not clipped', async ({
    page,
  }) => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await signIn(page, 'support');
    await page.goto('/outcomes');
    for (const link of [
      page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Outcomes' }),
      page.getByTestId('outcome-row').first().getByRole('link').first(),
    ]) {
      await link.focus();
      await page.keyboard.press('Shift+Tab');
      await page.keyboard.press('Tab');
      await expect(link).toBeFocused();
      const outline = await link.evaluate((el) => {
        const s = getComputedStyle(el);
        return { style: s.outlineStyle, width: parseFloat(s.outlineWidth) };
      });
      expect(outline.style).not.toBe('none');
      expect(outline.width).toBeGreaterThanOrEqual(2);
      await expectOnScreen(link, 'focused link');
    }
  });
});

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
