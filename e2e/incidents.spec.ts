import { readFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { cli, secretFrom, signIn, users } from '../testing/e2e';
import { argsDigest } from '../lib/mcp/digest';

// Runs on the demo data that `npm test` seeds (scripts/demo-outcomes.ts).
test.describe('incidents', () => {
  test('support pastes a reference, reads the three lists and the findings, downloads the Markdown', async ({
    page,
  }) => {
    await signIn(page, 'support');
    await page
      .getByRole('searchbox', { name: /Find an incident/ })
      .first()
      .fill('req_refund_5120');
    await page.keyboard.press('Enter');
    await expect(page).toHaveURL(/\/incidents\/req_refund_5120$/);
    await expect(page.getByTestId('incident-sentence')).not.toBeEmpty();
    await expect(page.getByTestId('list-done')).toContainText('refund_payment');
    // The first attempt (lost connection) may have refunded too: the new key did not make it safe.
    await expect(page.getByTestId('list-unknown')).toContainText('refund-5120-v1');
    await expect(page.getByTestId('finding-unsafe_replay')).toContainText('refund_payment');
    await expect(page.getByTestId('timeline-entry')).toHaveCount(2);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByTestId('download-markdown').click(),
    ]);
    expect(download.suggestedFilename()).toBe('incident-req_refund_5120.md');
    const text = readFileSync((await download.path())!, 'utf8');
    expect(text).toContain('# Incident `req_refund_5120`');
    expect(text).toMatch(/## Findings \(\d+\)/);
    expect(text).toContain('Redacted report');
  });

  test('the timeline shows each task status seen, the current one last', async ({ page }) => {
    await signIn(page, 'support');
    await page.goto('/incidents/req_task_prices_5133');
    const tasks = page.getByTestId('timeline-task');
    await expect(tasks).toHaveText(['task working', 'task input required']);
    await expect(page.getByTestId('timeline-entry').last()).toContainText(
      "Answer the task's input request, then poll the task (tasks/get); never call the tool again.",
    );
  });

  test('a key shared by many incidents lists them all; an unknown unsafe write shows in the unknown list', async ({
    page,
  }) => {
    await signIn(page, 'reviewer');
    // The demo repeats the story in the background (req_silent_8003_NNN) with the same operation key.
    await page.goto('/incidents?q=cancel-8003');
    await expect(page).toHaveURL(/\/incidents\?q=cancel-8003$/);
    const matches = page.getByTestId('incident-matches');
    await expect(matches.getByRole('link', { name: 'req_silent_8003', exact: true })).toBeVisible();
    expect(await matches.getByTestId('incident-item').count()).toBeGreaterThan(1);
    await expect(matches.getByTestId('incident-item').first()).toContainText('matched by idempotency key');
    await matches.getByRole('link', { name: 'req_silent_8003', exact: true }).click();
    await expect(page).toHaveURL(/\/incidents\/req_silent_8003$/);
    await expect(page.getByTestId('list-unknown')).toContainText('cancel_order');
    await expect(page.getByTestId('incident-sentence')).toContainText('cancel_order');
  });

  test('a term that matches nothing gets a clear page naming what was searched', async ({ page }) => {
    await signIn(page, 'support');
    await page.goto('/incidents?q=req_does_not_exist');
    await expect(page.getByTestId('incident-not-found')).toContainText('Nothing matches “req_does_not_exist”');
    for (const kind of ['request references', 'idempotency keys', 'event ids', 'approval ids', 'grant ids']) {
      await expect(page.getByTestId('incident-not-found')).toContainText(kind);
    }
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
    const key = secretFrom(
      cli('apikeys:create', '--name', `e2e-incidents-${Date.now()}`, '--scopes', 'outcomes:read'),
      'cs_live_',
    );
    const writeOnly = secretFrom(
      cli('apikeys:create', '--name', `e2e-writeonly-${Date.now()}`, '--scopes', 'outcomes:write'),
      'cs_live_',
    );
    const auth = { authorization: `Bearer ${key}` };

    const res = await request.get('/api/v1/incidents/req_scope_7781', { headers: auth });
    expect(res.status()).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({
      requestRef: 'req_scope_7781',
      summary: { done: expect.any(Array), notDone: expect.any(Array), unknown: expect.any(Array) },
    });
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
    expect(
      (
        await request.get('/api/v1/incidents/req_scope_7781', { headers: { authorization: `Bearer ${writeOnly}` } })
      ).status(),
    ).toBe(403);
    expect((await request.get('/api/v1/incidents/req_scope_7781')).status()).toBe(401);
  });

  test('an approval filed under a reference joins its incident: the request, the decision with its reason, the redemption', async ({
    page,
    request,
  }) => {
    test.setTimeout(90_000);
    // One service key stages, redeems and reports; the reviewer decides through a personal token.
    const key = secretFrom(
      cli(
        'apikeys:create',
        '--name',
        `e2e-incident-approvals-${Date.now()}`,
        '--scopes',
        'approvals:request,grants:redeem,outcomes:write',
      ),
      'cs_live_',
    );
    const reviewerToken = secretFrom(
      cli('tokens:create', '--email', users.reviewer.email, '--name', 'e2e-incidents'),
      'cs_pat_',
    );
    const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });
    const ref = `req_e2e_approval_${Date.now().toString(36)}`;
    const args = { order_id: '4411', note: 'Customer asked for delivery after 17:00' };
    const digest = argsDigest(args);
    // billing-mcp is trusted in the demo data; this write is neither destructive nor open-world: one approval.
    const tool = {
      name: 'add_note',
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    };

    const staged = await request.post('/api/v1/approvals', {
      headers: { ...bearer(key), 'idempotency-key': `${ref}-note` },
      // The principal is not the reviewer's (user_reviewer): they may decide.
      data: {
        requestRef: ref,
        organization: 'acme',
        principal: 'user_193',
        agent: 'support-bot',
        server: 'billing-mcp',
        tool,
        arguments: args,
        argsDigest: digest,
        summary: 'Add a note to order 4411',
      },
    });
    expect(staged.status()).toBe(201);
    const { id: approvalId, version } = await staged.json();

    // Before anything ran, the incident already exists, with approvals only.
    await signIn(page, 'support');
    await page.goto(`/incidents?q=${approvalId}`);
    await expect(page).toHaveURL(new RegExp(`/incidents/${ref}$`));
    await expect(page.getByTestId('incident-sentence')).toContainText(
      'No tool calls were recorded. 1 approval request: 1 pending.',
    );
    await expect(page.getByTestId('timeline-entry')).toHaveCount(1);

    const decided = await request.post(`/api/v1/approvals/${approvalId}/decisions`, {
      headers: bearer(reviewerToken),
      data: { decision: 'approve', reason: 'Checked order 4411 with the customer', version },
    });
    expect(decided.status()).toBe(200);
    const grantId: string = (await decided.json()).grant.id;
    const redeemed = await request.post(`/api/v1/grants/${grantId}/redeem`, {
      headers: bearer(key),
      data: { server: 'billing-mcp', tool: 'add_note', argsDigest: digest },
    });
    expect(redeemed.status()).toBe(200);
    const posted = await request.post('/api/v1/outcomes', {
      headers: bearer(key),
      data: {
        records: [
          {
            eventId: `${ref}-run`,
            occurredAt: new Date().toISOString(),
            requestRef: ref,
            organization: 'acme',
            principal: 'user_193',
            server: 'billing-mcp',
            tool,
            grantId,
            argsDigest: digest,
            summary: 'Add a note to order 4411',
            observed: { sent: true, httpStatus: 200, result: { isError: false, outputValidation: 'valid' } },
          },
        ],
      },
    });
    expect(posted.status()).toBe(200);

    // The grant id finds the same incident.
    await page.goto(`/incidents?q=${grantId}`);
    await expect(page).toHaveURL(new RegExp(`/incidents/${ref}$`));
    const entries = page.getByTestId('timeline-entry');
    await expect(entries).toHaveCount(5);
    const kinds = await entries.evaluateAll((els) => els.map((el) => el.getAttribute('data-kind')));
    expect(kinds).toEqual(['approval_requested', 'decision', 'grant_issued', 'grant_redeemed', 'outcome']);

    const requested = page.locator('[data-kind="approval_requested"]');
    await expect(requested).toContainText('add_note');
    await expect(requested).toContainText('asks on behalf of user_193');
    await expect(requested).toContainText('Add a note to order 4411');
    await expect(requested.getByTestId('approval-link')).toHaveAttribute('href', `/approvals/${approvalId}`);
    const decision = page.locator('[data-kind="decision"]');
    await expect(decision.getByTestId('decision-reviewer')).toHaveText(users.reviewer.email);
    await expect(decision).toContainText('approved');
    await expect(decision.getByTestId('decision-reason')).toContainText('Checked order 4411 with the customer');
    await expect(page.locator('[data-kind="grant_issued"]')).toContainText(`issued by ${users.reviewer.email}`);
    await expect(page.locator('[data-kind="grant_redeemed"]')).toContainText(grantId);
    await expect(page.locator('[data-kind="outcome"]').getByTestId('approval-link')).toHaveAttribute(
      'href',
      `/approvals/${approvalId}`,
    );
    await expect(page.getByTestId('incident-sentence')).toHaveText('1 operation done. 1 approval request: 1 redeemed.');
    await expect(page.getByTestId('incident-approval')).toContainText('redeemed');
    // The write ran under the grant redeemed for it: no finding.
    await expect(page.getByTestId('finding-write_without_grant')).toHaveCount(0);

    // The record page links its grant to the approval.
    await page.locator('[data-kind="outcome"]').getByRole('link', { name: 'add_note on billing-mcp' }).click();
    await expect(page.getByTestId('grant-link')).toHaveAttribute('href', `/approvals/${approvalId}`);

    // The API and the Markdown export tell the same story.
    const json = await page.request.get(`/api/v1/incidents/${ref}`);
    expect(json.status()).toBe(200);
    const body = await json.json();
    expect(body.timeline.map((e: { kind: string }) => e.kind)).toEqual(kinds);
    expect(body.timeline[1]).toMatchObject({
      kind: 'decision',
      reviewer: users.reviewer.email,
      decision: 'approve',
      reason: 'Checked order 4411 with the customer',
      approvalId,
    });
    const md = await (await page.request.get(`/api/v1/incidents/${ref}?format=markdown`)).text();
    expect(md).toContain('| Decision (approve) |');
    expect(md).toContain('Reason: Checked order 4411 with the customer');
    expect(md).toContain('| Grant redeemed |');
  });
});
