import { createServer as createHttpServer } from 'node:http';
import { freePort } from '../../scripts/lib/embedded-postgres';
import { describe, expect, it } from 'vitest';
import { outcomeSchema, type Outcome } from '../outcomes/schemas';
import { OutcomeReporter, type ReporterEvent, type ReporterOptions } from './reporter';

let seq = 0;
const record = (over: Partial<Outcome> = {}): Outcome =>
  outcomeSchema.parse({
    eventId: `evt_${seq++}`,
    occurredAt: '2026-11-30T12:00:00Z',
    requestRef: 'req_1',
    organization: 'acme',
    principal: 'user_193',
    server: 'billing-mcp',
    tool: { name: 'get_order' },
    observed: { sent: true, result: { isError: false, outputValidation: 'valid' } },
    ...over,
  });

type Reply = { status: number; body?: unknown; headers?: Record<string, string> } | 'network';

/** A fake Countersign: answers from a script, then 200; remembers every batch. */
function fakeServer(script: Reply[] = []) {
  const batches: string[][] = [];
  const times: number[] = [];
  const fetch = async (_url: string | URL, init?: RequestInit) => {
    times.push(Date.now());
    const records = (JSON.parse(String(init?.body)) as { records: Outcome[] }).records;
    batches.push(records.map((r) => r.eventId));
    const reply = script.shift() ?? { status: 200, body: { accepted: records.length, duplicates: 0, records: [] } };
    if (reply === 'network')
      throw new TypeError('fetch failed', { cause: Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }) });
    return new Response(JSON.stringify(reply.body ?? {}), { status: reply.status, headers: reply.headers });
  };
  return { fetch, batches, times };
}

const reporter = (fake: ReturnType<typeof fakeServer>, over: Partial<ReporterOptions> = {}) => {
  const events: ReporterEvent[] = [];
  const r = new OutcomeReporter({
    url: 'http://countersign.test',
    apiKey: 'cs_live_test',
    fetch: fake.fetch,
    flushIntervalMs: 20,
    backoff: { initialMs: 10, maxMs: 80 },
    onEvent: (e) => events.push(e),
    ...over,
  });
  return { r, events };
};

const until = async (check: () => boolean, ms = 2000) => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((res) => setTimeout(res, 5));
  }
};

describe('OutcomeReporter', () => {
  it('enqueue returns at once and sends in the background after the interval', async () => {
    const fake = fakeServer();
    const { r } = reporter(fake, { flushIntervalMs: 50 });
    const a = record();
    const b = record();
    r.enqueue(a);
    r.enqueue(b);
    expect(fake.batches).toEqual([]);
    expect(r.stats().buffered).toBe(2);
    await until(() => fake.batches.length === 1);
    expect(fake.batches[0]).toEqual([a.eventId, b.eventId]);
    await until(() => r.stats().sent === 2);
    expect(r.stats()).toMatchObject({ buffered: 0, sent: 2, dropped: 0, rejected: 0 });
  });

  it('a full batch goes at once, in batches of batchSize, in order', async () => {
    const fake = fakeServer();
    const { r } = reporter(fake, { batchSize: 2, flushIntervalMs: 10_000 });
    const records = [record(), record(), record(), record(), record()];
    records.forEach((x) => r.enqueue(x));
    await until(() => fake.batches.length >= 2);
    expect(fake.batches.slice(0, 2)).toEqual([
      [records[0].eventId, records[1].eventId],
      [records[2].eventId, records[3].eventId],
    ]);
    const flushed = await r.flush();
    expect(flushed).toEqual({ ok: true, buffered: 0 });
    expect(fake.batches.flat()).toEqual(records.map((x) => x.eventId));
  });

  it('retries 5xx, 429 and network errors with growing backoff, keeping order, then delivers', async () => {
    const fake = fakeServer([{ status: 503 }, 'network', { status: 429 }, { status: 500 }]);
    const { r, events } = reporter(fake, { random: () => 0.5 });
    const a = record();
    r.enqueue(a);
    await until(() => r.stats().sent === 1);
    expect(fake.batches).toEqual([[a.eventId], [a.eventId], [a.eventId], [a.eventId], [a.eventId]]);
    expect(r.stats().failedAttempts).toBe(4);
    const waits = events.filter((e) => e.kind === 'send_failed').map((e) => (e as { retryInMs: number }).retryInMs);
    expect(waits).toEqual([13, 25, 50, 80]);
    const gaps = fake.times.slice(1).map((t, i) => t - fake.times[i]);
    expect(gaps.every((g, i) => g >= waits[i] - 2)).toBe(true);
  });

  it('honours Retry-After, within the maximum wait', async () => {
    const fake = fakeServer([{ status: 429, headers: { 'retry-after': '1' } }]);
    const { r, events } = reporter(fake, { backoff: { initialMs: 10, maxMs: 60 } });
    r.enqueue(record());
    await until(() => r.stats().sent === 1);
    expect(events[0]).toMatchObject({ kind: 'send_failed', status: 429, retryInMs: 60 });
  });

  it('a 422 naming records drops those and sends the rest; other 4xx drop the batch', async () => {
    const fake = fakeServer([
      { status: 422, body: { code: 'invalid_input', errors: [{ path: 'records.1.summary', message: 'too long' }] } },
      { status: 400, body: { code: 'invalid_input' } },
    ]);
    const { r, events } = reporter(fake, { flushIntervalMs: 10_000 });
    const [a, b, c] = [record(), record(), record()];
    [a, b, c].forEach((x) => r.enqueue(x));
    await r.flush();
    expect(fake.batches.slice(0, 2)).toEqual([
      [a.eventId, b.eventId, c.eventId],
      [a.eventId, c.eventId],
    ]);
    expect(r.stats()).toMatchObject({ rejected: 3, sent: 0, buffered: 0 });
    expect(events.filter((e) => e.kind === 'rejected')).toEqual([
      { kind: 'rejected', status: 422, code: 'invalid_input', records: 1 },
      { kind: 'rejected', status: 400, code: 'invalid_input', records: 2 },
    ]);
  });

  it('a 413 halves the batch and sends it in parts', async () => {
    const fake = fakeServer([{ status: 413 }]);
    const { r } = reporter(fake, { flushIntervalMs: 10_000 });
    const records = [record(), record(), record(), record()];
    records.forEach((x) => r.enqueue(x));
    const flushed = await r.flush();
    expect(flushed.ok).toBe(true);
    expect(fake.batches.map((b) => b.length)).toEqual([4, 2, 2]);
    expect(r.stats().sent).toBe(4);
  });

  it('bounded: past maxBuffered the oldest are dropped and counted', async () => {
    const fake = fakeServer(['network', 'network', 'network']);
    const { r, events } = reporter(fake, {
      maxBuffered: 3,
      flushIntervalMs: 10_000,
      backoff: { initialMs: 10_000, maxMs: 10_000 },
    });
    const records = Array.from({ length: 5 }, () => record());
    records.forEach((x) => r.enqueue(x));
    expect(r.stats()).toMatchObject({ buffered: 3, dropped: 2 });
    expect(events.filter((e) => e.kind === 'dropped')).toHaveLength(2);
    await r.flush(); // fails: still buffered, nothing lost beyond the bound
    expect(r.stats()).toMatchObject({ buffered: 3, dropped: 2 });
    fake.batches.length = 0;
    await r.flush(); // the second scripted failure
    await r.flush(); // the third
    const flushed = await r.flush();
    expect(flushed.ok).toBe(true);
    expect(fake.batches.at(-1)).toEqual(records.slice(2).map((x) => x.eventId));
  });

  it('flush stops at the first failure and says what is left; close retries until its deadline', async () => {
    const fake = fakeServer(['network', { status: 502 }]);
    const { r } = reporter(fake, { flushIntervalMs: 10_000 });
    r.enqueue(record());
    expect(await r.flush()).toEqual({ ok: false, buffered: 1 });
    expect(await r.close(2000)).toEqual({ ok: true, buffered: 0 });
    // Closed: new records are not taken.
    r.enqueue(record());
    expect(r.stats()).toMatchObject({ buffered: 0, dropped: 1, sent: 1 });
  });

  it('never throws into the caller, even when the listener throws', async () => {
    const fake = fakeServer(['network']);
    const { r } = reporter(fake, {
      onEvent: () => {
        throw new Error('listener bug');
      },
      maxBuffered: 1,
    });
    expect(() => {
      r.enqueue(record());
      r.enqueue(record());
    }).not.toThrow();
    await expect(r.flush()).resolves.toMatchObject({ ok: false });
  });

  it('against a real closed port: records stay buffered; against a real server they arrive', async () => {
    const port = await freePort(); /* nothing listens there */
    const down = new OutcomeReporter({ url: `http://127.0.0.1:${port}`, apiKey: 'cs_live_x', flushIntervalMs: 10_000 });
    down.enqueue(record());
    expect(await down.flush()).toEqual({ ok: false, buffered: 1 });

    const received: unknown[] = [];
    const server = createHttpServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push({ path: req.url, auth: req.headers.authorization, body: JSON.parse(body) });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"accepted":1,"duplicates":0,"records":[]}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const up = new OutcomeReporter({
      url: `http://127.0.0.1:${(server.address() as { port: number }).port}/prefix`,
      apiKey: 'cs_live_x',
      flushIntervalMs: 10_000,
    });
    const r = record();
    up.enqueue(r);
    expect(await up.flush()).toEqual({ ok: true, buffered: 0 });
    expect(received).toEqual([{ path: '/prefix/api/v1/outcomes', auth: 'Bearer cs_live_x', body: { records: [r] } }]);
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});
