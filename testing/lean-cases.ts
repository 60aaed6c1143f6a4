// The lean paths' tests (lib/gateway/gateway-modern-lean.test.ts for 2026-07-28 calls,
// gateway-lean-session.test.ts for 2025 calls inside a session): one server on SDK v2 serving both
// eras, and the table of calls with the answers the contract (docs/gateway.md) gives them.
// The server notes every tools/call it gets: the lean path sends a call under an id of its own
// (`gw-lean-…`), so a test can say which calls it served, and that none reached the server twice.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, vi } from 'vitest';
import { z } from 'zod';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { inputRequired, McpServer } from '@modelcontextprotocol/server';
import { cli } from '@/lib/auth/actor';
import { runHttp } from '@/lib/gateway/http';
import { setPolicyRule } from '@/lib/server/policy/policy-rules';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { uniq } from './factories';
import { recordDetailsOf, testContext, type ConsoleActors } from './gateway-fixtures';
import { memoryEventStore } from './mcp-v2-server';
import { bothEras } from '../scripts/lib/v2-both-eras';

export const CHALLENGE = 'Bearer realm="lean-test", error="invalid_token"';
export const SERVER_INFO = { name: 'lean-upstream', version: '1.0.0' };

export interface Seen {
  id: unknown;
  ref: unknown;
  /** The request's params and its MCP headers, as the server got them. */
  params: unknown;
  headers: Record<string, unknown>;
}

/**
 * How the server answers a 2025 session's call: an SSE stream of one event (SDK v1's and v2's
 * default), the same after a priming event with event ids (an event store), or a JSON body.
 */
export type SessionAnswers = 'sse' | 'primed' | 'json';

export interface LeanUpstream {
  url: string;
  calls: Seen[];
  /** How each call of `hangs` and `mutters` went: `running`, then `cancelled` only by its client's cancel. */
  hung: string[];
  close(): Promise<void>;
}

function tools(server: McpServer, hung: string[]): McpServer {
  const readOnly = { readOnlyHint: true, openWorldHint: false };
  server.registerTool('echo', { inputSchema: z.object({ text: z.string() }), annotations: readOnly }, ({ text }) => ({
    content: [{ type: 'text', text: `said ${text}` }],
    _meta: { upstream: 'kept' },
  }));
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
  /** Runs until its client cancels it (or 10 s pass), noted in `hung`. */
  const hang = async (signal: AbortSignal) => {
    hung.push('running');
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 10_000);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        hung.push('cancelled');
        resolve();
      });
    });
    return { content: [{ type: 'text' as const, text: 'woke' }] };
  };
  server.registerTool('hangs', { annotations: readOnly }, (ctx) => hang(ctx.mcpReq.signal));
  // Says something on the call's stream first.
  server.registerTool('mutters', { annotations: readOnly }, async (ctx) => {
    await ctx.mcpReq.notify({ method: 'notifications/message', params: { level: 'info', data: 'starting' } });
    return hang(ctx.mcpReq.signal);
  });
  server.registerTool('blocked_tool', { annotations: readOnly }, () => ({
    content: [{ type: 'text', text: 'ran' }],
  }));
  return server;
}

/**
 * The server: 2026-07-28 requests one instance each, 2025 clients a session each. `Bearer good`
 * may do anything; `Bearer lapsed` anything but tools/call, which gets 401 with its challenge.
 */
export async function leanUpstream(answers: SessionAnswers = 'sse'): Promise<LeanUpstream> {
  const calls: Seen[] = [];
  const hung: string[] = [];
  const build = () => tools(new McpServer(SERVER_INFO, { capabilities: { logging: {} } }), hung);
  const route = bothEras(build, {
    enableJsonResponse: answers === 'json',
    ...(answers === 'primed' ? { eventStore: memoryEventStore(), retryInterval: 100 } : {}),
  });
  const node = toNodeHandler(route);
  const http = createServer((req, res) => {
    const token = req.headers.authorization;
    const refuse = () => {
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': CHALLENGE });
      res.end('{"error":"invalid_token"}');
    };
    if (req.method !== 'POST') return void (token === 'Bearer good' ? node(req, res) : refuse());
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString()) as {
        id: unknown;
        method?: string;
        params?: { _meta?: Record<string, unknown> };
      };
      const refused = token !== 'Bearer good' && !(token === 'Bearer lapsed' && body.method !== 'tools/call');
      if (body.method === 'tools/call') {
        const headers = Object.fromEntries(
          Object.entries(req.headers).filter(
            ([k]) => (k.startsWith('mcp-') && k !== 'mcp-session-id') || ['authorization', 'accept'].includes(k),
          ),
        );
        calls.push({ id: body.id, ref: body.params?._meta?.['countersign/requestRef'], params: body.params, headers });
      }
      if (refused) return refuse();
      void node(req, res, body);
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    calls,
    hung,
    close: async () => {
      await route.close();
      http.closeAllConnections();
      await new Promise((r) => http.close(r));
    },
  };
}

export interface Sent {
  name: string;
  arguments?: Record<string, unknown>;
  token?: string;
  /** Headers put over (undefined: left out) the ones SDK v2's client sends. */
  headers?: Record<string, string | undefined>;
  capabilities?: Record<string, unknown>;
}

export type Era = '2025' | '2026';

export interface Case {
  name: string;
  /** The eras it is sent in (default both). */
  eras?: Era[];
  sent: Sent;
  /** Whether the lean path serves it (sends it upstream itself), and how often the server gets it. */
  lean: boolean;
  upstream: number;
  status: number;
  challenge?: string;
  /** The answer's messages (the last one for a stream); `ref` is the call's request reference. */
  answer: (ref: string, era: Era) => unknown;
}

/** The ways the answers go, written from the contract (docs/gateway.md) and the server above. */
const result = (r: Record<string, unknown>) => [{ jsonrpc: '2.0', id: 'call-1', result: r }];
/**
 * A result as the client's era has it: in 2026-07-28, `resultType` and the server's identity
 * stamped by SDK v2's server; in both, the record's names.
 */
const inEra = (r: Record<string, unknown>, ref: string, era: Era) => {
  const meta = { ...(r._meta as object), 'countersign/requestRef': ref, 'countersign/eventId': 'evt_*' };
  return result(
    era === '2026'
      ? { ...r, _meta: { ...meta, 'io.modelcontextprotocol/serverInfo': SERVER_INFO }, resultType: 'complete' }
      : { ...r, _meta: meta },
  );
};

export const CASES: Case[] = [
  {
    name: 'an allowed call',
    sent: { name: 'echo', arguments: { text: 'hi' } },
    lean: true,
    upstream: 1,
    status: 200,
    answer: (ref, era) =>
      inEra({ content: [{ type: 'text', text: 'said hi' }], _meta: { upstream: 'kept' } }, ref, era),
  },
  {
    name: 'a call refused by policy',
    sent: { name: 'blocked_tool' },
    lean: false,
    upstream: 0,
    status: 200,
    answer: (ref, era) =>
      inEra(
        {
          isError: true,
          content: [
            {
              type: 'text',
              text: 'The tool "blocked_tool" is blocked by Countersign policy: it was not called, and cannot be approved.',
            },
          ],
          _meta: { 'countersign/error': { category: 'denied_by_policy', retry: 'no' } },
        },
        ref,
        era,
      ),
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
    eras: ['2026'],
    sent: { name: 'echo', arguments: { text: 'hi' }, headers: { 'mcp-name': 'fails' } },
    lean: false,
    upstream: 0,
    status: 400,
    answer: () => [{ jsonrpc: '2.0', id: 'call-1', error: expect.objectContaining({ code: -32020 }) }],
  },
  {
    name: 'no MCP-Protocol-Version header',
    eras: ['2026'],
    sent: { name: 'echo', arguments: { text: 'hi' }, headers: { 'mcp-protocol-version': undefined } },
    lean: false,
    upstream: 0,
    status: 400,
    answer: () => [{ jsonrpc: '2.0', id: 'call-1', error: expect.objectContaining({ code: -32020 }) }],
  },
  {
    // A 2025 session takes a request without the header as of the version it negotiated.
    name: 'no MCP-Protocol-Version header in a session',
    eras: ['2025'],
    sent: { name: 'echo', arguments: { text: 'hi' }, headers: { 'mcp-protocol-version': undefined } },
    lean: false,
    upstream: 1,
    status: 200,
    answer: (ref, era) =>
      inEra({ content: [{ type: 'text', text: 'said hi' }], _meta: { upstream: 'kept' } }, ref, era),
  },
  {
    name: 'the tool’s own error',
    sent: { name: 'fails' },
    lean: true,
    upstream: 1,
    status: 200,
    answer: (ref, era) => inEra({ isError: true, content: [{ type: 'text', text: 'no such order' }] }, ref, era),
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
    name: 'an answer the server streams (a notification, then the result)',
    sent: { name: 'chatty' },
    lean: true,
    upstream: 1,
    status: 200,
    answer: (ref, era) => inEra({ content: [{ type: 'text', text: 'done talking' }] }, ref, era),
  },
  {
    name: 'an input_required round',
    eras: ['2026'],
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

export const casesOf = (era: Era) => CASES.filter((c) => !c.eras || c.eras.includes(era));

/** An answer's parts the tests compare: the messages of a JSON body or of the SSE events, what varies per run masked. */
export async function answerOf(res: Response) {
  const type = res.headers.get('content-type') ?? '';
  const text = await res.text();
  const messages = type.includes('text/event-stream')
    ? text
        .split('\n')
        .filter((l) => l.startsWith('data:') && l.length > 'data: '.length)
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

/** What the server got, but for the id and the call's request reference. */
const seen = (calls: Seen[], ref: string) =>
  calls.map((s) => JSON.parse(JSON.stringify({ ...s, id: undefined }).replaceAll(ref, 'REF')) as unknown);

/**
 * The server, and two gateways in front of it: one with the lean path, one without
 * (`modernLean: false`), each made ready by `ready` (what the lean path needs: the server's era
 * learnt, its catalog listed). Everything is closed through `open`.
 */
export async function leanGateways<T>(
  actors: ConsoleActors,
  open: (() => Promise<unknown>)[],
  ready: (url: string) => Promise<T>,
  answers?: SessionAnswers,
) {
  const server = uniq('lean');
  await trustServer(cli, server);
  await setPolicyRule(cli, { server, tool: null, requiredApprovals: 0 });
  await setPolicyRule(cli, { server, tool: 'blocked_tool', requiredApprovals: 'blocked' });
  const up = await leanUpstream(answers);
  open.push(up.close);
  const start = async (modernLean: boolean) => {
    const t = testContext(actors, server, { modernLean });
    const g = await runHttp(t.ctx, new URL(up.url), '127.0.0.1', 0);
    open.push(async () => {
      await g.close();
      await t.ctx.reporter.close(2000);
    });
    return { url: g.url, ctx: t.ctx, ...(await ready(g.url)) };
  };
  return { up, lean: await start(true), sdk: await start(false) };
}

type Gateways = Awaited<ReturnType<typeof leanGateways>>;

/** A call's records, their event ids (which differ between the gateways by design) masked. */
const recordsOf = async (ref: string) => (await recordDetailsOf(ref)).map((r) => ({ ...r, eventId: '*' }));

/**
 * The case's call, sent as `refs[0]` through the lean gateway and as `refs[1]` through the other:
 * the server got each as often as the case says (never twice), the same but for the id and the
 * reference, under the lean path's own id where the case says it serves it (the SDK client numbers
 * its requests); and the two have the same record, if any.
 */
export async function expectSameCalls(c: Case, { up, lean, sdk }: Gateways, refs: string[]) {
  const [leanCalls, sdkCalls] = refs.map((ref) => up.calls.filter((s) => s.ref === ref));
  expect(leanCalls).toHaveLength(c.upstream);
  expect(sdkCalls).toHaveLength(c.upstream);
  const leanServed = leanCalls.some((s) => typeof s.id === 'string' && s.id.startsWith('gw-lean-'));
  if (c.upstream) expect(leanServed).toBe(c.lean);
  expect(sdkCalls.every((s) => typeof s.id === 'number')).toBe(true);
  expect(seen(leanCalls, refs[0])).toEqual(seen(sdkCalls, refs[1]));
  await lean.ctx.reporter.flush();
  await sdk.ctx.reporter.flush();
  const [leanRecords, sdkRecords] = await Promise.all(refs.map(recordsOf));
  expect(leanRecords).toEqual(sdkRecords);
  return leanCalls;
}

/** A call of `tool` cancelled by its client, through each gateway: one record each, the same, cancelled. */
export async function expectCancelled({ up, lean, sdk }: Gateways, refs: string[], tool = 'hangs') {
  expect(up.calls.find((s) => s.ref === refs[0])?.id).toMatch(/^gw-lean-/);
  expect(up.calls.filter((s) => refs.includes(s.ref as string))).toHaveLength(2);
  await lean.ctx.reporter.flush();
  await sdk.ctx.reporter.flush();
  const read = async (ref: string) => {
    await vi.waitFor(async () => expect(await recordDetailsOf(ref)).toHaveLength(1), { timeout: 5000, interval: 50 });
    return recordsOf(ref);
  };
  const [leanRecords, sdkRecords] = [await read(refs[0]), await read(refs[1])];
  // docs/gateway.md "Cancellation": recorded cancelled, its outcome unknown.
  expect(leanRecords).toMatchObject([{ toolName: tool, category: 'cancelled' }]);
  expect(leanRecords).toEqual(sdkRecords);
}
