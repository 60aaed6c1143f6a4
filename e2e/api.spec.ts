import { expect, test } from '../testing/api-contract';
import { cli, expectProblem, secretFrom, users } from '../testing/e2e';

let adminToken = '';
let readKey = '';

test.beforeAll(() => {
  adminToken = secretFrom(cli('tokens:create', '--email', users.admin.email, '--name', 'e2e-api'), 'cs_pat_');
  readKey = secretFrom(
    cli('apikeys:create', '--name', `e2e-read-${Date.now()}`, '--scopes', 'outcomes:read'),
    'cs_live_',
  );
});

test.describe('machine API guard', () => {
  test('no credential: 401 problem+json with a Bearer challenge', async ({ request }) => {
    const res = await request.get('/api/v1/me');
    await expectProblem(res, 401, 'unauthenticated');
    expect(res.headers()['www-authenticate']).toBe('Bearer');
  });

  test('an unknown or malformed credential: 401', async ({ request }) => {
    for (const authorization of [
      'Bearer cs_live_nope',
      'Bearer ',
      'Basic YWRtaW46eA==',
      'Bearer cs_pat_' + 'x'.repeat(43),
    ]) {
      await expectProblem(await request.get('/api/v1/me', { headers: { authorization } }), 401, 'unauthenticated');
    }
  });

  test('small answers go uncompressed; large ones are gzipped', async ({ request }) => {
    const headers = { authorization: `Bearer ${readKey}`, 'accept-encoding': 'gzip' };
    const small = await request.get('/api/v1/me', { headers });
    expect(small.status()).toBe(200);
    expect(small.headers()['content-encoding']).toBeUndefined();
    expect(small.headers()['cache-control']).toBe('no-store, no-transform');
    // The demo data has hundreds of records: a page of 100 is far over 1 KiB.
    const large = await request.get('/api/v1/outcomes?limit=100', { headers });
    expect(large.status()).toBe(200);
    expect(large.headers()['content-encoding']).toBe('gzip');
    expect((await large.body()).length).toBeGreaterThan(16 * 1024);
    expect((await large.json()).items).toHaveLength(100);
  });

  test('x-middleware-subrequest never bypasses the check', async ({ request }) => {
    const headers = { 'x-middleware-subrequest': 'middleware:middleware:middleware:middleware:middleware' };
    await expectProblem(await request.get('/api/v1/me', { headers }), 401, 'unauthenticated');
    await expectProblem(await request.get('/api/v1/audit/verify', { headers }), 401, 'unauthenticated');
  });

  test('a key without the needed scope or role: 403', async ({ request }) => {
    const res = await request.get('/api/v1/audit/verify', { headers: { authorization: `Bearer ${readKey}` } });
    await expectProblem(res, 403, 'forbidden');
  });

  test('a personal token acts as its admin', async ({ request }) => {
    const me = await request.get('/api/v1/me', { headers: { authorization: `Bearer ${adminToken}` } });
    expect(await me.json()).toMatchObject({ kind: 'user', email: users.admin.email, role: 'admin' });
    const audit = await request.get('/api/v1/audit/verify', { headers: { authorization: `Bearer ${adminToken}` } });
    expect(audit.status()).toBe(200);
    expect(await audit.json()).toMatchObject({
      ok: true,
      entries: expect.any(Number),
      head: expect.stringMatching(/^sha256:/),
    });
  });

  test('malformed JSON: 400', async ({ request }) => {
    const res = await request.post('/api/v1/servers/trust', {
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      data: Buffer.from('{"name": '),
    });
    await expectProblem(res, 400, 'invalid_input');
  });

  test('a body over 1 MiB: 413, whether declared or not', async ({ request }) => {
    const big = JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10) });
    await expectProblem(
      await request.post('/api/v1/servers/trust', {
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        data: big,
      }),
      413,
      'payload_too_large',
    );
  });

  test('schema violations: 422 naming each field', async ({ request }) => {
    const res = await request.post('/api/v1/servers/trust', {
      headers: { authorization: `Bearer ${adminToken}` },
      data: { name: 'bad name with spaces' },
    });
    const body = await expectProblem(res, 422, 'invalid_input');
    expect(body.errors).toEqual([{ path: 'name', message: expect.stringContaining('letters') }]);
    const missing = await expectProblem(
      await request.post('/api/v1/servers/trust', { headers: { authorization: `Bearer ${adminToken}` }, data: {} }),
      422,
      'invalid_input',
    );
    expect(missing.errors[0].path).toBe('name');
  });

  test('a valid request through the same guard succeeds and is idempotent', async ({ request }) => {
    const name = `billing-mcp-${Date.now()}`;
    for (let i = 0; i < 2; i++) {
      const res = await request.post('/api/v1/servers/trust', {
        headers: { authorization: `Bearer ${adminToken}` },
        data: { name },
      });
      expect(res.status()).toBe(200);
      expect(await res.json()).toMatchObject({ name, trustedBy: users.admin.email });
    }
  });

  test('a session-cookie state change from a foreign or missing Origin: 403', async ({ page }) => {
    const { signIn } = await import('../testing/e2e');
    await signIn(page, 'admin');
    for (const origin of ['https://evil.example', 'null']) {
      const res = await page.request.post('/api/v1/servers/trust', {
        headers: { origin },
        data: { name: 'x-origin-test' },
      });
      await expectProblem(res, 403, 'forbidden');
    }
    const same = await page.request.post('/api/v1/servers/trust', {
      headers: { origin: new URL(page.url()).origin },
      data: { name: `same-origin-${Date.now()}` },
    });
    expect(same.status()).toBe(200);
  });
});
