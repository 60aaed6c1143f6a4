import { expect, test } from '@playwright/test';
import { cli, secretFrom, signIn } from '../testing/e2e';

// The page's own defence (proxy.ts): scripts run only with this response's nonce, so markup that
// reached a page through a record's text could not run even if escaping failed somewhere.
const n = Date.now().toString(36);
const nonceOf = (csp: string | undefined) => /'nonce-([A-Za-z0-9+/=]+)'/.exec(csp ?? '')?.[1];

test.describe('Content-Security-Policy nonce', () => {
  test('every response carries a fresh nonce; scripts need it; no unsafe-inline for scripts', async ({ request }) => {
    const seen = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const res = await request.get('/sign-in');
      const csp = res.headers()['content-security-policy'];
      const scriptSrc = csp.split(';').find((d) => d.trim().startsWith('script-src'))!;
      expect(scriptSrc.trim()).toMatch(/^script-src 'self' 'nonce-[A-Za-z0-9+/=]{16,}' 'strict-dynamic'$/);
      expect(scriptSrc).not.toContain('unsafe-inline');
      const nonce = nonceOf(csp)!;
      seen.add(nonce);
      // Next put this response's nonce on its own scripts.
      const html = await res.text();
      const scripts = html.match(/<script\b[^>]*>/g) ?? [];
      expect(scripts.length).toBeGreaterThan(0);
      for (const tag of scripts) expect(tag).toContain(`nonce="${nonce}"`);
    }
    expect(seen.size).toBe(3);
  });

  test('an inline script injected into a page without the nonce does not run; one with it does', async ({ page }) => {
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    // As if escaping had failed: raw markup inside the server's HTML, the server's own header kept.
    await page.route('**/sign-in', async (route) => {
      const res = await route.fetch();
      const nonce = nonceOf(res.headers()['content-security-policy']);
      const html = (await res.text()).replace(
        '<body',
        `<body><script>window.__injected = 1</script><script nonce="${nonce}">window.__control = 1</script><x`,
      );
      const headers = { ...res.headers() };
      delete headers['content-length'];
      delete headers['content-encoding'];
      await route.fulfill({ status: res.status(), headers, body: html });
    });
    await page.goto('/sign-in');
    await expect(page.getByRole('heading', { name: 'Sign in to the console' })).toBeVisible();
    expect(await page.evaluate(() => (window as unknown as { __control?: number }).__control)).toBe(1);
    expect(await page.evaluate(() => (window as unknown as { __injected?: number }).__injected)).toBeUndefined();
    expect(violations.join('\n')).toMatch(/inline script/i);
  });

  test('a record whose text holds a script shows it as text, and nothing runs', async ({ page, request }) => {
    const key = secretFrom(
      cli('apikeys:create', '--name', `e2e-csp-${n}`, '--scopes', 'outcomes:write,outcomes:read'),
      'cs_live_',
    );
    const summary = `<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> csp-${n}`;
    const res = await request.post('/api/v1/outcomes', {
      headers: { authorization: `Bearer ${key}` },
      data: {
        records: [
          {
            eventId: `evt_csp_${n}`,
            occurredAt: new Date().toISOString(),
            requestRef: `req_csp_${n}`,
            organization: 'acme',
            principal: 'user_193',
            server: 'billing-mcp',
            tool: { name: 'refund_payment' },
            summary,
            observed: { sent: true, httpStatus: 200 },
          },
        ],
      },
    });
    expect(res.status(), await res.text()).toBeLessThan(300);
    const id = (await res.json()).records[0].id;
    await signIn(page, 'support');
    await page.goto(`/outcomes/${id}`);
    await expect(page.getByText(`csp-${n}`).first()).toBeVisible();
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
  });
});
