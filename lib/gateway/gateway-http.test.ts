// The gateway in Streamable HTTP mode on 127.0.0.1 in front of the demo MCP server
// (scripts/demo-mcp-server.ts), the official SDK client connecting to the gateway's /mcp, the real
// console in-process deciding and recording. The client's Authorization header goes through
// unchanged; the server's 401/403 and WWW-Authenticate come back unchanged.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cli } from '@/lib/auth/actor';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { startDemoMcpServer, type DemoMcpServer } from '@/scripts/demo-mcp-server';
import { runHttp, type HttpGateway } from './http';
import { uniq } from '@/testing/factories';
import {
  consoleActors,
  decide,
  recordsOf,
  testContext,
  type ConsoleActors,
  closedAfterEach,
} from '@/testing/gateway-fixtures';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

let actors: ConsoleActors;
beforeAll(async () => {
  actors = await consoleActors();
});
const open = closedAfterEach();

async function setUp() {
  const demo: DemoMcpServer = await startDemoMcpServer({ slowMs: 50 });
  const server = uniq('billing-gw');
  await trustServer(cli, server);
  const t = testContext(actors, server);
  const gateway: HttpGateway = await runHttp(t.ctx, demo.url, '127.0.0.1', 0);
  open.push(async () => {
    await gateway.close();
    await demo.close();
    await t.ctx.reporter.close(2000);
  });
  const seen: { status: number; headers: Headers }[] = [];
  const connect = async (token: string | null) => {
    const client = new Client({ name: 'http-gw-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(gateway.url), {
      requestInit: token ? { headers: { authorization: `Bearer ${token}` } } : undefined,
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        seen.push({ status: res.status, headers: res.headers });
        return res;
      },
    });
    await client.connect(transport);
    open.push(() => client.close());
    return client;
  };
  return { ...t, demo, gateway, connect, seen };
}

const call = (client: Client, name: string, args: Record<string, unknown>, ref: string) =>
  client.callTool({ name, arguments: args, _meta: { 'countersign/requestRef': ref } }) as Promise<CallToolResult>;

describe('gateway, Streamable HTTP, demo MCP server', () => {
  it('a read goes through with the client token and is recorded completed', async () => {
    const s = await setUp();
    const client = await s.connect(s.demo.tokens.full);
    const ref = uniq('req');
    const r = await call(client, 'get_order', { orderId: '4411' }, ref);
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ orderId: '4411', amount: 40 });
    expect(await recordsOf(ref, s.ctx.reporter)).toMatchObject([
      { toolName: 'get_order', delivery: 'completed', category: 'ok' },
    ]);
  });

  it("the server's 401 and its WWW-Authenticate come back unchanged; the token is never reported", async () => {
    const s = await setUp();
    const bad = 'demo_not-a-real-token';
    const error = await s.connect(bad).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StreamableHTTPError);
    expect((error as StreamableHTTPError).code).toBe(401);
    const refusal = s.seen.find((r) => r.status === 401)!;
    expect(refusal.headers.get('www-authenticate')).toBe(
      'Bearer realm="demo-billing", error="invalid_token", error_description="The access token is not valid"',
    );
    expect(s.logs.join('\n')).not.toContain(bad);
  });

  it("a 403 insufficient_scope on a call comes back as the server's 403", async () => {
    const s = await setUp();
    const client = await s.connect(s.demo.tokens.ordersOnly);
    const ref = uniq('req');
    const error = await call(client, 'list_refunds', { orderId: '4411' }, ref).catch((e: unknown) => e);
    expect((error as StreamableHTTPError).code).toBe(403);
    const refusal = s.seen.find((r) => r.status === 403)!;
    expect(refusal.headers.get('www-authenticate')).toContain('error="insufficient_scope", scope="refunds:read"');
    expect(await recordsOf(ref, s.ctx.reporter)).toMatchObject([{ delivery: 'rejected', category: 'forbidden' }]);
  });

  it('a refund is held, approved through the API, forwarded exactly once and recorded with its grant', async () => {
    const s = await setUp();
    const client = await s.connect(s.demo.tokens.full);
    const ref = uniq('req');
    const args = { orderId: '4412', amount: 10, currency: 'EUR', idempotencyKey: uniq('rf') };
    const pending = call(client, 'refund_payment', args, ref);
    await new Promise((r) => setTimeout(r, 200));
    expect(s.demo.store.refunds.size).toBe(0);
    await decide(actors.reviewer, ref, 'approve'); // destructive but not open-world, trusted: one reviewer
    const r = await pending;
    expect(r.structuredContent).toMatchObject({ orderId: '4412', status: 'refunded', replayed: false });
    expect(s.demo.store.refunds.size).toBe(1);
    const records = await recordsOf(ref, s.ctx.reporter);
    expect(records).toMatchObject([{ toolName: 'refund_payment', delivery: 'completed', category: 'ok' }]);
    expect(records[0].grantId).toEqual(expect.any(String));
  });

  it('the upstream down: a JSON-RPC error to the client, recorded, and the gateway keeps serving', async () => {
    const s = await setUp();
    const client = await s.connect(s.demo.tokens.full);
    const ref = uniq('req');
    await call(client, 'get_order', { orderId: '4411' }, ref);
    await s.demo.close();
    const error = await call(client, 'get_order', { orderId: '4411' }, ref).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    const records = await recordsOf(ref, s.ctx.reporter);
    // A refused connection: the call provably never left.
    expect(records.map((r) => r.delivery)).toEqual(['completed', 'never_sent']);
    // Still serving: a new session is answered (the server's absence, as a JSON-RPC error or HTTP refusal).
    const res = await fetch(s.gateway.url, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBeLessThan(500);
  });

  it('an upstream that answers garbage: a JSON-RPC error to the client, and the gateway keeps serving', async () => {
    const garbage = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>not MCP</html>');
    });
    await new Promise<void>((resolve) => garbage.listen(0, '127.0.0.1', resolve));
    const t = testContext(actors, uniq('garbage'));
    const url = new URL(`http://127.0.0.1:${(garbage.address() as AddressInfo).port}/mcp`);
    const gateway = await runHttp(t.ctx, url, '127.0.0.1', 0);
    open.push(async () => {
      await gateway.close();
      garbage.close();
      await t.ctx.reporter.close(500);
    });
    for (let i = 0; i < 3; i++) {
      const client = new Client({ name: 'garbage-test', version: '1.0.0' });
      const error = await client
        .connect(new StreamableHTTPClientTransport(new URL(gateway.url)))
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(McpError);
      expect((error as McpError).code).toBe(-32603);
      await client.close();
    }
  });
});
