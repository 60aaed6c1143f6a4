// The four pairings over HTTP against a server that speaks only 2026-07-28 (SDK v2's
// createMcpHandler with `legacy: 'reject'`): SDK v2's client in legacy, auto and pinned modes
// through the gateway. A 2025 client's session is bridged (SDK v2's server in front, the server's
// rounds sent to the client as real requests by the SDK's legacy shim); a 2026 client gets
// 2026-07-28 end to end; every call is recorded once.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { cli } from '@/lib/auth/actor';
import { setPolicyRule } from '@/lib/server/policy/policy-rules';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { uniq } from '@/testing/factories';
import { closedAfterEach, consoleActors, recordsOf, testContext, type ConsoleActors } from '@/testing/gateway-fixtures';
import { buildV2Server } from '@/testing/mcp-v2-server';
import { runHttp } from './http';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

let actors: ConsoleActors;
beforeAll(async () => {
  actors = await consoleActors();
});
const open = closedAfterEach();

/** The SDK v2 test server's tools, served to 2026-07-28 clients only. */
async function modernOnlyServer(): Promise<string> {
  const handler = createMcpHandler(({ era }) => buildV2Server(era), { legacy: 'reject' });
  const node = toNodeHandler(handler);
  const http = createServer((req, res) => void node(req, res));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  open.push(async () => {
    await handler.close();
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  });
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
}

async function gatewayFor(upstream: string) {
  const server = uniq('v2-bridge');
  await trustServer(cli, server);
  await setPolicyRule(cli, { server, tool: null, requiredApprovals: 0 });
  const t = testContext(actors, server);
  const g = await runHttp(t.ctx, new URL(upstream), '127.0.0.1', 0);
  open.push(async () => {
    await g.close();
    await t.ctx.reporter.close(2000);
  });
  return { url: g.url, reporter: t.ctx.reporter };
}

async function client(url: string, mode: 'legacy' | 'auto' | { pin: '2026-07-28' }): Promise<Client> {
  const c = new Client(
    { name: 'bridge-test-client', version: '1.0.0' },
    { versionNegotiation: { mode }, capabilities: { elicitation: { form: {} } } },
  );
  c.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name: 'Ada' } }));
  await c.connect(new StreamableHTTPClientTransport(new URL(url)));
  open.push(() => c.close());
  return c;
}

describe.each([
  { mode: 'legacy' as const, era: 'legacy' },
  { mode: 'auto' as const, era: 'modern' },
  { mode: { pin: '2026-07-28' as const }, era: 'modern' },
])('a client in $mode mode in front of a 2026-07-28-only server', ({ mode, era }) => {
  it(`speaks the ${era} era to the gateway; calls, and the server's own rounds, work as direct, each call recorded once`, async () => {
    const g = await gatewayFor(await modernOnlyServer());
    const c = await client(g.url, mode);
    expect(c.getProtocolEra()).toBe(era);
    const tools = await c.listTools();
    expect(tools.tools.map((t) => t.name)).toContain('test_simple_text');
    const ref = `ref-${randomUUID()}`;
    const simple = await c.callTool({
      name: 'test_simple_text',
      arguments: {},
      _meta: { 'countersign/requestRef': ref },
    });
    expect(simple.content).toEqual([{ type: 'text', text: 'This is a simple text response for testing.' }]);
    const asked = await c.callTool({
      name: 'test_input_required_result_elicitation',
      arguments: {},
      _meta: { 'countersign/requestRef': ref },
    });
    expect(asked.content).toEqual([{ type: 'text', text: 'Hello, Ada!' }]);
    const records = await recordsOf(ref, g.reporter);
    expect(records.map((r) => [r.toolName, r.delivery]).sort()).toEqual([
      ['test_input_required_result_elicitation', 'completed'],
      ['test_simple_text', 'completed'],
    ]);
  });
});

describe('a 2026-07-28 request when the server cannot be reached', () => {
  it('gets the JSON-RPC error -32603 saying so, with its own id', async () => {
    // A port that was just free: nothing listens there.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const g = await gatewayFor(`http://127.0.0.1:${port}/mcp`);
    const response = await fetch(g.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/list',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'list-1',
        method: 'tools/list',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      jsonrpc: '2.0',
      id: 'list-1',
      error: { code: -32603, message: 'The gateway could not reach the MCP server (Error ECONNREFUSED).' },
    });
  });
});
