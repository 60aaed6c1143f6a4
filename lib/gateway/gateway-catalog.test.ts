// The tool catalog through the gateway (docs/catalog.md "The gateway's side"): each tool's full
// definition goes to policy/evaluate; one whose definition changed since it was accepted is held
// by the console, and the gateway hides it and refuses calls to it (tool_changed) until an admin
// accepts it. Against a server on SDK v2 whose tool description is switched at run time, with the
// fake console (first sighting accepted, a different definition held until `acceptTool`), for an
// SDK v2 client in both eras over HTTP, and over stdio (the gateway's stdio mode in front of
// testing/mcp-catalog-stdio.ts, whose description a call changes).
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { randomUUID } from 'node:crypto';
import { Client, InMemoryTransport, StreamableHTTPClientTransport, type Tool } from '@modelcontextprotocol/client';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { OutcomeReporter } from '@/lib/mcp/reporter';
import { fakeCountersign } from '@/testing/fake-countersign';
import { closedAfterEach } from '@/testing/gateway-fixtures';
import { FORECAST_AFTER, FORECAST_BEFORE, switchableForecast } from '@/testing/mcp-forecast';
import { startV2HttpServer } from '@/testing/mcp-v2-server';
import { gatewayContext } from './context';
import { runHttp } from './http';
import { PolicyCache } from './policy';
import { runStdio } from './stdio';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

const open = closedAfterEach();
const SERVER = 'catalog-mcp';
const CONSOLE = 'http://countersign.test';
const TTL_MS = 150;
const BEFORE = FORECAST_BEFORE;
const AFTER = FORECAST_AFTER;

async function upstream() {
  const s = switchableForecast();
  const server = await startV2HttpServer(0, '127.0.0.1', s.build);
  open.push(() => server.close());
  return { ...s, url: server.url };
}

function fakeConsole() {
  return fakeCountersign({ trustedServers: [SERVER], rules: [{ server: SERVER, tool: null, requiredApprovals: 0 }] });
}

function contextFor(fake: ReturnType<typeof fakeCountersign>) {
  const endpoint = { url: CONSOLE, apiKey: 'cs_test_fake', fetch: fake.fetch, requestTimeoutMs: 5000 };
  return gatewayContext({
    server: SERVER,
    principal: 'user_gw',
    organization: 'acme',
    approvalWaitMs: 2000,
    endpoint,
    reporter: new OutcomeReporter({ ...endpoint, flushIntervalMs: 20, backoff: { initialMs: 20, maxMs: 200 } }),
    log: () => undefined,
    policyTtlMs: TTL_MS,
  });
}

async function gateway(fake: ReturnType<typeof fakeCountersign>, upstreamUrl: string) {
  const ctx = contextFor(fake);
  const g = await runHttp(ctx, new URL(upstreamUrl), '127.0.0.1', 0);
  open.push(async () => {
    await g.close();
    await ctx.reporter.close(2000);
  });
  return { url: g.url, ctx };
}

type Mode = 'legacy' | { pin: '2026-07-28' };

async function client(url: string, mode: Mode) {
  const c = new Client({ name: 'catalog-test-client', version: '1.0.0' }, { versionNegotiation: { mode } });
  const changed: number[] = [];
  c.setNotificationHandler('notifications/tools/list_changed', () => void changed.push(Date.now()));
  await c.connect(new StreamableHTTPClientTransport(new URL(url)));
  open.push(() => c.close());
  // A 2026-07-28 client learns of changes on a subscription; a 2025 session gets them unasked.
  if (c.getProtocolEra() === 'modern') await c.listen({ toolsListChanged: true });
  return { c, changed };
}

const names = async (c: Client) => (await c.listTools(undefined, { cacheMode: 'refresh' })).tools.map((t) => t.name);
const forecast = (c: Client, ref = `ref-${randomUUID()}`) =>
  c.callTool({ name: 'forecast', arguments: { city: 'Oslo' }, _meta: { 'countersign/requestRef': ref } });

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 5000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const HELD_TEXT =
  'The tool "forecast" was not called: its definition changed since it was accepted, and the new definition ' +
  'waits for an admin to review it in the Countersign console. It can be called again once accepted.';

describe.each([
  { mode: 'legacy' as const, era: '2025' },
  { mode: { pin: '2026-07-28' as const }, era: '2026-07-28' },
])('a tool whose description changes, for a $era client over HTTP', ({ mode, era }) => {
  it('is listed and callable, then held (hidden, refused tool_changed, never sent) until accepted', async () => {
    const up = await upstream();
    const fake = fakeConsole();
    const g = await gateway(fake, up.url);
    const { c, changed } = await client(g.url, mode);

    expect(await names(c)).toEqual(['forecast']);
    const ok = await forecast(c);
    expect(ok.isError).toBeFalsy();
    expect(ok.content).toEqual([{ type: 'text', text: 'Sunny in Oslo' }]);

    up.describe(AFTER);
    // The server's own list_changed, relayed (2025) or sent on the client's subscription (2026-07-28).
    await until('list_changed', () => changed.length > 0);
    const listed = (await c.listTools(undefined, { cacheMode: 'refresh' })) as { tools: Tool[]; cacheScope?: string };
    expect(listed.tools.map((t) => t.name)).toEqual([]);
    // A list the gateway filtered is this client's own (2026-07-28 results say so).
    if (era === '2026-07-28') expect(listed.cacheScope).toBe('private');

    const ref = `ref-${randomUUID()}`;
    const refused = await forecast(c, ref);
    expect(refused).toEqual({
      isError: true,
      content: [{ type: 'text', text: HELD_TEXT }],
      _meta: {
        'countersign/error': { category: 'tool_changed', retry: 'after_approval' },
        'countersign/requestRef': ref,
        'countersign/eventId': expect.stringMatching(/^evt_/),
        // SDK v2's server names itself on every 2026-07-28 result: the gateway shows the server's name.
        ...(era === '2026-07-28'
          ? { 'io.modelcontextprotocol/serverInfo': { name: 'catalog-test', version: '1.0.0' } }
          : {}),
      },
    });
    // The console saw the whole definition, the new description in it, and nothing else.
    const seen = fake.evaluated.at(-1)!.tools.find((t) => t.name === 'forecast')!;
    expect(Object.keys(seen).sort()).toEqual([
      'annotations',
      'description',
      'inputSchema',
      'name',
      'outputSchema',
      'title',
    ]);
    expect(seen).toMatchObject({
      name: 'forecast',
      title: 'Forecast',
      description: AFTER,
      inputSchema: { type: 'object', properties: { city: { type: 'string' } } },
      outputSchema: { type: 'object', properties: { sky: { type: 'string' } } },
      annotations: { readOnlyHint: true, openWorldHint: false },
    });
    await g.ctx.reporter.flush();
    expect(fake.outcomes.filter((o) => o.requestRef === ref)).toMatchObject([
      { tool: { name: 'forecast' }, observed: { sent: false, clientBlock: 'denied_by_policy' } },
    ]);

    // An admin accepts the new definition: within the policy's TTL the tool is back, and the
    // client is told its list changed.
    const told = changed.length;
    expect(fake.acceptTool(SERVER, 'forecast')).toBe(true);
    await sleep(TTL_MS + 50);
    const again = await forecast(c);
    expect(again.isError).toBeFalsy();
    await until('list_changed after the acceptance', () => changed.length > told);
    expect(await names(c)).toEqual(['forecast']);
  }, 30_000);
});

const STDIO_SERVER = [process.execPath, '--import', 'tsx', path.join(process.cwd(), 'testing/mcp-catalog-stdio.ts')];

describe.each([
  { mode: 'legacy' as const, era: '2025' },
  { mode: { pin: '2026-07-28' as const }, era: '2026-07-28' },
])('a tool whose description changes, for a $era client over stdio', ({ mode, era }) => {
  it('is listed and callable, then held (hidden, refused tool_changed) until accepted', async () => {
    const fake = fakeConsole();
    const ctx = contextFor(fake);
    const [clientSide, gatewaySide] = InMemoryTransport.createLinkedPair();
    const g = await runStdio(ctx, [...STDIO_SERVER, BEFORE, AFTER], gatewaySide as unknown as Transport);
    open.push(async () => {
      await g.close();
      await ctx.reporter.close(2000);
    });
    const c = new Client({ name: 'catalog-test-client', version: '1.0.0' }, { versionNegotiation: { mode } });
    const changed: number[] = [];
    c.setNotificationHandler('notifications/tools/list_changed', () => void changed.push(Date.now()));
    await c.connect(clientSide);
    open.push(() => c.close());
    expect(c.getProtocolEra()).toBe(era === '2025' ? 'legacy' : 'modern');
    if (era === '2026-07-28') await c.listen({ toolsListChanged: true });

    expect((await names(c)).sort()).toEqual(['forecast', 'redescribe']);
    const ok = await forecast(c);
    expect(ok.isError).toBeFalsy();
    expect(ok.content).toEqual([{ type: 'text', text: 'Sunny in Oslo' }]);

    // The server changes the description and says its list changed.
    expect((await c.callTool({ name: 'redescribe', arguments: {} })).isError).toBeFalsy();
    await until('list_changed', () => changed.length > 0);
    expect(await names(c)).toEqual(['redescribe']);

    const ref = `ref-${randomUUID()}`;
    const refused = await forecast(c, ref);
    expect(refused).toEqual({
      isError: true,
      content: [{ type: 'text', text: HELD_TEXT }],
      _meta: {
        'countersign/error': { category: 'tool_changed', retry: 'after_approval' },
        'countersign/requestRef': ref,
        'countersign/eventId': expect.stringMatching(/^evt_/),
        ...(era === '2026-07-28'
          ? { 'io.modelcontextprotocol/serverInfo': { name: 'catalog-test', version: '1.0.0' } }
          : {}),
      },
    });
    expect(fake.evaluated.at(-1)!.tools.find((t) => t.name === 'forecast')).toMatchObject({ description: AFTER });
    await ctx.reporter.flush();
    expect(fake.outcomes.filter((o) => o.requestRef === ref)).toMatchObject([
      { tool: { name: 'forecast' }, observed: { sent: false, clientBlock: 'denied_by_policy' } },
    ]);

    expect(fake.acceptTool(SERVER, 'forecast')).toBe(true);
    await sleep(TTL_MS + 50);
    expect((await forecast(c)).isError).toBeFalsy();
    expect((await names(c)).sort()).toEqual(['forecast', 'redescribe']);
  }, 60_000);
});

describe('the console pins definitions canonically', () => {
  it('a definition whose keys come in another order is the same definition: not held, not asked again', async () => {
    const fake = fakeConsole();
    const endpoint = { url: CONSOLE, apiKey: 'cs_test_fake', fetch: fake.fetch };
    const tool: Tool = {
      name: 'forecast',
      description: BEFORE,
      inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      annotations: { readOnlyHint: true, openWorldHint: false },
    };
    const reordered = {
      annotations: { openWorldHint: false, readOnlyHint: true },
      inputSchema: { required: ['city'], properties: { city: { type: 'string' } }, type: 'object' },
      description: BEFORE,
      name: 'forecast',
    } as Tool;
    let now = 1_000_000;
    const cache = new PolicyCache(endpoint, SERVER, 3000, () => now);
    expect((await cache.get([tool]))?.tools.get('forecast')?.held).toBe(false);
    expect((await cache.get([reordered]))?.tools.get('forecast')?.held).toBe(false);
    expect(fake.evaluated).toHaveLength(1); // the same key: the cached answer
    now += 5000;
    expect((await cache.get([reordered]))?.tools.get('forecast')?.held).toBe(false); // asked again: not held
    expect(fake.evaluated).toHaveLength(2);
    const changed = { ...tool, description: AFTER };
    const held = await cache.get([changed]); // a new key at once, within the TTL
    expect(held?.tools.get('forecast')?.held).toBe(true);
    expect(held?.hidden).toEqual(['forecast']);
    expect(fake.evaluated).toHaveLength(3);
  });
});

describe('two gateways in front of one server, one console', () => {
  it('both hide and refuse the held tool, and both show it again within the policy TTL once accepted', async () => {
    const up = await upstream();
    const fake = fakeConsole();
    const a = await gateway(fake, up.url);
    const b = await gateway(fake, up.url);
    const ca = await client(a.url, 'legacy');
    const cb = await client(b.url, 'legacy');
    expect(await names(ca.c)).toEqual(['forecast']);
    expect(await names(cb.c)).toEqual(['forecast']);

    up.describe(AFTER);
    await until('list_changed at both', () => ca.changed.length > 0 && cb.changed.length > 0);
    expect(await names(ca.c)).toEqual([]);
    // B's client calls without listing again: the gateway lists the changed catalog itself.
    const refused = await forecast(cb.c);
    expect(refused._meta?.['countersign/error']).toEqual({ category: 'tool_changed', retry: 'after_approval' });
    expect(await names(cb.c)).toEqual([]);

    expect(fake.acceptTool(SERVER, 'forecast')).toBe(true);
    await sleep(TTL_MS + 50);
    expect(await names(ca.c)).toEqual(['forecast']);
    expect(await names(cb.c)).toEqual(['forecast']);
    expect((await forecast(cb.c)).isError).toBeFalsy();
  }, 30_000);
});
