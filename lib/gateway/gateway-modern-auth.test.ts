// Plan step 3: a 2026-07-28 client in front of a 2025 server reached through the gateway's shared
// session (one per Authorization, upstream-client.ts). Each request carries its own
// Authorization (RequestOptions.headers), and the server's 401/403 with its WWW-Authenticate
// comes back to that request as the server sent it, as it does for the per-request clients of a
// 2026-07-28 server, also when the session was opened by an earlier request.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { cli } from '@/lib/auth/actor';
import { setPolicyRule } from '@/lib/server/policy/policy-rules';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { uniq } from '@/testing/factories';
import {
  closedAfterEach,
  consoleActors,
  floodServer,
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

const UNAUTHORIZED = 'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"';
const FORBIDDEN = 'Bearer error="insufficient_scope", scope="tools:call"';

/**
 * A 2025-only server (SDK v1, a session per client) that checks the bearer token of every POST:
 * `good` may do anything, `limited` anything but tools/call (403), any other 401.
 */
async function checkingServer(): Promise<{ url: string; seen: string[] }> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const seen: string[] = [];
  const refuse = (res: ServerResponse, status: number, challenge: string) => {
    res.writeHead(status, { 'content-type': 'application/json', 'www-authenticate': challenge });
    res.end(JSON.stringify({ error: status === 401 ? 'invalid_token' : 'insufficient_scope' }));
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const parsed: unknown = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
    const method = (parsed as { method?: string } | undefined)?.method;
    const token = req.headers.authorization;
    seen.push(`${method ?? req.method} ${token ?? '-'}`);
    if (token !== 'Bearer good' && token !== 'Bearer limited') return refuse(res, 401, UNAUTHORIZED);
    if (token === 'Bearer limited' && method === 'tools/call') return refuse(res, 403, FORBIDDEN);
    const id = req.headers['mcp-session-id'];
    const known = typeof id === 'string' ? sessions.get(id) : undefined;
    if (known) return known.handleRequest(req, res, parsed);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (sid) => void sessions.set(sid, transport),
    });
    await floodServer().connect(transport);
    await transport.handleRequest(req, res, parsed);
  };
  const http = createServer((req, res) => void handle(req, res).catch(() => res.end()));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  open.push(async () => {
    await Promise.allSettled([...sessions.values()].map((t) => t.close()));
    http.closeAllConnections();
    await new Promise((r) => http.close(r));
  });
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`, seen };
}

async function gatewayFor(upstream: string) {
  const server = uniq('v2-auth');
  await trustServer(cli, server);
  await setPolicyRule(cli, { server, tool: null, requiredApprovals: 0 });
  const t = testContext(actors, server);
  const g = await runHttp(t.ctx, new URL(upstream), '127.0.0.1', 0);
  open.push(async () => {
    await g.close();
    await t.ctx.reporter.close(2000);
  });
  return g.url;
}

let ids = 0;
async function modern(url: string, token: string, method: string, params: Record<string, unknown> = {}) {
  const name = typeof params.name === 'string' ? params.name : undefined;
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(name ? { 'mcp-name': name } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: ++ids,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  });
  const text = await response.text();
  return { status: response.status, challenge: response.headers.get('www-authenticate'), text };
}

describe('a 2026-07-28 client in front of a 2025 server that checks the token', () => {
  it('each request carries its own Authorization; 401/403 with WWW-Authenticate come back as sent', async () => {
    const server = await checkingServer();
    const url = await gatewayFor(server.url);
    const echo = { name: 'echo', arguments: { text: 'hi' } };

    const bad = await modern(url, 'bad', 'tools/list');
    expect(bad.status).toBe(401);
    expect(bad.challenge).toBe(UNAUTHORIZED);
    expect(bad.text).toBe('{"error":"invalid_token"}');

    const good = await modern(url, 'good', 'tools/list');
    expect(good.status).toBe(200);
    expect(good.text).toContain('"echo"');

    // The limited token's session is opened by its tools/list; its tools/call is refused later.
    expect((await modern(url, 'limited', 'tools/list')).status).toBe(200);
    const refused = await modern(url, 'limited', 'tools/call', echo);
    expect(refused.status).toBe(403);
    expect(refused.challenge).toBe(FORBIDDEN);
    expect(refused.text).toBe('{"error":"insufficient_scope"}');

    const called = await modern(url, 'good', 'tools/call', echo);
    expect(called.status).toBe(200);
    expect(called.text).toContain('"text":"hi"');
    // Every request the server saw carried the token of the client request it served.
    expect(server.seen.filter((s) => s.startsWith('tools/call'))).toEqual([
      'tools/call Bearer limited',
      'tools/call Bearer good',
    ]);
  });
});
