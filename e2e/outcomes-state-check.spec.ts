// Resolving an unknown through the real server (docs/api.md `resolution`, `POST /api/v1/outcomes/{id}/state-check`;
// docs/design.md "Resolving an unknown"): the API's answers and status codes, a concurrent race, and the
// console's state check on the record page and the incident.
import { randomBytes } from 'node:crypto';
import { checkedContext, expect, test } from '../testing/api-contract';
import { expectProblem, signIn, users } from '../testing/e2e';
import {
  writeKey,
  readKey,
  orgKey,
  supportToken,
  setUpOutcomesApi,
  bearer,
  uniq,
  record,
  post,
} from '../testing/outcomes-api';

setUpOutcomesApi();

const TIMEOUT = { sent: true, clientError: 'timeout' };
const digest = () => `sha256:${randomBytes(32).toString('hex')}`;

/** An unknown write (a timed-out refund) under its own key and digest: its id. */
async function unknownWrite(request: Parameters<typeof post>[0], over: Record<string, unknown> = {}) {
  const r: ReturnType<typeof record> & { idempotencyKey: string } = {
    ...record({ observed: TIMEOUT, argsDigest: digest(), ...over }),
    idempotencyKey: uniq('refund'),
  };
  const body = await (await post(request, writeKey, { records: [r] })).json();
  return { id: body.records[0].id as string, record: r };
}

const check = (request: Parameters<typeof post>[0], secret: string, id: string, data: unknown) =>
  request.post(`/api/v1/outcomes/${id}/state-check`, { headers: bearer(secret), data });

test.describe('POST /api/v1/outcomes/{id}/state-check', () => {
  test('an API key with outcomes:write resolves it: 200 with the record; the second is 409 naming the first', async ({
    request,
  }) => {
    const { id } = await unknownWrite(request);
    const res = await check(request, writeKey, id, { verdict: 'did_not_happen', note: 'Nothing at the provider.' });
    expect(res.status()).toBe(200);
    expect(await res.json()).toMatchObject({
      id,
      resolution: { by: 'state_check', verdict: 'did_not_happen', note: 'Nothing at the provider.' },
    });
    const again = await check(request, supportToken, id, { verdict: 'happened', note: 'It is there.' });
    await expectProblem(again, 409, 'conflict');
    expect((await again.json()).detail).toContain('by a state check (API key e2e-outcomes-write');
    const read = await (await request.get(`/api/v1/outcomes/${id}`, { headers: bearer(readKey) })).json();
    expect(read.resolution).toMatchObject({ verdict: 'did_not_happen' });
  });

  test('bad bodies are 422 naming the field; nothing is resolved', async ({ request }) => {
    const { id } = await unknownWrite(request);
    const bodies: [unknown, string][] = [
      [{ verdict: 'maybe', note: 'n' }, 'verdict'],
      [{ verdict: 'happened' }, 'note'],
      [{ verdict: 'happened', note: '' }, 'note'],
      [{ verdict: 'happened', note: 'x'.repeat(501) }, 'note'],
      [{ verdict: 'happened', note: 'n', extra: true }, 'extra'],
    ];
    for (const [data, field] of bodies) {
      const res = await check(request, writeKey, id, data);
      await expectProblem(res, 422, 'invalid_input');
      expect((await res.json()).errors.map((e: { path: string }) => e.path)).toContain(field);
    }
    const read = await (await request.get(`/api/v1/outcomes/${id}`, { headers: bearer(readKey) })).json();
    expect(read.resolution).toBeNull();
  });

  test('not unknown: 409; another organization or no such record: 404; no credential: 401; outcomes:read: 403', async ({
    request,
  }) => {
    const completed = (await (await post(request, writeKey, { records: [record()] })).json()).records[0].id;
    const body = { verdict: 'happened', note: 'n' };
    const notUnknown = await check(request, writeKey, completed, body);
    await expectProblem(notUnknown, 409, 'conflict');
    expect((await notUnknown.json()).detail).toContain('not unknown');
    const { id } = await unknownWrite(request);
    await expectProblem(await check(request, orgKey, id, body), 404, 'not_found');
    await expectProblem(await check(request, writeKey, '00000000-0000-4000-8000-000000000000', body), 404, 'not_found');
    await expectProblem(
      await request.post(`/api/v1/outcomes/${id}/state-check`, { data: body }),
      401,
      'unauthenticated',
    );
    await expectProblem(await check(request, readKey, id, body), 403, 'forbidden');
  });

  test('a later completed attempt of the same operation resolves it; then a state check is 409 naming the record', async ({
    request,
  }) => {
    const { id, record: first } = await unknownWrite(request);
    const later = record({
      requestRef: first.requestRef,
      idempotencyKey: first.idempotencyKey,
      argsDigest: first.argsDigest,
      occurredAt: '2026-11-30T12:01:00Z',
      agent: 'support-bot',
    });
    const settler = (await (await post(request, writeKey, { records: [later] })).json()).records[0].id;
    const read = await (await request.get(`/api/v1/outcomes/${id}`, { headers: bearer(readKey) })).json();
    expect(read.resolution).toMatchObject({ by: 'record', verdict: 'happened', recordId: settler, who: 'support-bot' });
    expect(read.classification.nextStep).toContain(settler);
    const res = await check(request, supportToken, id, { verdict: 'did_not_happen', note: 'n' });
    await expectProblem(res, 409, 'conflict');
    expect((await res.json()).detail).toContain(`record ${settler}`);
    const unresolved = await (
      await request.get(`/api/v1/outcomes?requestRef=${first.requestRef}&resolution=resolved`, {
        headers: bearer(readKey),
      })
    ).json();
    expect(unresolved.items.map((i: { id: string }) => i.id)).toEqual([id]);
  });

  test('two at once: one 200, the other 409 naming the first', async ({ playwright }, testInfo) => {
    const a = checkedContext(await playwright.request.newContext({ baseURL: testInfo.project.use.baseURL }));
    const b = checkedContext(await playwright.request.newContext({ baseURL: testInfo.project.use.baseURL }));
    for (let round = 0; round < 3; round++) {
      const { id } = await unknownWrite(a);
      const [x, y] = await Promise.all([
        check(a, supportToken, id, { verdict: 'happened', note: 'support saw it' }),
        check(b, writeKey, id, { verdict: 'did_not_happen', note: 'the agent did not' }),
      ]);
      expect([x.status(), y.status()].sort()).toEqual([200, 409]);
      const loser = x.status() === 409 ? x : y;
      const winnerName = x.status() === 200 ? users.support.email : 'API key e2e-outcomes-write';
      expect((await loser.json()).detail).toContain(winnerName);
    }
    await a.dispose();
    await b.dispose();
  });
});

test.describe('the console', () => {
  test('support records a state check on the record page; the incident moves it out of "check before repeating"', async ({
    page,
    request,
  }) => {
    const requestRef = uniq('req_state_check');
    const { id } = await unknownWrite(request, { requestRef, summary: 'Refund 12.00 EUR on order 7001' });
    await signIn(page, 'support', `/outcomes/${id}`);
    await page.goto(`/outcomes/${id}`);
    for (const width of [390, 1440]) {
      await page.setViewportSize({ width, height: 900 });
      await page.screenshot({ path: testInfo().outputPath(`form-${width}.png`), fullPage: true });
    }
    await page.getByRole('button', { name: 'It did not happen' }).click();
    // The note is required: the browser refuses the empty form before it is sent.
    await expect(page.getByTestId('state-check-done')).toHaveCount(0);
    await page.getByLabel(/What you checked/).fill('Order 7001 shows no refund in the provider.');
    await page.getByRole('button', { name: 'It did not happen' }).click();
    // The page re-renders with the resolution in place of the form.
    await expect(page.getByTestId('resolution')).toBeVisible();
    await page.reload();
    await expect(page.getByTestId('resolution')).toContainText('Resolved: it did not happen');
    await expect(page.getByTestId('resolution-note')).toHaveText('Order 7001 shows no refund in the provider.');
    await expect(page.getByTestId('next-step')).toContainText('did not take effect');
    for (const width of [1440, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await page.screenshot({ path: testInfo().outputPath(`record-${width}.png`), fullPage: true });
    }

    await page.goto(`/incidents/${requestRef}`);
    await expect(page.getByTestId('list-unknown')).not.toContainText('order 7001');
    await expect(page.getByTestId('list-not-done')).toContainText('resolved by a state check');
    await expect(page.getByTestId('list-not-done')).toContainText(users.support.email);
  });

  test('the outcome list filters unresolved unknown writes', async ({ page, request }) => {
    const requestRef = uniq('req_filter');
    const { id: open } = await unknownWrite(request, { requestRef });
    await signIn(page, 'support');
    await page.goto(`/outcomes?requestRef=${requestRef}`);
    await page.getByLabel('Unknowns').selectOption('unresolved');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect(page).toHaveURL(/resolution=unresolved/);
    await expect(page.locator(`a[href="/outcomes/${open}"]`).first()).toBeVisible();
    await page.getByLabel('Unknowns').selectOption('resolved');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect(page.locator(`a[href="/outcomes/${open}"]`)).toHaveCount(0);
  });
});

const testInfo = () => test.info();
