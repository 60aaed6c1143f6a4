// Observing a call that got no answer, or a session that could not be made; and the catalog.
import { freePort } from '../../scripts/lib/embedded-postgres';
import { afterEach, describe, expect, it } from 'vitest';
import { Client, SdkErrorCode, StreamableHTTPClientTransport, type SdkError } from '@modelcontextprotocol/client';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { classify, closeLinked, link, tools } from '../../testing/mcp-fixture';
import type { ToolCatalog } from './catalog';
import { observeToolCall, observingFetch, prepareSession } from './observe';

afterEach(closeLinked);

describe('observeToolCall: the client gives up or loses the connection', () => {
  function slowServer(ms: number) {
    const done: string[] = [];
    const server = new McpServer({ name: 'slow', version: '1.0.0' });
    server.registerTool('slow_write', { inputSchema: { key: z.string() } }, async ({ key }) => {
      await new Promise((r) => setTimeout(r, ms));
      done.push(key);
      return { content: [{ type: 'text', text: 'written' }] };
    });
    return { server, done };
  }

  it('a timeout: timeout, unknown for a write, and the server still completes the write', async () => {
    const { server, done } = slowServer(300);
    const { client, catalog } = await link(server);
    const o = await observeToolCall(
      client,
      { name: 'slow_write', arguments: { key: 'k1' } },
      { catalog, timeoutMs: 50 },
    );
    expect(o.observed).toEqual({ sent: true, clientError: 'timeout' });
    expect(classify(o.observed)).toMatchObject({
      boundary: 'client',
      delivery: 'unknown',
      category: 'timeout',
      retry: 'after_state_check',
    });
    await new Promise((r) => setTimeout(r, 400));
    expect(done).toEqual(['k1']);
  });

  it('cancelled before sending: never sent; cancelled after: unknown', async () => {
    const { server } = slowServer(200);
    const { client, catalog } = await link(server);
    const before = new AbortController();
    before.abort();
    const o1 = await observeToolCall(
      client,
      { name: 'slow_write', arguments: { key: 'a' } },
      { catalog, signal: before.signal },
    );
    expect(o1.observed).toEqual({ sent: false, clientError: 'cancelled' });
    expect(classify(o1.observed)).toMatchObject({ delivery: 'never_sent', retry: 'no' });

    const during = new AbortController();
    setTimeout(() => during.abort(), 30);
    const o2 = await observeToolCall(
      client,
      { name: 'slow_write', arguments: { key: 'b' } },
      { catalog, signal: during.signal },
    );
    // The SDK turns an abort into its timeout error as well (v1: McpError -32001): only the signal tells it apart.
    expect((o2.error as SdkError).code).toBe(SdkErrorCode.RequestTimeout);
    expect(o2.observed).toEqual({ sent: true, clientError: 'cancelled' });
    expect(classify(o2.observed)).toMatchObject({ delivery: 'unknown', category: 'cancelled' });
  });

  it('the connection closes under the call: connection_lost (-32000), unknown', async () => {
    const { server } = slowServer(500);
    const { client, catalog, serverTransport } = await link(server);
    setTimeout(() => void serverTransport.close(), 30);
    const o = await observeToolCall(client, { name: 'slow_write', arguments: { key: 'c' } }, { catalog });
    expect((o.error as SdkError).code).toBe(SdkErrorCode.ConnectionClosed);
    expect(o.observed).toEqual({ sent: true, clientError: 'connection_lost' });
    expect(classify(o.observed)).toMatchObject({
      delivery: 'unknown',
      category: 'connection_lost',
      retry: 'after_state_check',
    });
  });

  it('no connection and no way to connect: never sent', async () => {
    const client = new Client({ name: 'test', version: '1.0.0' });
    const o = await observeToolCall(client, { name: 'x' }, { catalog: { tools: new Map() } });
    expect(o.observed).toEqual({ sent: false, clientError: 'connection_lost' });
    expect(classify(o.observed)).toMatchObject({ delivery: 'never_sent', retry: 'backoff' });
  });
});

describe('prepareSession over HTTP: admission failures while connecting', () => {
  const connectWith = (fetchImpl: typeof fetch) => {
    const client = new Client({ name: 'test', version: '1.0.0' });
    const connect = () =>
      client.connect(
        new StreamableHTTPClientTransport(new URL('http://127.0.0.1:9/mcp'), { fetch: observingFetch(fetchImpl) }),
      );
    return prepareSession(client, { connect });
  };
  const answer =
    (status: number, headers: Record<string, string> = {}) =>
    async () =>
      new Response('{}', { status, headers });

  it.each([
    [
      401,
      'Bearer realm="x", error="invalid_token", error_description="expired"',
      { httpStatus: 401, authError: 'invalid_token' },
      'unauthenticated',
    ],
    [401, 'Bearer realm="x"', { httpStatus: 401, authError: null }, 'unauthenticated'],
    [
      403,
      'Bearer error="insufficient_scope", scope="refunds:write"',
      { httpStatus: 403, authError: 'insufficient_scope' },
      'forbidden',
    ],
    // The challenge is more precise than the status some servers pick.
    [403, 'Bearer error="invalid_token"', { httpStatus: 403, authError: 'invalid_token' }, 'unauthenticated'],
    [503, null, { httpStatus: 503, authError: null }, 'unavailable'],
    [404, null, { httpStatus: 404, authError: null }, 'session_expired'],
  ] as const)('HTTP %i (%s)', async (status, challenge, expected, category) => {
    const ready = await connectWith(answer(status, challenge ? { 'www-authenticate': challenge } : {}));
    expect(ready.ok).toBe(false);
    if (ready.ok) return;
    expect(ready.observation.observed).toEqual({ sent: true, ...expected });
    expect(classify(ready.observation.observed).category).toBe(category);
  });

  it('a refused connection: nothing was sent', async () => {
    const port = await freePort(); /* nothing listens there */
    const client = new Client({ name: 'test', version: '1.0.0' });
    const ready = await prepareSession(client, {
      connect: () =>
        client.connect(
          new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { fetch: observingFetch() }),
        ),
    });
    expect(ready.ok).toBe(false);
    if (ready.ok) return;
    expect(ready.observation.observed).toEqual({ sent: false, clientError: 'connection_lost' });
    expect(classify(ready.observation.observed)).toMatchObject({
      delivery: 'never_sent',
      category: 'connection_lost',
      retry: 'backoff',
    });
  });
});

describe('catalog', () => {
  it('lists every page of tools', async () => {
    const server = new Server({ name: 'paged', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async (req) =>
      req.params?.cursor ? { tools: [tools[1]] } : { tools: [tools[0]], nextCursor: 'p2' },
    );
    server.setRequestHandler(CallToolRequestSchema, async () => ({ content: [], structuredContent: { total: 'bad' } }));
    const { client, catalog } = await link(server);
    expect([...catalog.tools.keys()]).toEqual(['with_schema', 'no_schema']);
    // The SDK forgot page 1's validator when it read page 2; our own check still catches it.
    const o = await observeToolCall(client, { name: 'with_schema' }, { catalog: catalog as ToolCatalog });
    expect(o.observed.result).toEqual({ isError: false, outputValidation: 'invalid' });
  });
});
