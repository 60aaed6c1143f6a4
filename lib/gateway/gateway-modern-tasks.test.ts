// A 2026-07-28 client in front of a 2025 server (docs/gateway.md "Both eras"): SDK v2's client
// pinned to 2026-07-28 connects through a gateway that has never reached the server (its first
// server/discover, answered by the gateway while the gateway's own probe finds the server speaks
// 2025), and calls. Tasks on SDK v2 paths: a `tools/call` that asks for a task (`task` in its
// params) reaches a 2025 server without it, the spec's rule for a feature the other side does not
// support: the call runs as an ordinary call and its result comes back as one. The 2025 server
// here (SDK v1, a session per client) keeps the params of every call it gets.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { cli } from '@/lib/auth/actor';
import { setPolicyRule } from '@/lib/server/policy/policy-rules';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { uniq } from '@/testing/factories';
import { startLegacyHttp } from '@/testing/mcp-legacy-http';
import { closedAfterEach, consoleActors, recordsOf, testContext, type ConsoleActors } from '@/testing/gateway-fixtures';
import { runHttp } from './http';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

let actors: ConsoleActors;
beforeAll(async () => {
  actors = await consoleActors();
});
const open = closedAfterEach();

/** A 2025-only server with one write, `apply_credit`; `calls` holds the params of each call it got. */
async function legacyServer(): Promise<{ url: string; calls: Record<string, unknown>[] }> {
  const calls: Record<string, unknown>[] = [];
  const { url } = await startLegacyHttp(() => {
    const server = new Server({ name: 'legacy-credits', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [
        {
          name: 'apply_credit',
          description: 'Applies a credit to an account, once per call.',
          inputSchema: { type: 'object', properties: { account: { type: 'string' } } },
        },
      ],
    }));
    server.setRequestHandler(CallToolRequestSchema, (request) => {
      calls.push(request.params as Record<string, unknown>);
      return { content: [{ type: 'text', text: 'credit applied' }] };
    });
    return server;
  }, open);
  return { url, calls };
}

describe('a 2026-07-28 client in front of a 2025 server', () => {
  it("SDK v2's client pinned to 2026-07-28 connects through a fresh gateway, and its call goes through", async () => {
    const upstream = await legacyServer();
    const server = uniq('v2-pinned');
    await trustServer(cli, server);
    await setPolicyRule(cli, { server, tool: null, requiredApprovals: 0 });
    const t = testContext(actors, server);
    const gateway = await runHttp(t.ctx, new URL(upstream.url), '127.0.0.1', 0);
    const client = new Client(
      { name: 'pinned-client', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    open.push(async () => {
      await client.close();
      await gateway.close();
      await t.ctx.reporter.close(2000);
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url)));
    expect(client.getProtocolEra()).toBe('modern');
    expect(client.getServerVersion()).toEqual({ name: 'legacy-credits', version: '1.0.0' });
    const ref = uniq('req');
    const result = await client.callTool({
      name: 'apply_credit',
      arguments: { account: 'acc_1' },
      _meta: { 'countersign/requestRef': ref },
    });
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'credit applied' }] });
    expect(upstream.calls).toEqual([
      expect.objectContaining({ name: 'apply_credit', arguments: { account: 'acc_1' } }),
    ]);
    expect((await recordsOf(ref, t.ctx.reporter)).map((r) => [r.delivery, r.category])).toEqual([['completed', 'ok']]);
  });

  it('asks for a task: the server gets the call without `task`, and the client an ordinary result', async () => {
    const upstream = await legacyServer();
    const server = uniq('v2-tasks');
    await trustServer(cli, server);
    await setPolicyRule(cli, { server, tool: null, requiredApprovals: 0 });
    const t = testContext(actors, server);
    const gateway = await runHttp(t.ctx, new URL(upstream.url), '127.0.0.1', 0);
    open.push(async () => {
      await gateway.close();
      await t.ctx.reporter.close(2000);
    });
    // A 2026-07-28 request as the client sends it (no session, the envelope in _meta).
    const ref = uniq('req');
    const response = await fetch(gateway.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'apply_credit',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'apply_credit',
          arguments: { account: 'acc_9' },
          task: { ttl: 60_000 },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
            'countersign/requestRef': ref,
          },
        },
      }),
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    // The answer, as JSON or as the last event of an SSE stream.
    const answer = JSON.parse(
      text.startsWith('{')
        ? text
        : text
            .trim()
            .split('\n')
            .at(-1)!
            .replace(/^data: /, ''),
    ) as {
      result?: unknown;
    };
    const result = answer.result;
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'credit applied' }] });
    expect(upstream.calls).toHaveLength(1);
    expect(upstream.calls[0]).not.toHaveProperty('task');
    expect(upstream.calls[0]).toMatchObject({ name: 'apply_credit', arguments: { account: 'acc_9' } });
    expect((await recordsOf(ref, t.ctx.reporter)).map((r) => [r.delivery, r.category])).toEqual([['completed', 'ok']]);
  });
});
