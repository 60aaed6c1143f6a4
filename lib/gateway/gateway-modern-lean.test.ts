// The lean path of the 2026-07-28 leg (modern-lean.ts) answers as SDK v2's path does: each case of
// the table is sent as the same raw HTTP request to two gateways in front of one 2026-07-28 server,
// one with the lean path and one without (`modernLean: false`), and both answers must be the one
// the table writes down, and the same, with the same record. The server notes every tools/call it
// gets: the lean path sends a call under an id of its own (`gw-lean-…`), so the table also says
// which cases it served, and that no call reached the server twice.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, inputRequired, McpServer } from '@modelcontextprotocol/server';
import { cli } from '@/lib/auth/actor';
import { setPolicyRule } from '@/lib/server/policy/policy-rules';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { uniq } from '@/testing/factories';
import {
  closedAfterEach,
  consoleActors,
  recordDetailsOf,
  testContext,
  type ConsoleActors,
} from '@/testing/gateway-fixtures';
import { runHttp } from './http';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

let actors: ConsoleActors;
beforeAll(async () => {
  actors = await consoleActors();
});
const open = closedAfterEach();

const CHALLENGE = 'Bearer realm="lean-test", error="invalid_token"';

interface Seen {
  id: unknown;
  ref: unknown;
  /** The request's params and its MCP headers, as the server got them. */
  params: unknown;
  headers: Record<string, unknown>;
}

/**
 * A 2026-07-28 server (SDK v2, one instance per request). `Bearer good` may do anything;
 * `Bearer lapsed` anything but tools/call, which gets 401 with its challenge.
 */
async function upstream(): Promise<{ url: string; calls: Seen[]; hung: string[] }> {
  const calls: Seen[] = [];
  // How each call of `hangs` ended: only by its client's cancel.
  const hung: string[] = [];
  const handler = createMcpHandler(
    () => {
      const server = new McpServer({ name: 'lean-upstream', version: '1.0.0' }, { capabilities: { logging: {} } });
      const readOnly = { readOnlyHint: true, openWorldHint: false };
      server.registerTool(
        'echo',
        { inputSchema: z.object({ text: z.string() }), annotations: readOnly },
        ({ text }) => ({
          content: [{ type: 'text', text: `said ${text}` }],
          _meta: { upstream: 'kept' },
        }),
      );
      server.registerTool('fails', { annotations: readOnly }, () => ({
        isError: true,
        content: [{ type: 'text', text: 'no such order' }],
      }));
      server.registerTool('chatty', { annotations: readOnly }, async (ctx) => {
        await ctx.mcpReq.notify({ method: 'notifications/message', params: { level: 'info', data: 'working' } });
        return { content: [{ type: 'text', text: 'done talking' }] };
      });
      server.registerTool('asks', { annotations: readOnly }, () =>
        inputRequired({
          inputRequests: {
            who: inputRequired.elicit({
              message: 'Who?',
              requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
            }),
          },
        }),
      );
      server.registerTool('hangs', { annotations: readOnly }, async (ctx) => {
        hung.push('running');
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 10_000);
          ctx.mcpReq.signal.addEventListener('abort', () => {
            clearTimeout(timer);
            hung.push('cancelled');
            resolve();
          });
        });
        return { content: [{ type: 'text', text: 'woke' }] };
      });
      server.registerTool('blocked_tool', { annotations: readOnly }, () => ({
        content: [{ type: 'text', text: 'ran' }],
      }));
      return server;
    },
    { legacy: 'reject' },
  );
  const node = toNodeHandler(handler);
  const http = createServer((req, res) => {
    const token = req.headers.authorization;
    const method = req.headers['mcp-method'];
    const refused = token !== 'Bearer good' && !(token === 'Bearer lapsed' && method !== 'tools/call');
    const refuse = () => {
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': CHALLENGE });
      res.end('{"error":"invalid_token"}');
    };
    if (method !== 'tools/call') return void (refused ? refuse() : node(req, res));
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString()) as {
        id: unknown;
        params: { _meta?: Record<string, unknown> };
      };
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([k]) => k.startsWith('mcp-') || ['authorization', 'accept'].includes(k)),
      );
      calls.push({ id: body.id, ref: body.params._meta?.['countersign/requestRef'], params: body.params, headers });
      if (refused) return refuse();
      void node(req, res, body);
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  open.push(async () => {
    await handler.close();
    http.closeAllConnections();
    await new Promise((r) => http.close(r));
  });
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`, calls, hung };
}

interface Sent {
  name: string;
  arguments?: Record<string, unknown>;
  token?: string;
  /** Headers put over (undefined: left out) the ones SDK v2's client sends. */
  headers?: Record<string, string | undefined>;
  capabilities?: Record<string, unknown>;
}

/** A 2026-07-28 `tools/call` as SDK v2's client sends it; its answer, what varies per run masked. */
async function send(url: string, ref: string, c: Sent, signal?: AbortSignal) {
  const body = {
    jsonrpc: '2.0',
    id: 'call-1',
    method: 'tools/call',
    params: {
      name: c.name,
      arguments: c.arguments ?? {},
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'lean-test', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': c.capabilities ?? {},
        'countersign/requestRef': ref,
      },
    },
  };
  const headers: Record<string, string> = {};
  const all: Record<string, string | undefined> = {
    authorization: `Bearer ${c.token ?? 'good'}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'tools/call',
    'mcp-name': c.name,
    ...c.headers,
  };
  for (const [k, v] of Object.entries(all)) if (v !== undefined) headers[k] = v;
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal });
  const type = res.headers.get('content-type') ?? '';
  const text = await res.text();
  const messages = type.includes('text/event-stream')
    ? text
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => JSON.parse(l.slice(5)) as unknown)
    : [JSON.parse(text) as unknown];
  const masked = JSON.parse(
    JSON.stringify(messages)
      .replaceAll(/evt_[0-9a-f-]{36}\.\d+/g, 'evt_*')
      .replaceAll(/"requestState":"[^"]+"/g, '"requestState":"*"'),
  ) as unknown[];
  return {
    status: res.status,
    type: type.split(';')[0],
    challenge: res.headers.get('www-authenticate'),
    messages: masked,
  };
}

/** The ways the answers go, written from the contract (docs/gateway.md) and the server above. */
const result = (r: Record<string, unknown>) => [{ jsonrpc: '2.0', id: 'call-1', result: r }];
// The server's identity, as SDK v2's server stamps it on every 2026-07-28 result; the record's names.
const recorded = (ref: string) => ({
  'io.modelcontextprotocol/serverInfo': { name: 'lean-upstream', version: '1.0.0' },
  'countersign/requestRef': ref,
  'countersign/eventId': 'evt_*',
});

interface Case {
  name: string;
  sent: Sent;
  /** Whether the lean path serves it (sends it upstream itself), and how often the server gets it. */
  lean: boolean;
  upstream: number;
  status: number;
  challenge?: string;
  /** The answer's messages (the last one for a stream); `ref` is the call's request reference. */
  answer: (ref: string) => unknown;
}

const CASES: Case[] = [
  {
    name: 'an allowed call',
    sent: { name: 'echo', arguments: { text: 'hi' } },
    lean: true,
    upstream: 1,
    status: 200,
    answer: (ref) =>
      result({
        content: [{ type: 'text', text: 'said hi' }],
        _meta: { upstream: 'kept', ...recorded(ref) },
        resultType: 'complete',
      }),
  },
  {
    name: 'a call refused by policy',
    sent: { name: 'blocked_tool' },
    lean: false,
    upstream: 0,
    status: 200,
    answer: (ref) =>
      result({
        isError: true,
        content: [
          {
            type: 'text',
            text: 'The tool "blocked_tool" is blocked by Countersign policy: it was not called, and cannot be approved.',
          },
        ],
        _meta: { 'countersign/error': { category: 'denied_by_policy', retry: 'no' }, ...recorded(ref) },
        resultType: 'complete',
      }),
  },
  {
    name: 'an unknown tool',
    sent: { name: 'no_such_tool' },
    lean: true,
    upstream: 1,
    status: 200,
    answer: () => [
      {
        jsonrpc: '2.0',
        id: 'call-1',
        error: expect.objectContaining({ code: -32602, message: expect.stringContaining('no_such_tool') }),
      },
    ],
  },
  {
    name: 'Mcp-Name not the body’s tool',
    sent: { name: 'echo', arguments: { text: 'hi' }, headers: { 'mcp-name': 'fails' } },
    lean: false,
    upstream: 0,
    status: 400,
    answer: () => [{ jsonrpc: '2.0', id: 'call-1', error: expect.objectContaining({ code: -32020 }) }],
  },
  {
    name: 'no MCP-Protocol-Version header',
    sent: { name: 'echo', arguments: { text: 'hi' }, headers: { 'mcp-protocol-version': undefined } },
    lean: false,
    upstream: 0,
    status: 400,
    answer: () => [{ jsonrpc: '2.0', id: 'call-1', error: expect.objectContaining({ code: -32020 }) }],
  },
  {
    name: 'the tool’s own error',
    sent: { name: 'fails' },
    lean: true,
    upstream: 1,
    status: 200,
    answer: (ref) =>
      result({
        isError: true,
        content: [{ type: 'text', text: 'no such order' }],
        _meta: recorded(ref),
        resultType: 'complete',
      }),
  },
  {
    name: 'the server’s 401 with its challenge',
    sent: { name: 'echo', arguments: { text: 'hi' }, token: 'lapsed' },
    lean: true,
    upstream: 1,
    status: 401,
    challenge: CHALLENGE,
    answer: () => [{ error: 'invalid_token' }],
  },
  {
    name: 'an answer the server streams (SSE)',
    sent: { name: 'chatty' },
    lean: true,
    upstream: 1,
    status: 200,
    answer: (ref) =>
      result({ content: [{ type: 'text', text: 'done talking' }], _meta: recorded(ref), resultType: 'complete' }),
  },
  {
    name: 'an input_required round',
    sent: { name: 'asks', capabilities: { elicitation: { form: {} } } },
    lean: true,
    upstream: 1,
    status: 200,
    answer: () =>
      result(
        expect.objectContaining({
          resultType: 'input_required',
          inputRequests: { who: expect.objectContaining({ method: 'elicitation/create' }) },
          requestState: '*',
        }),
      ),
  },
];

async function gateways() {
  const server = uniq('lean');
  await trustServer(cli, server);
  await setPolicyRule(cli, { server, tool: null, requiredApprovals: 0 });
  await setPolicyRule(cli, { server, tool: 'blocked_tool', requiredApprovals: 'blocked' });
  const up = await upstream();
  const start = async (modernLean: boolean) => {
    const t = testContext(actors, server, { modernLean });
    const g = await runHttp(t.ctx, new URL(up.url), '127.0.0.1', 0);
    open.push(async () => {
      await g.close();
      await t.ctx.reporter.close(2000);
    });
    // The server's era learnt for both credentials, and its catalog listed: what the lean path needs.
    for (const token of ['good', 'lapsed']) await list(g.url, token);
    return { url: g.url, ctx: t.ctx };
  };
  return { up, lean: await start(true), sdk: await start(false) };
}

async function list(url: string, token: string) {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
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
          'io.modelcontextprotocol/clientInfo': { name: 'lean-test', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  });
  expect(res.status).toBe(200);
  await res.text();
}

const masked = (rows: Awaited<ReturnType<typeof recordDetailsOf>>) => rows.map((r) => ({ ...r, eventId: '*' }));

describe('the lean path of a 2026-07-28 tools/call', () => {
  it.each(CASES)('$name: answered as the SDK path answers it', async (c) => {
    const { up, lean, sdk } = await gateways();
    const answers = [];
    const refs = [];
    for (const g of [lean, sdk]) {
      const ref = `ref-${randomUUID()}`;
      refs.push(ref);
      const answer = await send(g.url, ref, c.sent);
      expect(answer.status).toBe(c.status);
      expect(answer.challenge).toBe(c.challenge ?? null);
      expect(answer.messages.slice(-1)).toEqual(c.answer(ref));
      answers.push({ ...answer, messages: JSON.parse(JSON.stringify(answer.messages).replaceAll(ref, 'REF')) });
    }
    expect(answers[0]).toEqual(answers[1]);
    const [leanCalls, sdkCalls] = refs.map((ref) => up.calls.filter((s) => s.ref === ref));
    expect(leanCalls).toHaveLength(c.upstream);
    expect(sdkCalls).toHaveLength(c.upstream);
    // The lean path's own id upstream: it served the call; the SDK client numbers its requests.
    const leanServed = leanCalls.some((s) => typeof s.id === 'string' && s.id.startsWith('gw-lean-'));
    if (c.upstream) expect(leanServed).toBe(c.lean);
    expect(sdkCalls.every((s) => typeof s.id === 'number')).toBe(true);
    // What the server got is the same, but for the id and the call's request reference.
    const seen = (calls: Seen[], ref: string) =>
      calls.map((s) => JSON.parse(JSON.stringify({ ...s, id: undefined }).replaceAll(ref, 'REF')) as unknown);
    expect(seen(leanCalls, refs[0])).toEqual(seen(sdkCalls, refs[1]));
    // The same record, if any.
    await lean.ctx.reporter.flush();
    await sdk.ctx.reporter.flush();
    const [leanRecords, sdkRecords] = await Promise.all(refs.map((ref) => recordDetailsOf(ref)));
    expect(masked(leanRecords)).toEqual(masked(sdkRecords));
  });

  it('a call its client cancels while the server runs it: the cancel reaches the server, and the same record', async () => {
    const { up, lean, sdk } = await gateways();
    const refs: string[] = [];
    for (const g of [lean, sdk]) {
      const ref = `ref-${randomUUID()}`;
      refs.push(ref);
      const cancel = new AbortController();
      const answer = send(g.url, ref, { name: 'hangs' }, cancel.signal);
      const running = up.hung.length + 1;
      await vi.waitFor(() => expect(up.hung).toHaveLength(running), { timeout: 5000, interval: 20 });
      cancel.abort();
      await expect(answer).rejects.toThrow();
      await vi.waitFor(() => expect(up.hung.at(-1)).toBe('cancelled'), { timeout: 5000, interval: 20 });
    }
    expect(up.calls.find((s) => s.ref === refs[0])?.id).toMatch(/^gw-lean-/);
    await lean.ctx.reporter.flush();
    await sdk.ctx.reporter.flush();
    const read = async (ref: string) => {
      await vi.waitFor(async () => expect(await recordDetailsOf(ref)).toHaveLength(1), { timeout: 5000, interval: 50 });
      return masked(await recordDetailsOf(ref));
    };
    const [leanRecords, sdkRecords] = [await read(refs[0]), await read(refs[1])];
    // docs/gateway.md "Cancellation": recorded cancelled, its outcome unknown.
    expect(leanRecords).toMatchObject([{ toolName: 'hangs', category: 'cancelled' }]);
    expect(leanRecords).toEqual(sdkRecords);
  }, 30_000);
});
