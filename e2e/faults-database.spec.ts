// Faults on a real PostgreSQL (docs/api.md, "Errors": database unavailable → 503 with Retry-After,
// nothing partially written), from the database's side: an exhausted pool, PostgreSQL stopped,
// crashed and frozen, and the console pages while it is down. The machine's PostgreSQL is shared,
// so the cluster and console are this spec's own (testing/faults.ts).
import { expect, test, type Page } from '@playwright/test';
import {
  POOL_SIZE,
  CONNECT_TIMEOUT_MS,
  QUERY_TIMEOUT_MS,
  USER,
  app,
  sql,
  clusterDown,
  setUpFaultsConsole,
  stopCluster,
  startCluster,
  freeze,
  thaw,
  sleep,
  type Batch,
  batch,
  type Answer,
  type Ingested,
  call,
  post,
  deliver,
  DATABASE_TEXT,
  expectUnavailable,
  storedPerBatch,
  expectWholeBatches,
  expectAnswerMatchesStore,
  expectNoUnexpectedErrors,
} from '../testing/faults';

test.describe.configure({ mode: 'serial' });

setUpFaultsConsole();

test(`200 concurrent requests while inserts are held up and the pool (${POOL_SIZE}) is exhausted: 503 with Retry-After, then normal answers`, async () => {
  test.setTimeout(60_000);
  const batches = Array.from({ length: 200 }, () => batch(5));
  const lock = await sql!.connect();
  let answers: Answer[];
  try {
    await lock.query('BEGIN');
    await lock.query('LOCK TABLE outcome_records IN EXCLUSIVE MODE');
    let settled = 0;
    const pending = batches.map((b) => post(b.records).finally(() => settled++));
    // The requests holding the pool's connections wait on the lock; all the others give up
    // waiting for a connection.
    await expect.poll(() => settled, { timeout: 20_000 }).toBeGreaterThanOrEqual(batches.length - POOL_SIZE);
    await lock.query('COMMIT');
    answers = await Promise.all(pending);
  } finally {
    lock.release();
  }
  const ok = answers.filter((a) => a.status === 200);
  const unavailable = answers.filter((a) => a.status === 503);
  expect(answers.filter((a) => a.status !== 200 && a.status !== 503).map((a) => `${a.status} ${a.text}`)).toEqual([]);
  expect(unavailable.length).toBeGreaterThanOrEqual(batches.length - POOL_SIZE);
  // Those that held a connection finish once the lock goes: slow, not failed.
  expect(ok.length).toBeGreaterThanOrEqual(1);
  expect(ok.length).toBeLessThanOrEqual(POOL_SIZE);
  for (const a of unavailable) {
    expectUnavailable(a);
    expect(a.answeredAt - a.sentAt, 'a 503 comes after the connect timeout, not much later').toBeLessThan(
      CONNECT_TIMEOUT_MS + 5_000,
    );
  }
  const acknowledged = batches.filter((_, i) => answers[i].status === 200);
  const refused = batches.filter((_, i) => answers[i].status === 503);
  await expectWholeBatches(acknowledged, refused);

  // Recovery: the same load again, at once, is answered normally.
  const retries = await Promise.all(refused.map((b) => post(b.records)));
  expect(retries.filter((a) => a.status !== 200).map((a) => `${a.status} ${a.text}`)).toEqual([]);
  const stored = await storedPerBatch(refused);
  for (const [i, a] of retries.entries()) {
    const answer = JSON.parse(a.text) as Ingested;
    const b = refused[i];
    expect(answer.accepted + answer.duplicates).toBe(b.records.length);
    expect([0, b.records.length]).toContain(answer.duplicates);
    expect(stored.get(b.requestRef)?.rows).toBe(b.records.length);
  }
  await expectWholeBatches(batches);
  expectNoUnexpectedErrors();
  const slowest = Math.max(...unavailable.map((a) => a.answeredAt - a.sentAt));
  console.log(
    `[faults] pool exhaustion: ${ok.length} × 200 once the lock went, ${unavailable.length} × 503 (slowest after ${slowest} ms); retried: ${retries.length} × 200`,
  );
});

test('PostgreSQL stopped (fast, then crashed) and started again under a stream of batches: 503 with Retry-After while down, every acknowledged record stored once', async () => {
  test.setTimeout(90_000);
  const attempts: Answer[] = [];
  const delivered: { b: Batch; answer: Ingested | null }[] = [];
  const outages: { mode: string; from: number; to: number }[] = [];
  let streaming = true;
  const streams = Array.from({ length: 3 }, async () => {
    while (streaming) {
      const b = batch(25);
      delivered.push({ b, answer: await deliver(b, attempts) });
    }
  });
  try {
    await sleep(800);
    for (const mode of ['fast', 'immediate'] as const) {
      stopCluster(mode);
      const from = Date.now();
      await sleep(1_500);
      outages.push({ mode, from, to: Date.now() });
      startCluster();
      await sleep(800);
    }
  } finally {
    if (clusterDown) startCluster();
    streaming = false;
    await Promise.all(streams);
  }

  expect(attempts.filter((a) => a.status !== 200 && a.status !== 503).map((a) => `${a.status} ${a.text}`)).toEqual([]);
  for (const a of attempts.filter((x) => x.status === 503)) expectUnavailable(a);
  for (const o of outages) {
    const whileDown = attempts.filter((a) => a.sentAt >= o.from && a.answeredAt <= o.to);
    expect(whileDown.length, `requests answered while stopped (${o.mode})`).toBeGreaterThan(3);
    expect(
      whileDown.filter((a) => a.status !== 503).map((a) => `${a.status} ${a.text}`),
      o.mode,
    ).toEqual([]);
  }
  expect(
    delivered.filter((d) => !d.answer).map((d) => d.b.requestRef),
    'batches never acknowledged',
  ).toEqual([]);
  for (const { b, answer } of delivered) {
    // A retry finds the whole batch stored (it was, but the answer was lost) or none of it.
    expect(answer!.accepted + answer!.duplicates).toBe(b.records.length);
    expect([0, b.records.length], b.requestRef).toContain(answer!.duplicates);
  }
  await expectWholeBatches(delivered.map((d) => d.b));
  for (const { b, answer } of delivered.slice(-5)) await expectAnswerMatchesStore(b, answer!);
  expectNoUnexpectedErrors();
  const retried = delivered.filter((d) => d.answer!.duplicates > 0).length;
  console.log(
    `[faults] stop/start: ${delivered.length} batches acknowledged, ${attempts.length} requests, ${attempts.filter((a) => a.status === 503).length} × 503, ${retried} batches found already stored on retry`,
  );
});

test('PostgreSQL frozen (it takes connections but never answers): 503 within the timeouts instead of a hang, then recovery', async () => {
  test.setTimeout(60_000);
  const b = batch(5);
  let during: Answer[];
  let read: Answer;
  try {
    freeze();
    [read, ...during] = await Promise.all([
      call(`/api/v1/outcomes?requestRef=${b.requestRef}`),
      ...Array.from({ length: 4 }, () => post(b.records)),
    ]);
  } finally {
    thaw();
  }
  for (const a of [read, ...during]) {
    expectUnavailable(a);
    // Authentication is the first query: it fails after one of the two timeouts.
    expect(a.answeredAt - a.sentAt).toBeLessThan(Math.max(QUERY_TIMEOUT_MS, CONNECT_TIMEOUT_MS) + 3_000);
  }
  console.log(`[faults] frozen: 503 after ${[read, ...during].map((a) => a.answeredAt - a.sentAt).join(', ')} ms`);
  await expectWholeBatches([], [b]);
  const log: Answer[] = [];
  const answer = await deliver(b, log, 20_000);
  expect(answer, log.map((a) => `${a.status} ${a.text}`).join('\n')).not.toBeNull();
  expect(answer!.accepted + answer!.duplicates).toBe(5);
  await expectWholeBatches([b]);
  expectNoUnexpectedErrors();
});

async function signIn(page: Page) {
  await page.goto(`${app!.origin}/sign-in`);
  await page.getByLabel('Email').fill(USER.email);
  await page.getByLabel('Password').fill(USER.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

test('console pages while PostgreSQL is down: a readable error page, forms and sign-in say why, and all recover', async ({
  page,
  browser,
}) => {
  test.setTimeout(60_000);
  await signIn(page);
  await expect(page.getByTestId('viewer-email')).toHaveText(USER.email);
  await page.goto(`${app!.origin}/account`);
  const visitor = await browser.newContext();
  const other = await visitor.newPage();
  try {
    stopCluster('fast');
    // A form on a page loaded before: its action answers with a message, the page stays.
    await page.getByLabel('Token name').fill('faults');
    await page.getByRole('button', { name: 'Create token' }).click();
    await expect(
      page.getByText('The console cannot reach its database right now. Try again in a moment.'),
    ).toBeVisible();
    await expect(page.getByTestId('viewer-email')).toHaveText(USER.email);

    const res = await page.goto(`${app!.origin}/outcomes`);
    await expect(page.getByTestId('page-error')).toBeVisible();
    await expect(page.getByRole('heading', { name: 'This page could not be loaded' })).toBeVisible();
    expect(res!.status()).toBeGreaterThanOrEqual(500);
    expect(await page.locator('body').innerText()).not.toMatch(DATABASE_TEXT);

    // Someone signing in now is told the database is unreachable, not that the password is wrong.
    await signIn(other);
    await expect(other.getByTestId('sign-in-error')).toHaveText(/cannot reach its database/);
  } finally {
    if (clusterDown) startCluster();
    await visitor.close();
  }
  await page.getByRole('button', { name: 'Try again' }).click();
  await expect(page.getByTestId('viewer-email')).toHaveText(USER.email);
  expectNoUnexpectedErrors();
});
