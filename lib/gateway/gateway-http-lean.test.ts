// The lean path of the HTTP gateway (http-downstream.ts) against the SDK's server transport it
// stands beside: two gateways in front of the same demo MCP server, one with the lean path and one
// without (every POST through the SDK's transport), sent the same raw HTTP requests. The answers
// must carry the same messages; the lean path answers a plain call as JSON, streams as the SDK
// streams when something related comes first, and leaves every request it is unsure of to the
// SDK's transport (same status, same body). A server that asks the client things:
// gateway-http-asking.test.ts.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { CallToolResult, JSONRPCMessage, JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { cli } from '@/lib/auth/actor';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { startDemoMcpServer } from '@/scripts/demo-mcp-server';
import { Downstream, KEEP_ALIVE_MS } from './http-downstream';
import { runHttp } from './http';
import { uniq } from '@/testing/factories';
import { closedAfterEach, consoleActors, decide, testContext, type ConsoleActors } from '@/testing/gateway-fixtures';
import { ACCEPT, rawSession, rpc, type Answer } from '@/testing/raw-mcp-session';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

let actors: ConsoleActors;
beforeAll(async () => {
  actors = await consoleActors();
});
const open = closedAfterEach();

async function twoGateways() {
  const demo = await startDemoMcpServer({ slowMs: 0 });
  const server = uniq('billing-lean');
  await trustServer(cli, server);
  const a = testContext(actors, server);
  const b = testContext(actors, server);
  const lean = await runHttp(a.ctx, demo.url, '127.0.0.1', 0);
  const sdk = await runHttp(b.ctx, demo.url, '127.0.0.1', 0, { lean: false });
  open.push(async () => {
    await Promise.all([lean.close(), sdk.close()]);
    await demo.close();
    await Promise.all([a.ctx.reporter.close(2000), b.ctx.reporter.close(2000)]);
  });
  return {
    demo,
    lean: await rawSession(lean.url, demo.tokens.full),
    sdk: await rawSession(sdk.url, demo.tokens.full),
  };
}

describe('the lean path against the SDK transport, same requests', () => {
  it('a plain request is answered as JSON with the message the SDK transport streams', async () => {
    const { lean, sdk } = await twoGateways();
    const requests = [
      rpc(1, 'tools/list', {}),
      rpc(2, 'tools/call', { name: 'get_order', arguments: { orderId: '4411' } }),
      rpc('call-3', 'tools/call', { name: 'get_order', arguments: { orderId: '4411' }, _meta: { progressToken: 7 } }),
      rpc(4, 'tools/call', { name: 'no_such_tool', arguments: {} }),
      rpc(5, 'ping'),
    ];
    for (const body of requests) {
      const [l, s] = [await lean.post(body), await sdk.post(body)];
      expect(s.status).toBe(200);
      expect(s.type).toBe('text/event-stream');
      expect(l.status).toBe(200);
      // The SDK transport's own JSON answer (enableJsonResponse): these headers, the one message.
      expect(l.type).toBe('application/json');
      expect(l.headers.get('mcp-session-id')).toBe(lean.sessionId);
      expect(l.headers.get('content-length')).toBe(String(Buffer.byteLength(l.text)));
      expect(l.messages).toHaveLength(1);
      expect(l.messages).toEqual(s.messages);
    }
  });

  it('what the lean check is unsure of is answered by the SDK transport: the same status and body', async () => {
    const { lean, sdk } = await twoGateways();
    const call = { name: 'get_order', arguments: { orderId: '4411' } };
    const cases: [string, string, Record<string, string | null>?][] = [
      ['Accept without SSE', rpc(1, 'tools/call', call), { accept: 'application/json' }],
      ['no Accept', rpc(1, 'tools/call', call), { accept: null }],
      ['Content-Type text/plain', rpc(1, 'tools/call', call), { 'content-type': 'text/plain' }],
      [
        'Content-Type with a charset',
        rpc(1, 'tools/call', call),
        { 'content-type': 'application/json; charset=utf-8' },
      ],
      ['not JSON', '{"jsonrpc":', {}],
      ['a member JSON-RPC does not have', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', extra: 1 })],
      ['jsonrpc 1.0', JSON.stringify({ jsonrpc: '1.0', id: 1, method: 'ping' })],
      ['a fractional id', rpc(1.5, 'ping')],
      ['an id beyond safe integers', '{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}'],
      ['an object id', rpc({ a: 1 }, 'ping')],
      ['params null', rpc(1, 'tools/call', null)],
      ['params an array', rpc(1, 'tools/call', [1])],
      ['_meta not an object', rpc(1, 'tools/call', { ...call, _meta: 'x' })],
      ['a fractional progress token', rpc(1, 'tools/call', { ...call, _meta: { progressToken: 1.5 } })],
      [
        'a related-task with more members',
        rpc(1, 'tools/call', { ...call, _meta: { 'io.modelcontextprotocol/related-task': { taskId: 't', x: 1 } } }),
      ],
      ['an unsupported protocol version', rpc(1, 'ping'), { 'mcp-protocol-version': '1999-01-01' }],
      [
        'initialize again',
        rpc(1, 'initialize', {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'x', version: '1' },
        }),
      ],
      ['a batch of two', `[${rpc(1, 'ping')},${rpc(2, 'tools/call', call)}]`],
      ['a notification', JSON.stringify({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' })],
      ['a response nobody asked for', JSON.stringify({ jsonrpc: '2.0', id: 'nobody', result: {} })],
    ];
    for (const [name, body, headers] of cases) {
      const [l, s] = [await lean.post(body, headers), await sdk.post(body, headers)];
      expect({ name, status: l.status, type: l.type }).toEqual({ name, status: s.status, type: s.type });
      if (s.type?.startsWith('text/event-stream'))
        expect({ name, messages: l.messages }).toEqual({ name, messages: s.messages });
      else expect({ name, text: l.text }).toEqual({ name, text: s.text });
    }
  });

  it('a call held for approval with a progress token streams progress, then the answer, as the SDK does', async () => {
    const { lean, sdk } = await twoGateways();
    const held = async (session: typeof lean) => {
      const ref = uniq('req');
      const args = { orderId: '4412', amount: 10, currency: 'EUR', idempotencyKey: uniq('rf') };
      const meta = { progressToken: 'p1', 'countersign/requestRef': ref };
      const answer = session.post(rpc(9, 'tools/call', { name: 'refund_payment', arguments: args, _meta: meta }));
      await new Promise((r) => setTimeout(r, 350)); // a few of the gateway's progress ticks (100 ms here)
      await decide(actors.reviewer, ref, 'approve');
      return answer;
    };
    const [l, s] = [await held(lean), await held(sdk)];
    for (const a of [l, s]) {
      expect(a.status).toBe(200);
      expect(a.type).toBe('text/event-stream');
      expect(a.headers.get('cache-control')).toBe('no-cache, no-transform');
      expect(a.headers.get('x-accel-buffering')).toBe('no');
      // Every frame as the SDK writes one: `event: message`, then the data, then a blank line.
      expect(a.text).toMatch(/^(event: message\ndata: [^\n]+\n\n)+$/);
      const kinds = a.messages.map((m) => ('method' in (m as object) ? (m as { method: string }).method : 'answer'));
      expect(kinds.at(-1)).toBe('answer');
      expect(kinds.slice(0, -1).length).toBeGreaterThan(0);
      expect(new Set(kinds.slice(0, -1))).toEqual(new Set(['notifications/progress']));
    }
    const result = (a: Answer) => (a.messages.at(-1) as { result: CallToolResult }).result;
    expect(result(l).structuredContent).toMatchObject({ orderId: '4412', status: 'refunded', replayed: false });
    expect(Object.keys(result(l)).sort()).toEqual(Object.keys(result(s)).sort());
    expect(l.headers.get('mcp-session-id')).toBe(lean.sessionId);
  });
});

describe('a lean answer left silent', () => {
  it('becomes the SDK stream after KEEP_ALIVE_MS: headers, a keepalive comment, then the answer as an event', async () => {
    const sdk = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: randomUUID });
    const down = new Downstream(sdk);
    const received: JSONRPCMessage[] = [];
    down.onmessage = (m) => void received.push(m);
    await down.start();
    const init = await sdk.handleRequest(
      new Request('http://x/mcp', {
        method: 'POST',
        headers: { accept: ACCEPT, 'content-type': 'application/json' },
        body: rpc(0, 'initialize', {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'x', version: '1' },
        }),
      }),
    );
    await init.body?.cancel();
    const request: JSONRPCRequest = { jsonrpc: '2.0', id: 'slow', method: 'tools/call', params: { name: 't' } };
    const http = createServer((_req, res) => down.post(request, res)!.start());
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    open.push(async () => {
      await down.close();
      http.closeAllConnections();
      await new Promise((r) => http.close(r));
    });
    const response = fetch(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`, { method: 'POST' });
    await vi.waitFor(() => expect(received.at(-1)).toEqual(request));
    down.sweep(performance.now() + KEEP_ALIVE_MS);
    const res = await response;
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(res.headers.get('mcp-session-id')).toBe(sdk.sessionId);
    await down.send({ jsonrpc: '2.0', id: 'slow', result: { content: [] } });
    expect(await res.text()).toBe(
      ': keepalive\n\nevent: message\ndata: {"jsonrpc":"2.0","id":"slow","result":{"content":[]}}\n\n',
    );
  });
});
