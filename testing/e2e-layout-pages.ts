// Every console page, for each role, at desktop (1280) and phone (390) width: the page never scrolls
// sideways, the controls people come for are on screen (not clipped by a scrolling box), and axe
// finds no serious or critical violation. The key items are listed by hand, page by page. One spec
// per role (e2e/layout/pages-<role>.spec.ts), so that the three can run side by side. The shell
// itself: e2e/layout/shell.spec.ts.
import os from 'node:os';
import path from 'node:path';
import { expect, test, type Locator, type Page } from '@playwright/test';
import { cli, secretFrom, signIn, users } from './e2e';
import { argsDigest } from '../lib/mcp/digest';
import { expectAccessible, expectOnScreen, h1, sidewaysOverflow } from './e2e-layout';

export type Role = 'admin' | 'reviewer' | 'support';
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
/** A column: its heading on a desktop; below md (cards) its first cell, which carries the heading as its label. */
const col = (page: Page, name: string, width: Width = 1280) =>
  width === 390
    ? page.locator(`td[data-label="${name}"]`).first()
    : page.getByRole('columnheader', { name, exact: false }).first();

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
      // Another person's row (the viewer's own has no controls): a seeded one, whatever people
      // other specs have added meanwhile.
      const row = page.getByTestId(`user-row-${users.reviewer.email}`);
      // And the last person with controls: people other specs added (single sign-on's long
      // addresses and role claims among them) must not push a row's controls off screen.
      const last = page
        .locator('[data-testid^="user-row-"]')
        .filter({ has: page.getByRole('combobox') })
        .last();
      return [
        h1(page, 'Users'),
        row.getByRole('combobox'),
        row.getByRole('button').first(),
        last.getByRole('combobox'),
        last.getByRole('button').first(),
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
    shown: (page) => [h1(page, 'API reference'), page.locator('[data-testid="api-reference"][data-state="ready"]')],
  },
  {
    name: 'account',
    path: () => '/account',
    roles: everyone,
    shown: (page) => [h1(page, 'Account'), page.getByRole('heading', { name: 'Personal tokens' })],
  },
];

/** The tests of every page `role` may open, at both widths. */
export function describePages(role: Role) {
  const ids: Ids = { outcome: '', requestRef: '', approval: '' };
  const stateFile = path.join(os.tmpdir(), `countersign-layout-${process.pid}-${role}.json`);

  test.describe('layout and accessibility of every console page', () => {
    test.beforeAll(async ({ browser, playwright, baseURL }) => {
      const fresh = { storageState: { cookies: [], origins: [] } };
      // Signed in once (a password check per test would be most of the run).
      const context = await browser.newContext(fresh);
      await signIn(await context.newPage(), role);
      await context.storageState({ path: stateFile });
      await context.close();
      const request = await playwright.request.newContext({ baseURL, ...fresh });
      // One pending request of our own, so the request page has something to show whatever the seed holds.
      const key = secretFrom(
        cli('apikeys:create', '--name', `e2e-layout-${Date.now()}`, '--scopes', 'approvals:request'),
        'cs_live_',
      );
      const n = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
      const args = {
        order_id: n,
        address: {
          line1: 'Sendlinger Straße 7, Hinterhaus, 3. Stock',
          postcode: '80331',
          city: 'München',
          country: 'DE',
        },
        confirmed_via: 'chat',
        notify_customer: true,
      };
      const res = await request.post('/api/v1/approvals', {
        headers: { authorization: `Bearer ${key}`, 'idempotency-key': `e2e-layout-${n}` },
        data: {
          requestRef: `req_layout_${n}`,
          organization: 'acme',
          principal: 'user_layout',
          agent: 'support-bot',
          server: 'orders-mcp',
          tool: { name: `layout_update_${n}`, annotations: { readOnlyHint: false, destructiveHint: false } },
          arguments: args,
          argsDigest: argsDigest(args),
          summary: `Update the shipping address on order ${n} to the new one the customer sent`,
          resource: { type: 'order', id: n },
        },
      });
      expect(res.status()).toBe(201);
      ids.approval = (await res.json()).id;
      await request.dispose();

      const page = await (await browser.newContext({ storageState: stateFile })).newPage();
      await page.goto('/outcomes');
      const first = page.getByTestId('outcome-row').first();
      ids.outcome = ((await first.getByRole('link').first().getAttribute('href')) ?? '').split('/').pop() ?? '';
      ids.requestRef = (await first.getByTestId('request-ref').textContent()) ?? '';
      expect(ids.outcome).toMatch(/^[0-9a-f-]{36}$/);
      expect(ids.requestRef).not.toBe('');
      await page.close();
    });

    test.describe(role, () => {
      test.use({ storageState: stateFile });
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
  });
}
