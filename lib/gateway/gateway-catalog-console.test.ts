// The tool catalog through the gateway against the REAL console (issue #44): the console's route
// handlers in-process on the real database (testing/gateway-fixtures.ts), not the fake. Two gateways
// in front of one server whose tool description changes at run time: both hide and refuse the held
// tool, the console's catalog shows it held, and once an admin accepts it (`acceptHeld`) both show it
// again within the policy TTL. And a server of 5,000 tools through one gateway: the gateway asks the
// console in batches of 1,000, the client sees every tool, the console pins every one and lints the
// catalog as large. The expectations are written by hand (docs/catalog.md).
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { McpServer as McpServerV1 } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { cli, type Person } from '@/lib/auth/actor';
import { acceptHeld, listTools, type ToolCatalog } from '@/lib/server/catalog/catalog';
import { setPolicyRule } from '@/lib/server/policy/policy-rules';
import { makeUser, uniq, value } from '@/testing/factories';
import {
  clientThroughGateway,
  closedAfterEach,
  consoleActors,
  testContext,
  type ConsoleActors,
} from '@/testing/gateway-fixtures';
import { FORECAST_AFTER, FORECAST_BEFORE, switchableForecast } from '@/testing/mcp-forecast';
import { startV2HttpServer } from '@/testing/mcp-v2-server';
import { runHttp } from './http';
import { PolicyCache } from './policy';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

const EVALUATE = '/api/v1/policy/evaluate';
const TTL_MS = 400;
const BEFORE = FORECAST_BEFORE;
const AFTER = FORECAST_AFTER;

let actors: ConsoleActors;
let admin: Person;
beforeAll(async () => {
  actors = await consoleActors();
  admin = await makeUser('admin');
});
const open = closedAfterEach();

/** A gateway over HTTP in front of `upstream`, wired to the real console, with a short policy TTL. */
async function gateway(server: string, upstream: string) {
  const t = testContext(actors, server);
  // testContext takes a context's fields only, and the context makes its own cache: this one's TTL is short.
  const ctx = { ...t.ctx, policy: new PolicyCache(t.ctx.endpoint, server, TTL_MS) };
  const g = await runHttp(ctx, new URL(upstream), '127.0.0.1', 0);
  open.push(async () => {
    await g.close();
    await ctx.reporter.close(2000);
  });
  return { url: g.url };
}

async function client(url: string) {
  const c = new Client(
    { name: 'catalog-console-client', version: '1.0.0' },
    { versionNegotiation: { mode: 'legacy' } },
  );
  await c.connect(new StreamableHTTPClientTransport(new URL(url)));
  open.push(() => c.close());
  return c;
}

const names = async (c: Client) => (await c.listTools(undefined, { cacheMode: 'refresh' })).tools.map((t) => t.name);
const forecast = (c: Client) =>
  c.callTool({
    name: 'forecast',
    arguments: { city: 'Oslo' },
    _meta: { 'countersign/requestRef': `ref-${randomUUID()}` },
  });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function catalogOf(server: string): Promise<ToolCatalog> {
  return value(await listTools(admin, server));
}

describe('the tool catalog through the gateway, with the real console', () => {
  it('two gateways in front of one server: a changed description is held at both, and shown again at both once accepted', async () => {
    const server = uniq('catalog-console-mcp');
    await setPolicyRule(cli, { server, tool: null, requiredApprovals: 0 });
    const s = switchableForecast();
    const up = await startV2HttpServer(0, '127.0.0.1', s.build);
    open.push(() => up.close());
    const a = await gateway(server, up.url);
    const b = await gateway(server, up.url);
    const ca = await client(a.url);
    const cb = await client(b.url);

    // Before the change: listed and callable through both.
    expect(await names(ca)).toEqual(['forecast']);
    expect(await names(cb)).toEqual(['forecast']);
    for (const c of [ca, cb]) {
      const ok = await forecast(c);
      expect(ok.isError).toBeFalsy();
      expect(ok.content).toEqual([{ type: 'text', text: 'Sunny in Oslo' }]);
    }
    const first = await catalogOf(server);
    expect(first.tools.map((t) => [t.name, t.held])).toEqual([['forecast', null]]);
    const acceptedBefore = first.tools[0].accepted!.definitionHash;

    // The description changes; once the gateways' answers are stale, both list again.
    s.describe(AFTER);
    await sleep(TTL_MS + 100);
    expect(await names(ca)).toEqual([]);
    expect(await names(cb)).toEqual([]);
    for (const c of [ca, cb]) {
      const refused = await forecast(c);
      expect(refused.isError).toBe(true);
      expect(refused._meta?.['countersign/error']).toEqual({ category: 'tool_changed', retry: 'after_approval' });
    }

    // The console's catalog: the accepted definition unchanged, the new one held, its description differing.
    const held = await catalogOf(server);
    expect(held.tools).toHaveLength(1);
    const tool = held.tools[0];
    expect(tool.name).toBe('forecast');
    expect(tool.accepted?.definitionHash).toBe(acceptedBefore);
    expect(tool.accepted?.definition).toMatchObject({ description: BEFORE });
    expect(tool.held).toMatchObject({ differs: ['description'], definition: { description: AFTER } });
    expect(tool.held!.definitionHash).not.toBe(acceptedBefore);

    // An admin accepts the held definition, named by its hash: within the TTL both show and run it again.
    const accepted = value(
      await acceptHeld(admin, { server, tool: 'forecast', definitionHash: tool.held!.definitionHash }),
    );
    expect(accepted).toMatchObject({ server, tool: 'forecast', definitionHash: tool.held!.definitionHash });
    await sleep(TTL_MS + 100);
    expect(await names(ca)).toEqual(['forecast']);
    expect(await names(cb)).toEqual(['forecast']);
    for (const c of [ca, cb]) {
      const ok = await forecast(c);
      expect(ok.isError).toBeFalsy();
      expect(ok.content).toEqual([{ type: 'text', text: 'Sunny in Oslo' }]);
    }
    const after = await catalogOf(server);
    expect(after.tools.map((t) => [t.name, t.held, t.accepted?.definitionHash])).toEqual([
      ['forecast', null, tool.held!.definitionHash],
    ]);
  }, 60_000);

  it('5,000 tools on one server: all listed through the gateway, all accepted by the console, none held, linted as a large catalog', async () => {
    const COUNT = 5000;
    const server = uniq('catalog-5000-mcp');
    const mcp = new McpServerV1({ name: 'catalog-5000', version: '1.0.0' });
    const toolName = (i: number) => `tool_${String(i).padStart(4, '0')}`;
    for (let i = 0; i < COUNT; i++) {
      mcp.registerTool(
        toolName(i),
        {
          description: `Reads gauge number ${i} of the plant.`,
          inputSchema: { unit: z.string() },
          annotations: { readOnlyHint: true, openWorldHint: false },
        },
        async () => ({ content: [{ type: 'text', text: String(i) }] }),
      );
    }
    const t = testContext(actors, server);
    const c = await clientThroughGateway(mcp, t.ctx, open);
    const evaluated = () => t.console.calls.filter((x) => x.method === 'POST' && x.path === EVALUATE).length;

    const listed: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await c.listTools(cursor ? { cursor } : undefined);
      listed.push(...page.tools.map((x) => x.name));
      cursor = page.nextCursor;
    } while (cursor);

    const expected = Array.from({ length: COUNT }, (_, i) => toolName(i));
    expect(listed.length).toBe(COUNT);
    expect([...listed].sort()).toEqual(expected);
    // Five batches of 1,000 (the console takes at most 1,000 tools a request).
    expect(evaluated()).toBe(5);

    const catalog = await catalogOf(server);
    expect(catalog.tools).toHaveLength(COUNT);
    expect(catalog.tools.map((x) => x.name)).toEqual(expected);
    expect(catalog.tools.filter((x) => x.accepted).length).toBe(COUNT);
    expect(catalog.tools.filter((x) => x.held).length).toBe(0);
    expect(catalog.lint.filter((f) => f.rule === 'large_catalog')).toEqual([
      expect.objectContaining({ rule: 'large_catalog', severity: 'low', tools: [] }),
    ]);
    expect(catalog.lint.find((f) => f.rule === 'large_catalog')!.message).toContain('offers 5000 tools');
  }, 180_000);
});
