import { readFileSync } from 'node:fs';
import http from 'node:http';
import { expect, test, type APIResponse } from '@playwright/test';
import { cli, secretFrom } from '../testing/e2e';
import { harness } from '../testing/env';
import { config } from '../lib/config';

// Issue #7, "Hostile input", through the built server: what the in-process property tests
// (app/api/v1/hostile-*.test.ts) cover, checked once where Next's own parsing and routing sit in
// front — deep nesting, bodies over 1 MiB declared or chunked, NUL and half surrogate pairs, bytes
// that are not UTF-8, hostile path segments, CR/LF in a reference that becomes a file name — and
// the server still answers and logged no unexpected error.

let key = '';
const bearer = () => ({ authorization: `Bearer ${key}` });
const port = config().E2E_PORT;
const n = Date.now().toString(36);

test.beforeAll(() => {
  key = secretFrom(
    cli('apikeys:create', '--name', `e2e-hostile-${n}`, '--scopes', 'outcomes:write,outcomes:read'),
    'cs_live_',
  );
});

const record = (over: Record<string, unknown> = {}) => ({
  eventId: `evt_hostile_${n}_${Math.random().toString(36).slice(2)}`,
  occurredAt: '2026-11-30T12:00:00Z',
  requestRef: `req_hostile_${n}`,
  organization: 'acme',
  principal: 'user_193',
  server: 'billing-mcp',
  tool: { name: 'refund_payment' },
  summary: 'Refund 40.00 EUR on order 4411',
  observed: { sent: true, httpStatus: 200 },
  ...over,
});

async function expectProblem(res: APIResponse, status: number, path?: string) {
  expect(res.status(), await res.text()).toBe(status);
  expect(res.headers()['content-type']).toBe('application/problem+json');
  const body = await res.json();
  expect(body).toMatchObject({
    status,
    type: expect.any(String),
    title: expect.any(String),
    detail: expect.any(String),
  });
  expect(JSON.stringify(body)).not.toMatch(/at .*\.(ts|js):\d+|prisma|postgres|syntax/i);
  if (path) expect(body.errors.map((e: { path: string }) => e.path)).toContain(path);
}

const postRaw = (data: string | Buffer) => ({
  headers: { ...bearer(), 'content-type': 'application/json' },
  data: typeof data === 'string' ? Buffer.from(data) : data,
});

/** A chunked POST with no Content-Length, through node:http (Playwright's client always sends a length). */
function postChunked(path: string, chunks: number, size: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        headers: { ...bearer(), 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      },
      (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', (err) =>
      (err as NodeJS.ErrnoException).code === 'EPIPE' || (err as NodeJS.ErrnoException).code === 'ECONNRESET'
        ? undefined
        : reject(err),
    );
    const piece = Buffer.alloc(size, 'x');
    let sent = 0;
    const more = () => {
      while (sent < chunks) {
        sent++;
        if (!req.write(piece)) return void req.once('drain', more);
      }
      req.end();
    };
    more();
  });
}

test.describe('hostile bodies and paths against the built server', () => {
  test('100,000 levels of nesting: 422 naming where, not a crash', async ({ request }) => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    await expectProblem(await request.post('/api/v1/outcomes', postRaw(deep)), 422, '(body)');
    const inField = JSON.stringify({ records: [record()] }).replace('"Refund 40.00 EUR on order 4411"', deep);
    await expectProblem(await request.post('/api/v1/outcomes', postRaw(inField)), 422, 'records.0.summary');
  });

  test('over 1 MiB: 413 whether declared or sent chunked without a length', async ({ request }) => {
    await expectProblem(
      await request.post(
        '/api/v1/outcomes',
        postRaw(JSON.stringify({ records: [record({ summary: 'x'.repeat(1024 * 1024) })] })),
      ),
      413,
    );
    const chunked = await postChunked('/api/v1/outcomes', 48, 32 * 1024);
    expect(chunked.status, chunked.body).toBe(413);
    expect(JSON.parse(chunked.body)).toMatchObject({ code: 'payload_too_large' });
  });

  test('NUL and half a surrogate pair: 422 naming the field; bytes that are not UTF-8: 400', async ({ request }) => {
    for (const escape of ['\\u0000', '\\ud800', '\\udfff']) {
      const body = JSON.stringify({ records: [record()] }).replace('on order 4411', `on order ${escape}4411`);
      await expectProblem(await request.post('/api/v1/outcomes', postRaw(body)), 422, 'records.0.summary');
    }
    const text = JSON.stringify({ records: [record()] });
    const at = text.indexOf('4411');
    await expectProblem(
      await request.post(
        '/api/v1/outcomes',
        postRaw(
          Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from(text.slice(at))]),
        ),
      ),
      400,
    );
  });

  test('incident references: NUL or over 200 characters 422, unknown 404', async ({ request }) => {
    await expectProblem(await request.get('/api/v1/incidents/a%00b', { headers: bearer() }), 422, 'requestRef');
    await expectProblem(
      await request.get(`/api/v1/incidents/${'x'.repeat(201)}?format=markdown`, { headers: bearer() }),
      422,
      'requestRef',
    );
    await expectProblem(await request.get(`/api/v1/incidents/req_unknown_${n}`, { headers: bearer() }), 404);
  });

  test('a path that does not percent-decode: 400 (Next answered a bare 500), for the API and the console', async ({
    request,
  }) => {
    for (const path of [
      '/api/v1/incidents/%ED%A0%80',
      '/api/v1/incidents/%E0%A4%A',
      '/api/v1/outcomes/%FF',
      '/api/v1/approvals/%C3%28/decisions',
    ]) {
      await expectProblem(await request.get(path, { headers: bearer() }), 400);
    }
    const page = await request.get('/incidents/%ED%A0%80');
    expect(page.status()).toBe(400);
    // A valid escape still reaches the route.
    await expectProblem(await request.get('/api/v1/incidents/r%C3%A9f', { headers: bearer() }), 404);
  });

  test('a path under /api that names no route: 404 problem+json for every method, not the HTML page', async ({
    request,
  }) => {
    for (const path of ['/api/v1/nope', '/api/v2/outcomes', '/api/v1/approvals/x/y/z', '/api/nope']) {
      await expectProblem(await request.get(path), 404);
      await expectProblem(await request.post(path, { data: {} }), 404);
      await expectProblem(await request.delete(path, { headers: bearer() }), 404);
    }
    // The API's own routes still answer (no credential: 401), and a page path still gets the page.
    await expectProblem(await request.get('/api/v1/me'), 401);
    expect((await request.get('/no-such-page')).headers()['content-type']).toContain('text/html');
  });

  test('a reference with CR/LF and quotes: stored as sent, exported under one safe file name', async ({ request }) => {
    const requestRef = `req_${n}\r\nX-Injected: yes"; filename="evil.sh`;
    expect(
      (
        await request.post('/api/v1/outcomes', { headers: bearer(), data: { records: [record({ requestRef })] } })
      ).status(),
    ).toBe(200);
    const res = await request.get(`/api/v1/incidents/${encodeURIComponent(requestRef)}?format=markdown&download=1`, {
      headers: bearer(),
    });
    expect(res.status(), await res.text()).toBe(200);
    expect(res.headers()['content-disposition']).toMatch(/^attachment; filename="incident-[\w.-]+\.md"$/);
    expect(res.headers()['x-injected']).toBeUndefined();
    const json = await (
      await request.get(`/api/v1/incidents/${encodeURIComponent(requestRef)}`, { headers: bearer() })
    ).json();
    expect(json.requestRef).toBe(requestRef);
  });

  test('afterwards the server answers as usual, and logged no unexpected error', async ({ request }) => {
    expect((await request.get('/api/v1/me', { headers: bearer() })).status()).toBe(200);
    expect(
      (await request.post('/api/v1/outcomes', { headers: bearer(), data: { records: [record()] } })).status(),
    ).toBe(200);
    const log = readFileSync(harness.e2eServerLog()!, 'utf8');
    expect(log).toContain('[server-log]');
    expect(log).not.toContain('[api] unexpected error');
  });
});
