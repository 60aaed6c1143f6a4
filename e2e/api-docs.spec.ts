// The API described (API.md): GET /api/v1/openapi.json without a credential, and the console's
// reference page rendering it with nothing loaded from elsewhere.
import { expect, test } from '../testing/api-contract';
import { signIn } from '../testing/e2e';

// The paths API.md names, written out here (not read from the registry the document is built from).
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

test('/api-docs renders the reference from this origin only, linked from the navigation', async ({ page }) => {
  const elsewhere: string[] = [];
  page.on('request', (r) => {
    if (!r.url().startsWith(test.info().project.use.baseURL ?? '')) elsewhere.push(r.url());
  });
  const cspErrors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) cspErrors.push(m.text());
  });
  await signIn(page, 'support');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API reference' }).click();
  await expect(page).toHaveURL(/\/api-docs$/);
  await expect(page.getByRole('heading', { name: 'API reference', level: 1 })).toBeVisible();
  const decisions = page.locator('#postApprovalsIdDecisions');
  await expect(decisions.getByText('/api/v1/approvals/{id}/decisions')).toBeVisible();
  await expect(decisions.getByText('people with role reviewer, admin', { exact: false })).toBeVisible();
  await expect(decisions.getByText('409', { exact: true })).toBeVisible();
  await expect(page.locator('#postOtlpV1Traces')).toContainText('application/x-protobuf');
  await expect(page.getByRole('link', { name: 'OpenAPI document (JSON)' })).toHaveAttribute(
    'href',
    '/api/v1/openapi.json',
  );
  expect(elsewhere).toEqual([]);
  expect(cspErrors).toEqual([]);
});

test('/api-docs is for signed-in people', async ({ page }) => {
  await page.goto('/api-docs');
  await expect(page).toHaveURL(/\/sign-in/);
});
