// The lean path of the HTTP gateway (http-downstream.ts) against the SDK's server transport it
// stands beside: two gateways in front of the same demo MCP server, one with the lean path and one
// without (every POST through the SDK's transport), sent the same raw HTTP requests. The answers
// must carry the same messages; the lean path answers a plain call as JSON, streams as the SDK
// streams when something related comes first, and leaves every request it is unsure of to the
// SDK's transport (same status, same body). Then a server that asks the client things
// (elicitation, sampling, progress, logging) over Streamable HTTP, through the gateway.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  type CallToolResult,
  type JSONRPCMessage,
  type JSONRPCRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { cli } from '@/lib/auth/actor';
import { setPolicyRule } from '@/lib/server/policy/policy-rules';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { startDemoMcpServer } from '@/scripts/demo-mcp-server';
import { Downstream, KEEP_ALIVE_MS } from './http-downstream';
import { runHttp } from './http';
import { uniq } from '@/testing/factories';
import { closedAfterEach, consoleActors, decide, testContext, type ConsoleActors } from '@/testing/gateway-fixtures';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

let actors: ConsoleActors;
beforeAll(async () => {
  actors = await consoleActors();
});
const open = closedAfterEach();

const ACCEPT = 'application/json, text/event-stream';

interface Answer {
  status: number;
  type: string | null;
  headers: Headers;
  /** The raw body (SSE frames as sent). */
  text: string;
  /** The JSON-RPC messages in it (one JSON body, or each SSE `message` event), ids of records blanked. */
  messages: unknown[];
}

/** The messages of a body: a JSON body, or the `data` of each SSE event. */
function messagesOf(type: string | null, text: string): unknown[] {
  if (type?.startsWith('application/json')) return [JSON.parse(text)];
  if (!type?.startsWith('text/event-stream')) return [];
  return text
    .split('\n\n')
    .map((frame) =>
      frame
        .split('\n')
        .find((l) => l.startsWith('data: '))
        ?.slice(6),
    )
    .filter((d): d is string => !!d)
    .map((d) => JSON.parse(d));
}

// The record's event id and the session's request reference differ between the two gateways by
// design: blanked for the comparison.
const blank = (m: unknown) =>
  JSON.parse(
    JSON.stringify(m)
      .replace(/"countersign\/eventId":"evt_[^"]+"/g, '"countersign/eventId":"evt"')
      .replace(/"countersign\/requestRef":"gw-[^"]+"/g, '"countersign/requestRef":"gw-session"'),
  );

/** A raw MCP session over HTTP: initialize, initialized, then any POST, headers as given. */
async function rawSession(url: string, token: string) {
  const post = async (body: string, headers: Record<string, string | null> = {}): Promise<Answer> => {
    const h: Record<string, string> = {};
    const all: Record<string, string | null> = {
      accept: ACCEPT,
      'content-type': 'application/json',
      authorization: `Bearer ${token}`,
      'mcp-protocol-version': '2025-11-25',
      ...(sessionId ? { 'mcp-session-id': sessionId } : {}),
      ...headers,
    };
    for (const [k, v] of Object.entries(all)) if (v !== null) h[k] = v;
    const res = await fetch(url, { method: 'POST', headers: h, body });
    const text = await res.text();
    const type = res.headers.get('content-type');
    return { status: res.status, type, headers: res.headers, text, messages: messagesOf(type, text).map(blank) };
  };
  let sessionId: string | null = null;
  const init = await post(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  );
  sessionId = init.headers.get('mcp-session-id');
  expect(sessionId).toBeTruthy();
  expect((await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))).status).toBe(202);
  return { post, sessionId: sessionId! };
}

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

const rpc = (id: unknown, method: string, params?: unknown) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });

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

// ── a server that asks the client things, over Streamable HTTP ─────────────────────────────────

function askingServer(): McpServer {
  const server = new McpServer({ name: 'asking', version: '1.0.0' }, { capabilities: { logging: {} } });
  server.registerTool(
    'ask',
    {
      inputSchema: { question: z.string() },
      outputSchema: { name: z.string(), sampled: z.string() },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ question }, extra) => {
      const token = extra._meta?.progressToken;
      if (token !== undefined)
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken: token, progress: 1 },
        });
      await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: 'asking' } });
      const elicited = await server.server.elicitInput({
        message: question,
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      });
      const sampled = await server.server.createMessage({
        messages: [{ role: 'user', content: { type: 'text', text: question } }],
        maxTokens: 10,
      });
      const out = {
        name: String(elicited.content?.name ?? ''),
        sampled: sampled.content.type === 'text' ? sampled.content.text : '',
      };
      return { content: [{ type: 'text', text: JSON.stringify(out) }], structuredContent: out };
    },
  );
  // Tells without asking: progress and a log message inside its answer, then the result.
  server.registerTool('tell', { annotations: { readOnlyHint: true, openWorldHint: false } }, async (extra) => {
    const token = extra._meta?.progressToken;
    if (token !== undefined)
      await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: 1 } });
    await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: 'telling' } });
    return { content: [{ type: 'text', text: 'told' }] };
  });
  return server;
}

async function startAskingServer(): Promise<{ url: URL; close: () => Promise<void> }> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const id = req.headers['mcp-session-id'];
    const known = typeof id === 'string' ? sessions.get(id) : undefined;
    if (known) return known.handleRequest(req, res);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (sid) => void sessions.set(sid, transport),
    });
    await askingServer().connect(transport);
    await transport.handleRequest(req, res);
  };
  const http = createServer((req, res) => void handle(req, res).catch(() => res.end()));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`),
    close: async () => {
      await Promise.allSettled([...sessions.values()].map((t) => t.close()));
      http.closeAllConnections();
      await new Promise((r) => http.close(r));
    },
  };
}

async function askingGateway(options?: { lean?: boolean }) {
  const upstream = await startAskingServer();
  const server = uniq('asking');
  await trustServer(cli, server);
  await setPolicyRule(cli, { server, tool: null, requiredApprovals: 0 });
  const t = testContext(actors, server);
  const gateway = await runHttp(t.ctx, upstream.url, '127.0.0.1', 0, options);
  open.push(async () => {
    await gateway.close();
    await upstream.close();
    await t.ctx.reporter.close(2000);
  });
  return { upstream, gateway };
}

describe('what the server sends inside its answer to a call', () => {
  it('goes with that answer, in order, on both paths, before any GET stream is open (as direct)', async () => {
    const { upstream, gateway } = await askingGateway();
    const sdkOnly = await askingGateway({ lean: false });
    const call = rpc(3, 'tools/call', { name: 'tell', arguments: {}, _meta: { progressToken: 'p' } });
    // Raw sessions that never open the GET stream: what went there would be lost.
    const answers = [];
    for (const url of [upstream.url.toString(), gateway.url, sdkOnly.gateway.url]) {
      const session = await rawSession(url, 'unused');
      answers.push(await session.post(call));
    }
    const expected = [
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'p', progress: 1 } },
      { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'telling' } },
      { jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: 'told' }] } },
    ];
    const [direct, lean, sdk] = answers;
    expect(direct.type).toBe('text/event-stream');
    expect(direct.messages).toEqual(expected);
    for (const through of [lean, sdk]) {
      expect(through.status).toBe(200);
      expect(through.type).toBe('text/event-stream');
      expect(through.messages.slice(0, 2)).toEqual(expected.slice(0, 2));
      // The answer as the server sent it, with the gateway's record reference added.
      expect(through.messages[2]).toEqual({
        ...expected[2],
        result: {
          ...expected[2].result,
          _meta: { 'countersign/requestRef': 'gw-session', 'countersign/eventId': 'evt' },
        },
      });
    }
  });
});

describe('server-to-client requests over Streamable HTTP through the gateway', () => {
  it('elicitation, sampling, progress and logging reach the client and its answers the server, as direct', async () => {
    const { upstream, gateway } = await askingGateway();
    const ask = async (url: URL) => {
      const client = new Client(
        { name: 'asking-client', version: '1.0.0' },
        { capabilities: { elicitation: {}, sampling: {} } },
      );
      const seen: string[] = [];
      client.setRequestHandler(ElicitRequestSchema, async (r) => {
        seen.push(`elicit ${r.params.message}`);
        return { action: 'accept', content: { name: 'Ada' } };
      });
      client.setRequestHandler(CreateMessageRequestSchema, async () => {
        seen.push('sample');
        return { model: 'm', role: 'assistant', content: { type: 'text', text: 'sampled' } };
      });
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void seen.push(`log ${n.params.data}`));
      await client.connect(new StreamableHTTPClientTransport(url));
      open.push(() => client.close());
      // Called at once: the client's GET stream may not be open yet. What the server sends inside
      // its answer to the call goes with the call's answer, as direct, not on that stream.
      const progress: number[] = [];
      const result = (await client.callTool({ name: 'ask', arguments: { question: 'Who?' } }, undefined, {
        onprogress: (p) => void progress.push(p.progress),
        timeout: 10_000,
      })) as CallToolResult;
      return { result: result.structuredContent, seen: seen.sort(), progress };
    };
    const direct = await ask(upstream.url);
    const through = await ask(new URL(gateway.url));
    expect(direct).toEqual({
      result: { name: 'Ada', sampled: 'sampled' },
      seen: ['elicit Who?', 'log asking', 'sample'],
      progress: [1],
    });
    expect(through).toEqual(direct);
  }, 30_000);
});
