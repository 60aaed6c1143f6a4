import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import pg from 'pg';
import { createApiKey, createUser, startConsole, type ConsoleProcess } from '../scripts/lib/console-process';
import { ensureDatabaseExists } from '../scripts/lib/database';
import { startEmbeddedPostgres } from '../scripts/lib/embedded-postgres';
import { applyMigrations } from '../scripts/lib/migrations';

// Faults on a real PostgreSQL (API.md, "Errors": database unavailable → 503 with Retry-After,
// nothing partially written). The machine's PostgreSQL is shared, so this spec runs its own
// cluster (.faults-data/e2e, kept between runs) that it can stop, crash and freeze, and its own
// console on it: a small pool and a short query timeout so that each case takes seconds.

const ROOT = process.cwd();
const POOL_SIZE = 4;
// Longer than the connect timeout (lib/server/data/db.ts), so that requests holding a connection
// outlast those waiting for one in the pool-exhaustion case.
const CONNECT_TIMEOUT_MS = 5_000;
const QUERY_TIMEOUT_MS = 15_000;
const USER = { email: `faults-${Date.now().toString(36)}@example.test`, password: 'faults correct horse' };

type Cluster = Awaited<ReturnType<typeof startEmbeddedPostgres>>;
let cluster: Cluster | undefined;
let dbName = '';
let app: ConsoleProcess | undefined;
let sql: pg.Pool | undefined;
let key = '';
let clusterDown = false;
let frozen: number[] = [];

test.describe.configure({ mode: 'serial' });

test.beforeAll(async () => {
  test.setTimeout(120_000);
  cluster = await startEmbeddedPostgres(path.join(ROOT, '.faults-data', 'e2e'), { port: 'free' }); // not the main cluster's COUNTERSIGN_PG_PORT
  dbName = `faults_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const url = cluster.url(dbName);
  await ensureDatabaseExists(url);
  await applyMigrations(url);
  key = createApiKey(ROOT, url, ['outcomes:write', 'outcomes:read'], 'faults');
  createUser(ROOT, url, { email: USER.email, role: 'support', password: USER.password });
  app = await startConsole(ROOT, {
    DATABASE_URL: url,
    AUTH_SECRET: randomBytes(24).toString('base64url'),
    DATABASE_POOL_SIZE: String(POOL_SIZE),
    DATABASE_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
  });
  sql = new pg.Pool({ connectionString: url, max: 3 });
  sql.on('error', () => {}); // its idle connections die with every stop
});

test.afterEach(async ({}, testInfo) => {
  // What the console logged, to tell a failure's server side.
  if (testInfo.status !== testInfo.expectedStatus && app)
    console.log(`[faults] console output:\n${app.output().slice(-6_000)}`);
});

test.afterAll(async () => {
  test.setTimeout(60_000);
  thaw();
  await app?.stop();
  await sql?.end().catch(() => {});
  if (!cluster) return;
  try {
    if (clusterDown) startCluster();
    const admin = new pg.Client({ connectionString: cluster.url() });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`).finally(() => admin.end());
  } finally {
    cluster.stop();
  }
});

function stopCluster(mode: 'fast' | 'immediate') {
  clusterDown = true;
  cluster!.stop(mode);
}

function startCluster() {
  cluster!.start();
  clusterDown = false;
}

/** SIGSTOP every process of the cluster: it accepts TCP connections but never answers. */
function freeze() {
  const postmaster = readFileSync(path.join(cluster!.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0].trim();
  const children = execFileSync('pgrep', ['-P', postmaster], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
  frozen = [postmaster, ...children].map(Number);
  for (const pid of frozen) process.kill(pid, 'SIGSTOP');
}

function thaw() {
  for (const pid of frozen) {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // Gone.
    }
  }
  frozen = [];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ── Batches and answers ─────────────────────────────────────────────────────────────────────

const run = Date.now().toString(36);
let seq = 0;
type Batch = { requestRef: string; records: Record<string, unknown>[] };

function batch(size: number): Batch {
  const requestRef = `req_faults_${run}_${seq++}`;
  const records = Array.from({ length: size }, (_, i) => ({
    eventId: `evt_faults_${run}_${seq++}`,
    occurredAt: '2026-11-30T12:00:00Z',
    requestRef,
    organization: 'acme',
    principal: 'user_193',
    server: 'billing-mcp',
    tool: { name: 'refund_payment', annotations: { readOnlyHint: false, destructiveHint: true } },
    summary: `Refund ${i + 1}.00 EUR on order ${requestRef}`,
    observed:
      i % 3 ? { sent: true, httpStatus: 200, result: { isError: false } } : { sent: true, clientError: 'timeout' },
  }));
  return { requestRef, records };
}

type Answer = {
  status: number;
  retryAfter: string | null;
  contentType: string;
  text: string;
  sentAt: number;
  answeredAt: number;
};
type Ingested = {
  accepted: number;
  duplicates: number;
  records: { eventId: string; id: string; classification: Record<string, unknown> }[];
};

/** One request to the API with the key; status 0 when the request itself failed (aborted, refused). */
async function call(pathAndQuery: string, init: { body?: unknown; signal?: AbortSignal } = {}): Promise<Answer> {
  const sentAt = Date.now();
  try {
    const res = await fetch(`${app!.origin}${pathAndQuery}`, {
      method: init.body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal: init.signal,
    });
    const text = await res.text();
    return {
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      contentType: res.headers.get('content-type') ?? '',
      text,
      sentAt,
      answeredAt: Date.now(),
    };
  } catch (err) {
    return { status: 0, retryAfter: null, contentType: '', text: String(err), sentAt, answeredAt: Date.now() };
  }
}

const post = (records: unknown[], signal?: AbortSignal) => call('/api/v1/outcomes', { body: { records }, signal });

/**
 * A client that retries on 503 until the batch is acknowledged. It waits 200 ms rather than the
 * Retry-After the server asks for (5 s), to keep the spec short; the server must not care.
 */
async function deliver(b: Batch, log: Answer[], patienceMs = 30_000): Promise<Ingested | null> {
  const giveUp = Date.now() + patienceMs;
  for (;;) {
    const a = await post(b.records);
    log.push(a);
    if (a.status === 200) return JSON.parse(a.text) as Ingested;
    if (a.status !== 503 || Date.now() > giveUp) return null;
    await sleep(200);
  }
}

// Database wording that must never reach a client.
const DATABASE_TEXT =
  /postgres|prisma|sql|ECONN|terminat|57P0|timeout exceeded|database system|relation|at .*\.(ts|js):\d+/i;

function expectUnavailable(a: Answer) {
  expect(a.status, a.text).toBe(503);
  expect(Number(a.retryAfter), 'Retry-After').toBeGreaterThan(0);
  expect(a.contentType).toContain('application/problem+json');
  expect(JSON.parse(a.text)).toMatchObject({
    status: 503,
    code: 'unavailable',
    type: expect.any(String),
    title: expect.any(String),
  });
  expect(a.text).not.toMatch(DATABASE_TEXT);
}

/** Rows per requestRef (and distinct event ids), for the batches given. */
async function storedPerBatch(batches: Batch[]): Promise<Map<string, { rows: number; events: number }>> {
  const { rows } = await sql!.query<{ request_ref: string; rows: number; events: number }>(
    `SELECT request_ref, count(*)::int AS rows, count(DISTINCT event_id)::int AS events
     FROM outcome_records WHERE request_ref = ANY($1::text[]) GROUP BY request_ref`,
    [batches.map((b) => b.requestRef)],
  );
  return new Map(rows.map((r) => [r.request_ref, { rows: r.rows, events: r.events }]));
}

async function storedIds(b: Batch): Promise<Map<string, string>> {
  const { rows } = await sql!.query<{ event_id: string; id: string }>(
    'SELECT event_id, id FROM outcome_records WHERE request_ref = $1',
    [b.requestRef],
  );
  return new Map(rows.map((r) => [r.event_id, r.id]));
}

/** Each batch is stored whole: every record once when acknowledged, all-or-nothing otherwise. */
async function expectWholeBatches(acknowledged: Batch[], others: Batch[] = []) {
  const stored = await storedPerBatch([...acknowledged, ...others]);
  for (const b of acknowledged)
    expect(stored.get(b.requestRef), b.requestRef).toEqual({ rows: b.records.length, events: b.records.length });
  for (const b of others) expect([0, b.records.length], b.requestRef).toContain(stored.get(b.requestRef)?.rows ?? 0);
}

async function expectAnswerMatchesStore(b: Batch, answer: Ingested) {
  const ids = await storedIds(b);
  expect(answer.records.map((r) => r.eventId)).toEqual(b.records.map((r) => r.eventId));
  for (const r of answer.records) expect(r.id, r.eventId).toBe(ids.get(r.eventId));
}

function expectNoUnexpectedErrors() {
  expect(app!.output()).not.toContain('[api] unexpected error');
}

// ── The cases ───────────────────────────────────────────────────────────────────────────────

test('the same batch from two clients at once, again and again: stored once, both answered 200 with the same ids', async () => {
  test.setTimeout(60_000);
  const batches: Batch[] = [];
  for (let i = 0; i < 25; i++) {
    const b = batch(10);
    batches.push(b);
    // Every other time the second client sends the same records in the opposite order.
    const [x, y] = await Promise.all([post(b.records), post(i % 2 ? [...b.records].reverse() : b.records)]);
    expect([x.status, y.status], `${x.text}\n${y.text}`).toEqual([200, 200]);
    const [ax, ay] = [JSON.parse(x.text) as Ingested, JSON.parse(y.text) as Ingested];
    expect(ax.accepted + ay.accepted).toBe(10);
    expect(ax.duplicates + ay.duplicates).toBe(10);
    const fromY = new Map(ay.records.map((r) => [r.eventId, r]));
    for (const r of ax.records) expect(fromY.get(r.eventId)).toEqual(r);
    await expectAnswerMatchesStore(b, ax);
  }
  await expectWholeBatches(batches);
  expectNoUnexpectedErrors();
});

test('a client that disconnects while sending the body: nothing stored; its retry stores each record once', async () => {
  const b = batch(20);
  const body = Buffer.from(JSON.stringify({ records: b.records }));
  const outcome = await new Promise<string>((resolve) => {
    const req = http.request(`${app!.origin}/api/v1/outcomes`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'content-length': String(body.length),
      },
    });
    req.on('response', (res) => {
      res.resume();
      resolve(`answered ${res.statusCode} before the body was complete`);
    });
    req.on('error', () => resolve('aborted'));
    req.write(body.subarray(0, Math.floor(body.length / 2)));
    setTimeout(() => {
      req.destroy();
      resolve('aborted');
    }, 300);
  });
  expect(outcome).toBe('aborted');
  await sleep(500); // time to store something, were the server to do so
  expect((await storedPerBatch([b])).get(b.requestRef)).toBeUndefined();

  const retry = await post(b.records);
  expect(retry.status, retry.text).toBe(200);
  expect(JSON.parse(retry.text)).toMatchObject({ accepted: 20, duplicates: 0 });
  await expectWholeBatches([b]);
  expectNoUnexpectedErrors();
});

test('a client that disconnects after sending, before the answer: the batch is stored whole or not at all; its retry counts the duplicates', async () => {
  const b = batch(20);
  // Hold inserts back so that the request is certainly still running when the client leaves.
  const lock = await sql!.connect();
  try {
    await lock.query('BEGIN');
    await lock.query('LOCK TABLE outcome_records IN EXCLUSIVE MODE');
    const controller = new AbortController();
    const pending = post(b.records, controller.signal);
    await expect
      .poll(
        async () =>
          (
            await sql!.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE pid <> pg_backend_pid() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO outcome_records%'`,
            )
          ).rows[0].n,
        { timeout: 10_000 },
      )
      .toBe(1);
    controller.abort();
    expect((await pending).status).toBe(0);
    await lock.query('COMMIT');
  } finally {
    lock.release();
  }
  // Let the server finish what it started without the client.
  await expect
    .poll(
      async () =>
        (
          await sql!.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND datname = current_database() AND state <> 'idle'`,
          )
        ).rows[0].n,
      { timeout: 10_000 },
    )
    .toBe(0);
  const before = (await storedPerBatch([b])).get(b.requestRef)?.rows ?? 0;
  expect([0, 20]).toContain(before);

  const retry = await post(b.records);
  expect(retry.status, retry.text).toBe(200);
  const answer = JSON.parse(retry.text) as Ingested;
  expect(answer).toMatchObject({ accepted: 20 - before, duplicates: before });
  await expectAnswerMatchesStore(b, answer);
  await expectWholeBatches([b]);
  expectNoUnexpectedErrors();
});

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
