// Bad input at the gateway over HTTP (issue #42, plan step 6). Each expected answer is written
// from the 2026-07-28 spec and checked against the server answering directly:
// - Mcp-Method / Mcp-Name headers that disagree with the body: HTTP 400, JSON-RPC -32020
//   (HeaderMismatch; "For HTTP, the response status code MUST be 400 Bad Request");
// - an unknown protocol version: a 2026 request naming "2099-01-01" gets -32022
//   (UnsupportedProtocolVersion, HTTP 400, `data.supported` naming what is spoken); a 2025
//   `initialize` naming it gets the 2025 negotiation answer (the server's own latest version);
// - a server whose discovery lies about its era: the gateway does not loop, and answers an error;
// - a server that asks for input round after round: bounded by the client's maxRounds (2026) or
//   the SDK's legacy shim (8 rounds, a bridged 2025 client), and the call is recorded once;
// - a flood of list changes on the gateway's one subscriptions/listen: the gateway stays
//   responsive and coalesces them (list-changes.ts `coalesced`).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { Client, SdkError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createMcpHandler, inputRequired, type McpServer } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { cli } from '@/lib/auth/actor';
import { setPolicyRule } from '@/lib/server/policy/policy-rules';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { uniq } from '@/testing/factories';
import { closedAfterEach, consoleActors, recordsOf, testContext, type ConsoleActors } from '@/testing/gateway-fixtures';
import { buildV2Server, startV2HttpServer, type Era } from '@/testing/mcp-v2-server';
import type { ListChanges } from '@/testing/mcp-v2-rounds';
import { runHttp } from './http';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

let actors: ConsoleActors;
beforeAll(async () => {
  actors = await consoleActors();
});
const open = closedAfterEach();

const MODERN = '2026-07-28';
const envelope = (version = MODERN) => ({
  'io.modelcontextprotocol/protocolVersion': version,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'bad-input-test', version: '1.0.0' },
});

async function gatewayFor(upstream: string, over: Parameters<typeof testContext>[2] = {}) {
  const server = uniq('v2-bad');
  await trustServer(cli, server);
  await setPolicyRule(cli, { server, tool: null, requiredApprovals: 0 });
  const t = testContext(actors, server, over);
  const g = await runHttp(t.ctx, new URL(upstream), '127.0.0.1', 0);
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await g.close();
    await t.ctx.reporter.close(2000);
  };
  open.push(close);
  return { url: g.url, reporter: t.ctx.reporter, logs: t.logs, close };
}

async function bothEras(build?: (era: Era, changes?: ListChanges) => McpServer) {
  const s = await startV2HttpServer(0, '127.0.0.1', build);
  open.push(() => s.close());
  return s.url;
}

async function modernOnly(build: (era: Era) => McpServer = buildV2Server): Promise<string> {
  const handler = createMcpHandler(({ era }) => build(era), { legacy: 'reject' });
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

interface Message {
  id?: unknown;
  result?: { protocolVersion?: string };
  error: { code: number; data: { supported: string[]; requested: string } };
}

/** One raw POST; the answer's status and its JSON-RPC message (an SSE answer's first message). */
async function post(url: string, body: unknown, headers: Record<string, string>) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const data = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? 'null');
  return { status: response.status, message: JSON.parse(data) as Message };
}

const modernHeaders = (method: string, name?: string, version = MODERN) => ({
  'mcp-protocol-version': version,
  'mcp-method': method,
  ...(name ? { 'mcp-name': name } : {}),
});

async function v2Client(url: string, mode: 'legacy' | 'auto', maxRounds?: number): Promise<Client> {
  const c = new Client(
    { name: 'bad-input-client', version: '1.0.0' },
    {
      versionNegotiation: { mode },
      capabilities: { elicitation: { form: {} } },
      ...(maxRounds ? { inputRequired: { maxRounds } } : {}),
    },
  );
  c.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name: 'Ada' } }));
  await c.connect(new StreamableHTTPClientTransport(new URL(url)));
  open.push(() => c.close());
  return c;
}

describe('Mcp-Method / Mcp-Name headers that disagree with the body', () => {
  const cases = [
    {
      what: 'Mcp-Method names another method',
      body: { jsonrpc: '2.0', id: 7, method: 'tools/list', params: { _meta: envelope() } },
      headers: modernHeaders('prompts/list'),
    },
    {
      what: 'Mcp-Name names another tool',
      body: {
        jsonrpc: '2.0',
        id: 8,
        method: 'tools/call',
        params: { name: 'test_simple_text', arguments: {}, _meta: envelope() },
      },
      headers: modernHeaders('tools/call', 'test_error_handling'),
    },
    {
      what: 'Mcp-Name is missing on a tools/call',
      body: {
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { name: 'test_simple_text', arguments: {}, _meta: envelope() },
      },
      headers: modernHeaders('tools/call'),
    },
  ];
  it.each(cases)('$what: HTTP 400 with -32020, as the server answers directly; nothing relayed', async (c) => {
    let relayed = 0;
    const upstream = await bothEras((era, changes) => {
      relayed++;
      return buildV2Server(era, changes);
    });
    const direct = await post(upstream, c.body, c.headers);
    expect(direct.status).toBe(400);
    expect(direct.message.error.code).toBe(-32020);
    const g = await gatewayFor(upstream);
    relayed = 0;
    const through = await post(g.url, c.body, c.headers);
    expect(through.status).toBe(400);
    expect(through.message.error.code).toBe(-32020);
    expect(through.message.id).toEqual(direct.message.id);
    expect(relayed).toBe(0);
  });
});

describe('an unknown protocol version', () => {
  it('a 2026 request naming 2099-01-01 gets -32022 naming 2026-07-28, as directly', async () => {
    const upstream = await bothEras();
    const body = { jsonrpc: '2.0', id: 'v-1', method: 'tools/list', params: { _meta: envelope('2099-01-01') } };
    const headers = modernHeaders('tools/list', undefined, '2099-01-01');
    const direct = await post(upstream, body, headers);
    const g = await gatewayFor(upstream);
    const through = await post(g.url, body, headers);
    for (const answer of [direct, through]) {
      expect(answer.status).toBe(400);
      expect(answer.message.id).toBe('v-1');
      expect(answer.message.error.code).toBe(-32022);
      expect(answer.message.error.data.supported).toContain(MODERN);
      expect(answer.message.error.data.requested).toBe('2099-01-01');
    }
    expect(through.message.error.data.supported).toEqual(direct.message.error.data.supported);
  });

  it('a 2025 initialize naming 2099-01-01 gets the server’s own version, as directly', async () => {
    const upstream = await bothEras();
    const body = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2099-01-01', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    };
    const direct = await post(upstream, body, {});
    const g = await gatewayFor(upstream);
    const through = await post(g.url, body, {});
    expect(direct.status).toBe(200);
    expect(through.status).toBe(200);
    // 2025: "If the server supports the requested version, it MUST respond with the same version.
    // Otherwise, the server MUST respond with another protocol version it supports."
    expect(direct.message.result?.protocolVersion).toMatch(/^2025-/);
    expect(through.message.result?.protocolVersion).toBe(direct.message.result?.protocolVersion);
  });
});

/** A server on node:http that lies about its era; counts what it was sent. */
async function liar(kind: 'claims-modern' | 'claims-legacy') {
  const real = await bothEras();
  const discover = await post(
    real,
    { jsonrpc: '2.0', id: 0, method: 'server/discover', params: { _meta: envelope() } },
    modernHeaders('server/discover'),
  );
  const hits: string[] = [];
  const answer = (res: ServerResponse, status: number, message: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(message));
  };
  const http = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST')
        return answer(res, 405, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'no' } });
      const m = JSON.parse(Buffer.concat(chunks).toString() || '{}') as { id?: unknown; method?: string };
      hits.push(m.method ?? 'response');
      if (m.id === undefined) return void res.writeHead(202).end();
      if (kind === 'claims-modern') {
        // Discovery says 2026-07-28; every other request is answered as a 2025 server without a session does.
        if (m.method === 'server/discover') return answer(res, 200, { ...discover.message, id: m.id });
        return answer(res, 400, {
          jsonrpc: '2.0',
          id: null,
          error: { code: -32000, message: 'Bad Request: Server not initialized' },
        });
      }
      // Discovery is not known (a 2025 server's answer), but initialize is refused as a 2026-only server does.
      if (m.method === 'server/discover')
        return answer(res, 200, { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } });
      return answer(res, 400, {
        jsonrpc: '2.0',
        id: m.id,
        error: {
          code: -32022,
          message: 'Unsupported protocol version',
          data: { supported: [MODERN], requested: '2025-11-25' },
        },
      });
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  open.push(async () => {
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  });
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`, hits };
}

describe('a server whose discovery lies about its era', () => {
  it.each(['claims-modern', 'claims-legacy'] as const)(
    '%s: the client gets an error within a bound, the server a bounded number of requests',
    async (kind) => {
      const server = await liar(kind);
      const g = await gatewayFor(server.url);
      const started = Date.now();
      for (const id of [1, 2]) {
        const answer = await post(
          g.url,
          { jsonrpc: '2.0', id, method: 'tools/list', params: { _meta: envelope() } },
          modernHeaders('tools/list'),
        );
        expect(answer.message.id ?? id).toBe(id);
        expect(answer.message.error).toBeDefined();
        expect(answer.message.result).toBeUndefined();
      }
      expect(Date.now() - started).toBeLessThan(5000);
      // Each request: at most a probe, a re-probe and the request itself (and the 2025 handshake).
      expect(server.hits.length).toBeLessThanOrEqual(10);
    },
  );
});

/** The test server's tools and one that asks a new question on every round, forever. */
function asksForever(era: Era, changes?: ListChanges): McpServer {
  const server = buildV2Server(era, changes);
  let round = 0;
  server.registerTool('ask_forever', { description: 'Never satisfied' }, async () => {
    round++;
    return inputRequired({
      inputRequests: {
        [`q${round}`]: inputRequired.elicit({
          message: `Question ${round}?`,
          requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        }),
      },
    });
  });
  return server;
}

describe('a server that asks for input round after round', () => {
  it('a 2026 client gives up after its maxRounds; the call is recorded once', async () => {
    const g = await gatewayFor(await bothEras(asksForever), { roundAbandonMs: 300 });
    const c = await v2Client(g.url, 'auto', 3);
    expect(c.getProtocolEra()).toBe('modern');
    const ref = `ref-${randomUUID()}`;
    const error = await c
      .callTool({ name: 'ask_forever', arguments: {}, _meta: { 'countersign/requestRef': ref } })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(SdkError);
    expect((error as SdkError).message).toMatch(/after 3 rounds/);
    await new Promise((r) => setTimeout(r, 600));
    const records = await recordsOf(ref, g.reporter);
    expect(records).toHaveLength(1);
    expect(records[0].toolName).toBe('ask_forever');
  });

  it('a bridged 2025 client is stopped by the gateway’s shim after 8 rounds; the call is recorded once', async () => {
    // Long enough that a round the shim is still waiting on is not taken for abandoned under load.
    const g = await gatewayFor(await modernOnly(asksForever), { roundAbandonMs: 1500 });
    const c = await v2Client(g.url, 'legacy');
    let asked = 0;
    c.setRequestHandler('elicitation/create', async () => {
      asked++;
      return { action: 'accept', content: { name: 'Ada' } };
    });
    const ref = `ref-${randomUUID()}`;
    const result = await c
      .callTool({ name: 'ask_forever', arguments: {}, _meta: { 'countersign/requestRef': ref } })
      .then(
        (r) => ({ r }),
        (e: unknown) => ({ e }),
      );
    expect(JSON.stringify(result)).toMatch(/after 8 rounds/);
    expect(asked).toBe(8);
    await new Promise((r) => setTimeout(r, 2000));
    const records = await recordsOf(ref, g.reporter);
    expect(records).toHaveLength(1);
  });
});

describe('a flood of list changes on subscriptions/listen', () => {
  it('50,000 changes: a concurrent call completes quickly, the subscriber gets them coalesced', async () => {
    let flood = () => undefined as void;
    const upstream = await bothEras((era, changes) => {
      const server = buildV2Server(era, changes);
      if (changes) flood = () => void Array.from({ length: 50_000 }, () => changes.tools());
      return server;
    });
    const g = await gatewayFor(upstream);
    const c = await v2Client(g.url, 'auto');
    let told = 0;
    c.setNotificationHandler('notifications/tools/list_changed', () => void told++);
    await c.listen({ toolsListChanged: true });
    global.gc?.();
    const before = process.memoryUsage().heapUsed;
    flood();
    const started = Date.now();
    const simple = await c.callTool({ name: 'test_simple_text', arguments: {} });
    expect(simple.content).toEqual([{ type: 'text', text: 'This is a simple text response for testing.' }]);
    // Alone ~1.6 s in this shared process; unfolded it took 15-19 s alone (more beside other suites).
    expect(Date.now() - started).toBeLessThan(10_000);
    await new Promise((r) => setTimeout(r, 1500));
    // Coalesced: at least one, far fewer than sent.
    expect(told).toBeGreaterThanOrEqual(1);
    expect(told).toBeLessThan(100);
    global.gc?.();
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(200 * 1024 * 1024);
  });
});
