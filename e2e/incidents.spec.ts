import { readFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { cli, secretFrom, signIn } from './helpers';

// Runs on the demo data that `npm test` seeds (scripts/demo-outcomes.ts).
test.describe('incidents', () => {
  test('support pastes a reference, reads the three lists and the findings, downloads the Markdown', async ({ page }) => {
    await signIn(page, 'support');
    await page.getByRole('searchbox', { name: /Find an incident/ }).first().fill('req_refund_5120');
    await page.keyboard.press('Enter');
    await expect(page).toHaveURL(/\/incidents\/req_refund_5120$/);
    await expect(page.getByTestId('incident-sentence')).not.toBeEmpty();
    await expect(page.getByTestId('list-done')).toContainText('refund_payment');
    // The first attempt (lost connection) may have refunded too: the new key did not make it safe.
    await expect(page.getByTestId('list-unknown')).toContainText('refund-5120-v1');
    await expect(page.getByTestId('finding-unsafe_replay')).toContainText('refund_payment');
    await expect(page.getByTestId('timeline-entry')).toHaveCount(2);

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download-markdown').click()]);
    expect(download.suggestedFilename()).toBe('incident-req_refund_5120.md');
    const text = readFileSync((await download.path())!, 'utf8');
    expect(text).toContain('# Incident req\\_refund\\_5120');
    expect(text).toMatch(/## Findings \(\d+\)/);
    expect(text).toContain('Redacted report');
  });

  test('an idempotency key finds its incident; an unknown unsafe write shows in the unknown list', async ({ page }) => {
    await signIn(page, 'reviewer');
    await page.goto('/incidents?q=cancel-8003');
    await expect(page).toHaveURL(/\/incidents\/req_silent_8003$/);
    await expect(page.getByTestId('list-unknown')).toContainText('cancel_order');
    await expect(page.getByTestId('incident-sentence')).toContainText('cancel_order');
  });

  test('a term that matches nothing gets a clear page naming what was searched', async ({ page }) => {
    await signIn(page, 'support');
    await page.goto('/incidents?q=req_does_not_exist');
    await expect(page.getByTestId('incident-not-found')).toContainText('Nothing matches “req_does_not_exist”');
    await expect(page.getByTestId('incident-not-found')).toContainText('idempotency keys');
  });

  test('a record page links to its incident', async ({ page }) => {
    await signIn(page, 'support');
    await page.goto('/outcomes?requestRef=req_scope_7781');
    await page.getByTestId('outcome-row').first().getByRole('link').first().click();
    await page.getByTestId('incident-link').click();
    await expect(page).toHaveURL(/\/incidents\/req_scope_7781$/);
    await expect(page.getByTestId('finding-permission_expansion')).toBeVisible();
  });

  test('the incident API: JSON, Markdown, 404, 403, masked', async ({ request }) => {
    const key = secretFrom(cli('apikeys:create', '--name', `e2e-incidents-${Date.now()}`, '--scopes', 'outcomes:read'), 'cs_live_');
    const writeOnly = secretFrom(cli('apikeys:create', '--name', `e2e-writeonly-${Date.now()}`, '--scopes', 'outcomes:write'), 'cs_live_');
    const auth = { authorization: `Bearer ${key}` };

    const res = await request.get('/api/v1/incidents/req_scope_7781', { headers: auth });
    expect(res.status()).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ requestRef: 'req_scope_7781', summary: { done: expect.any(Array), notDone: expect.any(Array), unknown: expect.any(Array) } });
    expect(body.findings.map((f: { kind: string }) => f.kind)).toContain('permission_expansion');
    expect(body.timeline).toHaveLength(2);
    expect(body.timeline[0]).toMatchObject({ at: expect.any(String), kind: 'outcome' });

    const md = await request.get('/api/v1/incidents/req_crm_9100?format=markdown', { headers: auth });
    expect(md.headers()['content-type']).toContain('text/markdown');
    const text = await md.text();
    expect(text).toContain('\\[masked:email\\]');
    expect(text).not.toContain('jane.doe@example.com');

    const missing = await request.get('/api/v1/incidents/req_nope', { headers: auth });
    expect(missing.status()).toBe(404);
    expect((await missing.json()).code).toBe('not_found');
    expect((await request.get('/api/v1/incidents/req_scope_7781?format=pdf', { headers: auth })).status()).toBe(422);
    expect((await request.get('/api/v1/incidents/req_scope_7781', { headers: { authorization: `Bearer ${writeOnly}` } })).status()).toBe(403);
    expect((await request.get('/api/v1/incidents/req_scope_7781')).status()).toBe(401);
  });
});
