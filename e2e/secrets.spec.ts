import { readFileSync } from 'node:fs';
import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { cli, secretFrom, signIn, users } from '../testing/e2e';
import { harness } from '../testing/env';
import { maskKinds, maskText, type MaskKind } from '../lib/redaction/mask';
import { MASKED, t } from '../lib/redaction/samples';
import { argsDigest } from '../lib/mcp/digest';

// Issue #7, "Hostile input": a secret of every kind the masker knows, planted in every free-text
// field of outcome records and of approval requests (their arguments too), decisions and
// revocations, never comes back through any read path: the API (lists, records, incidents as JSON
// and Markdown), the console pages a signed-in admin sees, and the server's own log (copied to a
// file by playwright.config.ts).
// Identifiers (requestRef, principal, organization…) are kept as sent by design: nothing is planted there.

const REF = `req_secrets_${Date.now().toString(36)}`;
const DIGEST = `sha256:${'5e'.repeat(32)}`;

/** The part of a sample that masking removes: what must never be read back. */
function secretOf(input: string, masked: string): string {
  let head = 0;
  while (head < input.length && input[head] === masked[head]) head++;
  let tail = 0;
  while (tail < input.length - head && input.at(-1 - tail) === masked.at(-1 - tail)) tail++;
  return input.slice(head, input.length - tail);
}

type Plant = { kind: MaskKind; text: string; secret: string };
// The shared samples, and a JWT short enough for the 100-character fields (the shared one is longer).
const SHORT: [MaskKind, string, string][] = [
  ['jwt', t('jwt ', 'eyJhbGciOiJIUzI1NiJ9', '.', 'eyJzdWIiOiI0MiJ9', '.', 'c2lnbmF0dXJlX3Rlc3Q'), 'jwt [masked:jwt]'],
];
const SAMPLES: Plant[] = [...MASKED, ...SHORT].map(([kind, text, masked]) => ({
  kind,
  text,
  secret: secretOf(text, masked),
}));
const planted = new Set<Plant>();

/** The first sample of `kind` that fits in a field of `max` characters (a real PEM where it fits). */
function fit(kind: MaskKind, max: number): string {
  const sample = SAMPLES.find((p) => p.kind === kind && p.text.length <= max);
  if (!sample) throw new Error(`no ${kind} sample of at most ${max} characters`);
  planted.add(sample);
  return sample.text;
}

// How a secret could still show: as sent, with its blanks collapsed, JSON-escaped, or a long
// enough run of letters and digits from inside it.
const renderings = (secret: string) => [
  ...new Set([
    secret,
    secret.replace(/\s+/g, ' '),
    JSON.stringify(secret).slice(1, -1),
    ...(secret.match(/[A-Za-z0-9]{10,}/g) ?? []),
  ]),
];

// How a read path could disguise it: Markdown backslash escapes, HTML entities, line breaks.
const views = (text: string) => {
  const unescaped = text.replace(/\\(?=[^\w\s])/g, '');
  const decoded = unescaped.replace(
    /&(amp|lt|gt|quot|#x27|#39);/g,
    (_m, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#x27': "'", '#39': "'" })[e]!,
  );
  return [text, unescaped, decoded, decoded.replace(/\s+/g, ' ')];
};

const seen: { where: string; text: string }[] = [];
const read = (where: string, text: string) => seen.push({ where, text });

function expectNoSecretIn(where: string, text: string) {
  for (const view of views(text)) {
    for (const p of planted) {
      for (const r of renderings(p.secret))
        expect(view.includes(r), `${p.kind} secret (${JSON.stringify(r)}) in ${where}`).toBe(false);
    }
  }
}

let writeKey = '';
let reviewerToken = '';
let adminToken = '';
const recordIds: string[] = [];
const approvalIds: string[] = [];
const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });

async function json(request: APIRequestContext, where: string, url: string, token: string) {
  const res = await request.get(url, { headers: bearer(token) });
  expect(res.status(), `${url}: ${await res.text()}`).toBe(200);
  const text = await res.text();
  read(where, text);
  return url.includes('format=markdown') ? text : JSON.parse(text);
}

test.beforeAll(async ({ request }) => {
  writeKey = secretFrom(
    cli(
      'apikeys:create',
      '--name',
      `e2e-secrets-${Date.now()}`,
      '--scopes',
      'outcomes:write,outcomes:read,approvals:request',
    ),
    'cs_live_',
  );
  reviewerToken = secretFrom(cli('tokens:create', '--email', users.reviewer.email, '--name', 'e2e-secrets'), 'cs_pat_');
  adminToken = secretFrom(cli('tokens:create', '--email', users.admin.email, '--name', 'e2e-secrets'), 'cs_pat_');
  for (const [, text, masked] of SHORT) expect(maskText(text).text).toBe(masked);

  // One outcome record per kind, the secret in each of its free-text fields.
  const records = maskKinds.map((kind, i) => ({
    eventId: `evt_secrets_${Date.now().toString(36)}_${i}`,
    occurredAt: new Date(Date.UTC(2026, 10, 30, 12, 0, i)).toISOString(),
    requestRef: REF,
    organization: 'acme',
    principal: 'user_193',
    agent: fit(kind, 200),
    server: 'billing-mcp',
    tool: {
      name: 'refund_payment',
      annotations: { title: fit(kind, 200), readOnlyHint: false, destructiveHint: true },
    },
    mcpRequestId: fit(kind, 200),
    argsDigest: DIGEST,
    summary: `Refund failed: ${fit(kind, 480)}`,
    observed: { sent: true, httpStatus: 200, result: { isError: true, errorCategory: fit(kind, 100) } },
  }));
  const posted = await request.post('/api/v1/outcomes', { headers: bearer(writeKey), data: { records } });
  expect(posted.status(), await posted.text()).toBe(200);
  recordIds.push(...(await posted.json()).records.map((r: { id: string }) => r.id));

  // One approval request per kind, with a reviewer's decision and, for every other one, an admin's revocation.
  for (const [i, kind] of maskKinds.entries()) {
    // The arguments too: the reviewers read them (masked) on the request page and in the API.
    const args = { order_id: `44${i}`, note: fit(kind, 2000), notify: [fit(kind, 200)] };
    const body = {
      requestRef: REF,
      organization: 'acme',
      principal: 'user_193',
      agent: fit(kind, 200),
      server: 'billing-mcp',
      tool: { name: 'refund_payment', annotations: { title: fit(kind, 200), destructiveHint: true } },
      arguments: args,
      argsDigest: argsDigest(args),
      summary: `Refund because ${fit(kind, 480)}`,
      resource: { type: fit(kind, 100), id: fit(kind, 200) },
    };
    const created = await request.post('/api/v1/approvals', {
      headers: { ...bearer(writeKey), 'idempotency-key': `secrets-${REF}-${i}` },
      data: body,
    });
    expect(created.status(), await created.text()).toBe(201);
    const { id, version } = await created.json();
    approvalIds.push(id);
    const decided = await request.post(`/api/v1/approvals/${id}/decisions`, {
      headers: bearer(reviewerToken),
      data: { decision: 'approve', reason: `Looks fine: ${fit(kind, 900)}`, version },
    });
    expect(decided.status(), await decided.text()).toBe(200);
    read(`decision reply (${kind})`, await decided.text());
    if (i % 2 === 0) {
      const revoked = await request.post(`/api/v1/approvals/${id}/revoke`, {
        headers: bearer(adminToken),
        data: { reason: `Withdrawn: ${fit(kind, 900)}` },
      });
      expect(revoked.status(), await revoked.text()).toBe(200);
      read(`revoke reply (${kind})`, await revoked.text());
    }
  }
});

test('the check itself finds a secret however a read path escapes it', () => {
  const email = SAMPLES.find((p) => p.kind === 'email')!;
  const pem = SAMPLES.find((p) => p.kind === 'private_key')!;
  planted.add(email).add(pem);
  const leaks = [
    `<td>${email.secret}</td>`,
    `| ${email.secret.replace(/([@.+])/g, '\\$1')} |`, // Markdown-escaped
    JSON.stringify({ summary: pem.secret }), // newlines as \n
    `key ${pem.secret.replace(/\n/g, ' ')}`, // newlines collapsed
  ];
  for (const leak of leaks) expect(() => expectNoSecretIn('a leak', leak)).toThrow();
  expect(() => expectNoSecretIn('masked text', '[masked:email] [masked:private_key]')).not.toThrow();
});

test('the API never returns a planted secret', async ({ request }) => {
  const list = await json(request, 'GET /api/v1/outcomes', `/api/v1/outcomes?requestRef=${REF}&limit=200`, writeKey);
  expect(list.items).toHaveLength(maskKinds.length);
  for (const id of recordIds) await json(request, `GET /api/v1/outcomes/${id}`, `/api/v1/outcomes/${id}`, writeKey);
  const incident = await json(request, 'GET /api/v1/incidents (JSON)', `/api/v1/incidents/${REF}`, writeKey);
  expect(incident.approvals).toHaveLength(maskKinds.length);
  await json(
    request,
    'GET /api/v1/incidents (Markdown)',
    `/api/v1/incidents/${REF}?format=markdown&download=1`,
    writeKey,
  );
  await json(request, 'GET /api/v1/incidents as a person', `/api/v1/incidents/${REF}?format=markdown`, adminToken);
  await json(request, 'GET /api/v1/approvals', `/api/v1/approvals?requestRef=${REF}&limit=200`, writeKey);
  for (const id of approvalIds) await json(request, `GET /api/v1/approvals/${id}`, `/api/v1/approvals/${id}`, writeKey);

  for (const { where, text } of seen) {
    // The planted text is there, masked: the reads did include it.
    expect(
      views(text).some((v) => v.includes('[masked:')),
      `nothing masked in ${where}`,
    ).toBe(true);
    expectNoSecretIn(where, text);
  }
  // Each kind was planted and masked as its own kind.
  const all = seen.map((s) => s.text).join('\n');
  for (const kind of maskKinds) expect(all.includes(`[masked:${kind}]`), `no [masked:${kind}] read back`).toBe(true);
});

async function pageText(page: Page, url: string): Promise<string> {
  const res = await page.goto(url);
  expect(res?.status(), url).toBe(200);
  // The queue and an open incident fill in live data after load.
  if (url.startsWith('/approvals') || url.startsWith('/incidents')) await page.waitForLoadState('networkidle');
  return `${await page.content()}\n${await page.locator('body').innerText()}`;
}

test('the console pages never show a planted secret', async ({ page }) => {
  test.setTimeout(120_000);
  await signIn(page, 'admin');
  const urls = [
    `/outcomes?requestRef=${REF}`,
    `/incidents/${REF}`,
    '/approvals',
    '/admin/authorizations',
    '/admin/audit',
    '/',
    ...recordIds.map((id) => `/outcomes/${id}`),
    ...approvalIds.map((id) => `/approvals/${id}`),
  ];
  for (const url of urls) {
    const text = await pageText(page, url);
    if (!['/admin/authorizations', '/admin/audit', '/'].includes(url))
      expect(
        views(text).some((v) => v.includes('[masked:')),
        `nothing masked on ${url}`,
      ).toBe(true);
    expectNoSecretIn(url, text);
  }
});

test('the server log never holds a planted secret', () => {
  const file = harness.e2eServerLog();
  expect(file, 'playwright.config.ts sets E2E_SERVER_LOG').toBeTruthy();
  const log = readFileSync(file!, 'utf8');
  expect(log).toContain('[server-log]'); // the copy works: the server's own lines are there
  expectNoSecretIn('the server log', log);
});
