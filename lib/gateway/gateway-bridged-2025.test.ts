// A 2025 client bridged over HTTP (docs/gateway.md "Both eras"): SDK v2's client in legacy mode
// in front of a server that speaks only 2026-07-28 (SDK v2's createMcpHandler with
// `legacy: 'reject'`), its session served by the gateway's 2025 instance and each of its requests
// relayed in 2026-07-28. Three corners of that pairing:
// - auth: each request reaches the server with its own Authorization (a client that changes its
//   token mid-session is seen with the new one), and the server's 401/403 with its
//   WWW-Authenticate comes back to that request as the server sent it;
// - decline: a call that needs approval asks the client by a URL elicitation while it is held; a
//   client that declines gets a tool error, the request is withdrawn in the console (revoked) and
//   the call recorded as never sent, the server never having seen it;
// - the hidden set: a tool blocked, then unblocked, by policy is announced to the session with
//   `notifications/tools/list_changed`, and the next tools/list shows the change.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { cli } from '@/lib/auth/actor';
import { setPolicyRule } from '@/lib/server/policy/policy-rules';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { api, call as callRoute } from '@/testing/api-harness';
import { uniq } from '@/testing/factories';
import {
  approvalsOf,
  closedAfterEach,
  consoleActors,
  decide,
  recordsOf,
  testContext,
  type ConsoleActors,
  type ContextOverrides,
} from '@/testing/gateway-fixtures';
import { buildV2Server } from '@/testing/mcp-v2-server';
import { runHttp } from './http';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

let actors: ConsoleActors;
beforeAll(async () => {
  actors = await consoleActors();
});
const open = closedAfterEach();

const UNAUTHORIZED = 'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"';
const FORBIDDEN = 'Bearer error="insufficient_scope", scope="tools:call"';
const SIMPLE_TEXT = [{ type: 'text', text: 'This is a simple text response for testing.' }];

interface Upstream {
  url: string;
  /** Every request the server was sent: its Mcp-Method (or HTTP method) and Authorization. */
  seen: string[];
}

/**
 * The SDK v2 test server's tools, served to 2026-07-28 clients only. With `checking`, every
 * request's bearer token is checked first: `good` may do anything, `limited` anything but
 * tools/call (403), any other token or none 401, each with its WWW-Authenticate.
 */
async function modernOnlyServer(checking = false): Promise<Upstream> {
  const handler = createMcpHandler(({ era }) => buildV2Server(era), { legacy: 'reject' });
  const node = toNodeHandler(handler);
  const seen: string[] = [];
  const refuse = (res: ServerResponse, status: number, challenge: string) => {
    res.writeHead(status, { 'content-type': 'application/json', 'www-authenticate': challenge });
    res.end(JSON.stringify({ error: status === 401 ? 'invalid_token' : 'insufficient_scope' }));
  };
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const method = req.headers['mcp-method'];
    const token = req.headers.authorization;
    seen.push(`${typeof method === 'string' ? method : req.method} ${token ?? '-'}`);
    if (checking) {
      if (token !== 'Bearer good' && token !== 'Bearer limited') return refuse(res, 401, UNAUTHORIZED);
      if (token === 'Bearer limited' && method === 'tools/call') return refuse(res, 403, FORBIDDEN);
    }
    void node(req, res);
  };
  const http = createServer(handle);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  open.push(async () => {
    await handler.close();
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  });
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`, seen };
}

async function gatewayFor(upstream: string, requiredApprovals: number, over: ContextOverrides = {}) {
  const server = uniq('v2-bridged');
  await trustServer(cli, server);
  await setPolicyRule(cli, { server, tool: null, requiredApprovals });
  const t = testContext(actors, server, over);
  const g = await runHttp(t.ctx, new URL(upstream), '127.0.0.1', 0);
  open.push(async () => {
    await g.close();
    await t.ctx.reporter.close(2000);
  });
  return { url: g.url, ctx: t.ctx, server };
}

/** What the client's transport got back for each POST: its JSON-RPC method, status and WWW-Authenticate. */
interface Answered {
  method: string;
  status: number;
  challenge: string | null;
  body: string;
}

/**
 * The transport's fetch of a client whose Authorization is the current `token.value` on every
 * request (as a client whose credential is refreshed sends it), noting each POST answered with an
 * error status in `answered`.
 */
function fetchWithToken(token: { value: string | null }, answered: Answered[]) {
  return async (input: string | URL | Request, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    if (token.value) headers.set('authorization', `Bearer ${token.value}`);
    const response = await fetch(input, { ...init, headers });
    if (init?.method === 'POST' && typeof init.body === 'string' && response.status >= 400) {
      const { method } = JSON.parse(init.body) as { method?: string };
      answered.push({
        method: method ?? '-',
        status: response.status,
        challenge: response.headers.get('www-authenticate'),
        body: await response.clone().text(),
      });
    }
    return response;
  };
}

/** SDK v2's client in legacy mode (a 2025 client), its token `token.value`. */
async function legacyClient(url: string, token: { value: string | null }, capabilities: Record<string, unknown> = {}) {
  const answered: Answered[] = [];
  const c = new Client(
    { name: 'bridged-test-client', version: '1.0.0' },
    { versionNegotiation: { mode: 'legacy' }, capabilities },
  );
  const connect = async () => {
    await c.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: fetchWithToken(token, answered) }));
    expect(c.getProtocolEra()).toBe('legacy');
  };
  open.push(() => c.close());
  return { c, connect, answered };
}

/** SDK v1's client (2025 only), its token `token.value`. */
async function v1Client(url: string, token: { value: string | null }) {
  const answered: Answered[] = [];
  const c = new V1Client({ name: 'bridged-v1-test-client', version: '1.0.0' });
  const connect = () => c.connect(new V1Transport(new URL(url), { fetch: fetchWithToken(token, answered) }));
  open.push(() => c.close());
  return { c, connect, answered };
}

const simple = (ref = `ref-${randomUUID()}`) => ({
  name: 'test_simple_text',
  arguments: {},
  _meta: { 'countersign/requestRef': ref },
});

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 5000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.each([
  { sdk: 'SDK v2 (legacy mode)', make: legacyClient },
  { sdk: 'SDK v1', make: v1Client },
])('a bridged 2025 client on $sdk in front of a 2026-07-28-only server that checks the token', ({ make }) => {
  it('each request carries its own Authorization; 401/403 with WWW-Authenticate come back to it as sent', async () => {
    const server = await modernOnlyServer(true);
    const g = await gatewayFor(server.url, 0);

    // No session for a token the server refuses: its initialize gets the server's 401.
    const refused = await make(g.url, { value: 'bad' });
    await expect(refused.connect()).rejects.toThrow();
    expect(refused.answered).toEqual([
      { method: 'initialize', status: 401, challenge: UNAUTHORIZED, body: '{"error":"invalid_token"}' },
    ]);

    const token = { value: 'good' as string | null };
    const { c, connect, answered } = await make(g.url, token);
    await connect();
    const before = server.seen.length;
    expect((await c.listTools()).tools.map((t) => t.name)).toContain('test_simple_text');
    expect((await c.callTool(simple())).content).toEqual(SIMPLE_TEXT);

    // The same session, the token changed: the server sees the new one, and refuses the call.
    token.value = 'limited';
    await expect(c.callTool(simple())).rejects.toThrow();
    expect(answered.at(-1)).toEqual({
      method: 'tools/call',
      status: 403,
      challenge: FORBIDDEN,
      body: '{"error":"insufficient_scope"}',
    });
    token.value = 'expired';
    await expect(c.listTools()).rejects.toThrow();
    expect(answered.at(-1)).toEqual({
      method: 'tools/list',
      status: 401,
      challenge: UNAUTHORIZED,
      body: '{"error":"invalid_token"}',
    });

    // Good again: the session still serves it.
    token.value = 'good';
    expect((await c.listTools()).tools.map((t) => t.name)).toContain('test_simple_text');
    // Every request the server saw in the session carried the token of the client request it served.
    expect(server.seen.slice(before).filter((s) => /^tools\/(call|list) /.test(s))).toEqual([
      'tools/list Bearer good',
      'tools/call Bearer good',
      'tools/call Bearer limited',
      'tools/list Bearer expired',
      'tools/list Bearer good',
    ]);
    expect(answered).toHaveLength(2);
  });
});

describe('a bridged 2025 client that declared URL elicitation, whose call needs approval', () => {
  it('is asked by a URL elicitation while its call is held; declining gets a tool error, the request revoked, the call never sent', async () => {
    const server = await modernOnlyServer();
    const g = await gatewayFor(server.url, 1, { approvalWaitMs: 1500 });
    const ref = `ref-${randomUUID()}`;
    const { c, connect } = await legacyClient(g.url, { value: null }, { elicitation: { url: {} } });
    const asked: { mode?: string; url?: string; message?: string }[] = [];
    c.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params as never);
      return { action: 'decline' };
    });
    await connect();

    const result = await c.callTool(simple(ref));
    expect(asked).toHaveLength(1);
    expect(asked[0].mode).toBe('url');
    expect(asked[0].url).toMatch(/^http:\/\/countersign\.test\/approvals\/[^/]+$/);
    expect(asked[0].message).toContain('"test_simple_text" needs approval by a reviewer of acme');
    expect(result.isError).toBe(true);
    expect((result._meta as Record<string, unknown>)['countersign/error']).toMatchObject({
      category: 'approval_required',
    });
    expect((result.content as { text: string }[])[0].text).toContain('the request was withdrawn from Countersign');

    const approvals = await approvalsOf(ref);
    expect(approvals.map((a) => a.status)).toEqual(['revoked']);
    const read = await callRoute(api.getApproval, { token: actors.key, params: { id: approvals[0].id } });
    expect(read.status, read.text).toBe(200);
    expect(read.json.revoked).toMatchObject({
      by: expect.stringMatching(/^api_key:[0-9a-f-]{36}$/),
      reason: 'The client declined the elicitation: the call will not be made.',
    });
    await expect(decide(actors.reviewer, ref, 'approve', 300)).rejects.toThrow(/no pending approval/);
    const records = await recordsOf(ref, g.ctx.reporter);
    expect(records.map((r) => [r.toolName, r.delivery, r.category])).toEqual([
      ['test_simple_text', 'never_sent', 'approval_required'],
    ]);
    expect(server.seen.filter((s) => s.startsWith('tools/call'))).toEqual([]);
  });
});

describe('a bridged 2025 client whose tool is hidden, then shown again, by policy', () => {
  it('gets notifications/tools/list_changed each time; its next tools/list shows the change', async () => {
    const TTL_MS = 150;
    const server = await modernOnlyServer();
    // A short policy TTL, so that a rule changed is seen within the test.
    const g = await gatewayFor(server.url, 0, { policyTtlMs: TTL_MS });
    const { c, connect } = await legacyClient(g.url, { value: null });
    let changed = 0;
    c.setNotificationHandler('notifications/tools/list_changed', () => void changed++);
    await connect();
    // Each listing asked of the gateway, not answered from the client's cache.
    const names = async () => (await c.listTools(undefined, { cacheMode: 'refresh' })).tools.map((t) => t.name);
    expect(await names()).toEqual(expect.arrayContaining(['test_simple_text', 'test_image_content']));

    // Blocked: the session's next call meets the new hidden set and tells the client.
    await setPolicyRule(cli, { server: g.server, tool: 'test_simple_text', requiredApprovals: 'blocked' });
    await new Promise((r) => setTimeout(r, TTL_MS + 50));
    expect(changed).toBe(0);
    const refused = await c.callTool(simple());
    expect(refused.isError).toBe(true);
    expect((refused._meta as Record<string, unknown>)['countersign/error']).toMatchObject({
      category: 'denied_by_policy',
    });
    await until('list_changed after the block', () => changed === 1);
    const hidden = await names();
    expect(hidden).not.toContain('test_simple_text');
    expect(hidden).toContain('test_image_content');

    // Unblocked: told again, and listed again.
    await setPolicyRule(cli, { server: g.server, tool: 'test_simple_text', requiredApprovals: 0 });
    await new Promise((r) => setTimeout(r, TTL_MS + 50));
    const image = await c.callTool({ name: 'test_image_content', arguments: {} });
    expect(image.isError).toBeFalsy();
    await until('list_changed after the unblock', () => changed === 2);
    expect(await names()).toContain('test_simple_text');
    expect((await c.callTool(simple())).content).toEqual(SIMPLE_TEXT);
    expect(changed).toBe(2);
  });
});
