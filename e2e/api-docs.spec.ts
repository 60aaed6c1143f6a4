// The API described (docs/api.md): GET /api/v1/openapi.json without a credential, and the console's
// reference page rendering it with swagger-ui, served by the console, nothing loaded from elsewhere.
import { expect, test } from '../testing/api-contract';
import { signIn } from '../testing/e2e';

// The paths docs/api.md names, written out here (not read from the registry the document is built from).
const contractPaths = [
  '/outcomes',
  '/outcomes/{id}',
  '/otlp/v1/traces',
  '/approvals',
  '/approvals/{id}',
  '/approvals/{id}/decisions',
  '/approvals/{id}/revoke',
  '/grants/{grantId}/redeem',
  '/incidents/{ref}',
  '/audit/verify',
  '/openapi.json',
];

test('GET /api/v1/openapi.json: the OpenAPI 3.1 document, no credential needed', async ({ request }) => {
  const res = await request.get('/api/v1/openapi.json');
  expect(res.status()).toBe(200);
  expect(res.headers()['content-type']).toBe('application/json');
  const doc = await res.json();
  expect(doc.openapi).toMatch(/^3\.1\./);
  expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(contractPaths));
  expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['apiKey', 'personalToken', 'session']);
  expect(doc.paths['/outcomes'].post.responses['422'].content['application/problem+json']).toBeDefined();
});

test('/api-docs: swagger-ui renders the reference, from this origin only, within the CSP', async ({
  page,
  baseURL,
}) => {
  const origin = new URL(baseURL!).origin;
  const elsewhere: string[] = [];
  page.on('request', (r) => {
    const url = new URL(r.url());
    if (url.protocol !== 'data:' && url.origin !== origin) elsewhere.push(r.url());
  });
  const cspErrors: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) cspErrors.push(m.text());
  });
  // Every violation the page itself sees, whether or not the browser also logs it.
  await page.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { __violations: string[] }).__violations = seen;
    document.addEventListener('securitypolicyviolation', (e) => seen.push(`${e.violatedDirective} ${e.blockedURI}`));
    // What the page asks swagger-ui for. Its online validator is skipped for 127.0.0.1 anyway, so
    // the request check alone could not see it asked for on a real host name.
    let bundle: unknown;
    Object.defineProperty(window, 'SwaggerUIBundle', {
      configurable: true,
      get: () => bundle,
      set: (fn: (o: Record<string, unknown>) => unknown) => {
        bundle = Object.assign((o: Record<string, unknown>) => {
          const { url, validatorUrl, supportedSubmitMethods, tryItOutEnabled } = o;
          Object.assign(window, { __swaggerOptions: { url, validatorUrl, supportedSubmitMethods, tryItOutEnabled } });
          return fn(o);
        }, fn);
      },
    });
  });
  await signIn(page, 'support');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API reference' }).click();
  await expect(page).toHaveURL(/\/api-docs$/);
  await expect(page.getByRole('heading', { name: 'API reference', level: 1 })).toBeVisible();

  // Rendered by swagger-ui: its tag sections and operation blocks, from the document. Its bundle
  // parses and lays out the whole document first: seconds of CPU, more beside another worker.
  const ui = page.locator('.swagger-ui');
  await expect(ui.locator('.opblock-tag', { hasText: 'Approvals' }).first()).toBeVisible({ timeout: 20_000 });
  const ingest = ui.locator('.opblock-post', {
    has: page.locator('.opblock-summary-path', { hasText: /^\/outcomes$/ }),
  });
  await expect(ingest).toBeVisible();
  await expect(ui.locator('.opblock-summary-path', { hasText: '/approvals/{id}/decisions' })).toBeVisible();
  // An operation opens: its answers, the problem+json errors included.
  await ingest.locator('.opblock-summary').click();
  await expect(ingest.locator('.responses-table')).toContainText('422');
  // Read only: nothing here sends a request with the viewer's session.
  await expect(ingest.getByRole('button', { name: /try it out/i })).toHaveCount(0);
  await expect(page.getByRole('button', { name: /execute/i })).toHaveCount(0);

  await expect(page.getByRole('link', { name: 'OpenAPI document (JSON)' })).toHaveAttribute(
    'href',
    '/api/v1/openapi.json',
  );
  expect(await page.evaluate(() => (window as unknown as { __swaggerOptions: unknown }).__swaggerOptions)).toEqual({
    url: '/api/v1/openapi.json',
    validatorUrl: 'none',
    supportedSubmitMethods: [],
    tryItOutEnabled: false,
  });
  expect(elsewhere).toEqual([]);
  expect(cspErrors).toEqual([]);
  expect(await page.evaluate(() => (window as unknown as { __violations: string[] }).__violations)).toEqual([]);
});

test("the asset route serves swagger-ui's bundle and styles, and nothing else", async ({ request }) => {
  const bundle = await request.get('/api-docs/assets/swagger-ui-bundle.js?v=5.35.0');
  expect(bundle.status()).toBe(200);
  expect(bundle.headers()['content-type']).toBe('text/javascript; charset=utf-8');
  expect(bundle.headers()['cache-control']).toBe('public, max-age=31536000, immutable');
  expect(bundle.headers()['x-content-type-options']).toBe('nosniff');
  expect(await bundle.text()).toContain('SwaggerUIBundle');
  const css = await request.get('/api-docs/assets/swagger-ui.css');
  expect(css.status()).toBe(200);
  expect(css.headers()['content-type']).toBe('text/css; charset=utf-8');
  expect(await css.text()).toContain('.swagger-ui');
  // Other files of the package, and names that try to step out of it.
  for (const name of [
    'index.html',
    'oauth2-redirect.html',
    'swagger-ui-bundle.js.map',
    'swagger-ui.js',
    'package.json',
    'SWAGGER-UI.CSS',
    'swagger-ui.css%00',
    '..%2Fpackage.json',
    '..%2F..%2Fpackage.json',
    '%2E%2E%2F%2E%2E%2F.env',
    'constructor',
    '__proto__',
  ]) {
    const res = await request.get(`/api-docs/assets/${name}`);
    expect(res.status(), name).toBe(404);
    expect(await res.text(), name).not.toContain('swagger');
  }
});

test('/api-docs is for signed-in people', async ({ page }) => {
  await page.goto('/api-docs');
  await expect(page).toHaveURL(/\/sign-in/);
});
