// OTLP exporters back off on 429 and 503 with Retry-After: the OTLP route answers as every
// /api/v1 route does when a key sends faster than its limit (set low for this file only).
import { afterAll, beforeAll, expect, it, vi } from 'vitest';

await vi.hoisted(async () => {
  const { setEnv } = await import('@/testing/env');
  setEnv({ RATE_LIMIT_API_KEY_PER_SECOND: '1', RATE_LIMIT_API_KEY_BURST: '2' });
});
vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

import { cli } from '@/lib/auth/actor';
import { createApiKey } from '@/lib/server/credentials/credentials';
import { uniq } from '@/testing/factories';
import { startOtlpConsole, type Console } from '@/testing/otlp';

let console_: Console;
let key = '';
beforeAll(async () => {
  console_ = await startOtlpConsole();
  const created = await createApiKey(cli, { name: uniq('otlp'), scopes: ['outcomes:write'] });
  if (!created.ok) throw new Error('set-up: API key');
  key = created.value.secret;
});
afterAll(() => console_.close());

it('past the key limit: 429 with Retry-After', async () => {
  const statuses: number[] = [];
  let retryAfter: string | null = null;
  for (let i = 0; i < 4; i++) {
    const res = await fetch(`${console_.origin}/api/v1/otlp/v1/traces`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: '{"resourceSpans":[]}',
    });
    statuses.push(res.status);
    if (res.status === 429) retryAfter = res.headers.get('retry-after');
    await res.arrayBuffer();
  }
  expect(statuses.slice(0, 2)).toEqual([200, 200]);
  expect(statuses.slice(2)).toContain(429);
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
});
