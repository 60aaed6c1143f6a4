import { expect, test } from '@playwright/test';
import { classifyRecord } from '@/lib/outcomes/classify';
import { categories, deliveries } from '@/lib/outcomes/schemas';
import { MASKED } from '@/lib/redaction/samples';
import { DEMO_TRUSTED_SERVERS, demoOutcomes } from '../scripts/demo-outcomes';
import { cli, secretFrom } from '../testing/e2e';

// Every row of DESIGN.md's table and every masking kind, through the real HTTP API: what the
// server answers and stores must be what the shared classifier and masking say.
test('every classification row and every masking kind, through the API', async ({ request }) => {
  const run = `cov${Date.now().toString(36)}`;
  const key = secretFrom(
    cli('apikeys:create', '--name', `e2e-${run}`, '--scopes', 'outcomes:write,outcomes:read'),
    'cs_live_',
  );
  const headers = { authorization: `Bearer ${key}` };

  const stories = demoOutcomes(Date.now(), 0).map((r) => ({
    ...r,
    eventId: `${run}_${r.eventId}`,
    requestRef: `${run}_${r.requestRef}`,
  }));
  const res = await request.post('/api/v1/outcomes', { headers, data: { records: stories } });
  expect(res.status()).toBe(200);
  const body = await res.json();
  expect(body.accepted).toBe(stories.length);
  const seen = new Set<string>();
  stories.forEach((r, i) => {
    const expected = classifyRecord(r, DEMO_TRUSTED_SERVERS.includes(r.server));
    expect(body.records[i].classification, r.eventId).toEqual(expected);
    seen.add(`${expected.delivery}/${expected.category}`);
  });
  const categoriesSeen = new Set([...seen].map((s) => s.split('/')[1]));
  expect(categories.filter((c) => !categoriesSeen.has(c))).toEqual(['not_sent']);
  expect(new Set([...seen].map((s) => s.split('/')[0]))).toEqual(new Set(deliveries));

  const ref = `${run}_masking`;
  const masked = MASKED.map(([kind, input, output], i) => ({
    kind,
    output,
    record: {
      ...stories[0],
      eventId: `${run}_mask_${i}`,
      requestRef: ref,
      summary: input,
    },
  }));
  for (const m of masked) expect(m.record.summary.length, m.kind).toBeLessThanOrEqual(500);
  const posted = await request.post('/api/v1/outcomes', { headers, data: { records: masked.map((m) => m.record) } });
  expect(posted.status()).toBe(200);
  const listed = await request.get(`/api/v1/outcomes?requestRef=${ref}&limit=200`, { headers });
  const items: { eventId: string; summary: string }[] = (await listed.json()).items;
  expect(items).toHaveLength(masked.length);
  for (const m of masked) {
    const item = items.find((it) => it.eventId === m.record.eventId);
    expect(item?.summary, m.kind).toBe(m.output);
  }
});
