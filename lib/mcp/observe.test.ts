import { freePort } from '../../scripts/lib/embedded-postgres';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  McpError,
  UrlElicitationRequiredError,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { classifyOutcome } from '../outcomes/classify';
import { observedSchema, type Observed } from '../outcomes/schemas';
import {
  declaredCategory,
  foldedJsonRpcCode,
  observeToolCall,
  observingFetch,
  prepareSession,
  type ToolCatalog,
} from './observe';

// A low-level server whose every answer the test decides: what McpServer would never send
// (missing structured content, real JSON-RPC errors) is what a client meets in the wild.
const OUTPUT = {
  type: 'object' as const,
  properties: { total: { type: 'number' } },
  required: ['total'],
  additionalProperties: false,
};
const tools: Tool[] = [
  { name: 'with_schema', inputSchema: { type: 'object' }, outputSchema: OUTPUT },
  { name: 'no_schema', inputSchema: { type: 'object' } },
  { name: 'write', inputSchema: { type: 'object' }, annotations: { readOnlyHint: false } },
];
type Answer = () => Promise<CallToolResult> | CallToolResult;

const open: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!();
});

async function lowLevel(answers: Record<string, Answer>) {
  const server = new Server({ name: 'fixture', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => answers[req.params.name]());
  return link(server);
}

async function link(server: Server | McpServer) {
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'test', version: '1.0.0' });
  await server.connect(serverTransport);
  await client.connect(clientTransport);
  open.push(
    () => client.close(),
    () => server.close(),
  );
  const ready = await prepareSession(client);
  if (!ready.ok) throw new Error('no catalog');
  return { client, catalog: ready.catalog, serverTransport };
}

const valid = (o: Observed) => {
  expect(observedSchema.safeParse(o).success).toBe(true);
  return o;
};
const classify = (o: Observed, readOnly = false) =>
  classifyOutcome({ observed: valid(o), annotations: { readOnlyHint: readOnly }, serverTrusted: true });

describe('observeToolCall: results', () => {
  it('a valid structured result: valid, and the result is handed back', async () => {
    const { client, catalog } = await lowLevel({
      with_schema: () => ({ content: [], structuredContent: { total: 3 } }),
    });
    const o = await observeToolCall(client, { name: 'with_schema' }, { catalog });
    expect(o.observed).toEqual({ sent: true, result: { isError: false, outputValidation: 'valid' } });
    expect(o.result?.structuredContent).toEqual({ total: 3 });
    expect(classify(o.observed)).toMatchObject({ delivery: 'completed', category: 'ok' });
  });

  it('no output schema declared: not_declared', async () => {
    const { client, catalog } = await lowLevel({ no_schema: () => ({ content: [{ type: 'text', text: 'done' }] }) });
    const o = await observeToolCall(client, { name: 'no_schema' }, { catalog });
    expect(o.observed.result).toEqual({ isError: false, outputValidation: 'not_declared' });
  });

  it('structured content breaking the schema: invalid, completed, and the content is withheld', async () => {
    const { client, catalog } = await lowLevel({
      with_schema: () => ({ content: [], structuredContent: { total: 'three' } }),
    });
    const o = await observeToolCall(client, { name: 'with_schema' }, { catalog });
    expect(o.error).toBeInstanceOf(McpError);
    expect(o.observed).toEqual({ sent: true, result: { isError: false, outputValidation: 'invalid' } });
    expect(o.result).toBeUndefined();
    expect(classify(o.observed)).toMatchObject({
      boundary: 'tool',
      delivery: 'completed',
      category: 'output_schema_violation',
      retry: 'no',
    });
  });

  it('structured content missing although a schema is declared: missing (the SDK throws -32600, not a protocol error)', async () => {
    const { client, catalog } = await lowLevel({ with_schema: () => ({ content: [{ type: 'text', text: '3' }] }) });
    const o = await observeToolCall(client, { name: 'with_schema' }, { catalog });
    expect((o.error as McpError).code).toBe(-32600);
    expect(o.observed).toEqual({ sent: true, result: { isError: false, outputValidation: 'missing' } });
    expect(classify(o.observed).category).toBe('output_schema_violation');
  });

  it('an error result declaring its category in structuredContent.error.category', async () => {
    const { client, catalog } = await lowLevel({
      no_schema: () => ({
        isError: true,
        content: [],
        structuredContent: { error: { category: 'RETRYABLE_UPSTREAM' } },
      }),
    });
    const o = await observeToolCall(client, { name: 'no_schema' }, { catalog });
    expect(o.observed).toEqual({
      sent: true,
      jsonRpcErrorCode: null,
      result: { isError: true, errorCategory: 'RETRYABLE_UPSTREAM' },
    });
    expect(classify(o.observed)).toMatchObject({
      boundary: 'tool',
      delivery: 'rejected',
      category: 'unavailable',
      retry: 'backoff',
    });
  });

  it('an error result of a tool with an output schema: the category from _meta, although the SDK refuses its structured content', async () => {
    const { client, catalog } = await lowLevel({
      with_schema: () => ({
        isError: true,
        content: [],
        structuredContent: { error: 'x' },
        _meta: { errorCategory: 'PERMISSION_DENIED' },
      }),
    });
    const o = await observeToolCall(client, { name: 'with_schema' }, { catalog });
    expect(o.error).toBeInstanceOf(McpError);
    expect(o.observed.result).toEqual({ isError: true, errorCategory: 'PERMISSION_DENIED' });
    expect(classify(o.observed)).toMatchObject({ category: 'forbidden', retry: 'after_approval' });
  });

  it('an error result with no category: uncertain for a write, refused for a trusted read', async () => {
    const { client, catalog } = await lowLevel({
      write: () => ({ isError: true, content: [{ type: 'text', text: 'upstream said no' }] }),
    });
    const o = await observeToolCall(client, { name: 'write' }, { catalog });
    expect(o.observed.result).toEqual({ isError: true, errorCategory: null });
    expect(classify(o.observed)).toMatchObject({
      delivery: 'unknown',
      category: 'tool_error',
      retry: 'after_state_check',
    });
    expect(classify(o.observed, true)).toMatchObject({ delivery: 'rejected', retry: 'backoff' });
  });

  it.each([
    [-32603, 'internal', 'unknown'],
    [-32601, 'protocol_error', 'rejected'],
    [-32600, 'protocol_error', 'rejected'],
  ] as const)('a JSON-RPC error %i sent by the server is reported as that code', async (code, category, delivery) => {
    const { client, catalog } = await lowLevel({
      write: () => {
        throw new McpError(code, 'no');
      },
    });
    const o = await observeToolCall(client, { name: 'write' }, { catalog });
    expect(o.observed).toEqual({ sent: true, jsonRpcErrorCode: code });
    expect(classify(o.observed)).toMatchObject({ boundary: 'protocol', category, delivery });
  });

  it('URL elicitation (-32042) stays a JSON-RPC error: input_required', async () => {
    const { client, catalog } = await lowLevel({
      write: () => {
        throw new UrlElicitationRequiredError([
          { mode: 'url', elicitationId: 'e1', url: 'https://example.com/consent', message: 'Consent' },
        ]);
      },
    });
    const o = await observeToolCall(client, { name: 'write' }, { catalog });
    expect(o.observed.jsonRpcErrorCode).toBe(-32042);
    expect(classify(o.observed)).toMatchObject({ category: 'input_required', retry: 'after_input' });
  });
});

describe('observeToolCall: what McpServer folds into isError results', () => {
  async function mcpServer() {
    const server = new McpServer({ name: 'folded', version: '1.0.0' });
    server.registerTool(
      'lookup',
      { inputSchema: { id: z.string() }, annotations: { readOnlyHint: true } },
      async ({ id }) => ({ content: [{ type: 'text', text: id }] }),
    );
    server.registerTool('explode', { inputSchema: {} }, async () => {
      throw new Error('MCP error -32602: looks like a code, but this tool threw it itself');
    });
    server.registerTool('crash', { inputSchema: {} }, async () => {
      throw new Error('database went away');
    });
    return link(server);
  }

  it('invalid arguments: -32602 read from the code prefix, invalid_arguments', async () => {
    const { client, catalog } = await mcpServer();
    const o = await observeToolCall(client, { name: 'lookup', arguments: { id: 42 } }, { catalog });
    expect(o.observed).toEqual({
      sent: true,
      jsonRpcErrorCode: -32602,
      result: { isError: true, errorCategory: null },
    });
    expect(classify(o.observed, true)).toMatchObject({
      boundary: 'protocol',
      delivery: 'rejected',
      category: 'invalid_arguments',
      retry: 'after_correction',
    });
  });

  it('an unknown tool: -32602, and the catalog says it does not exist: unknown_tool', async () => {
    const { client, catalog } = await mcpServer();
    const o = await observeToolCall(client, { name: 'lookup_everything', arguments: {} }, { catalog });
    expect(o.observed).toEqual({
      sent: true,
      jsonRpcErrorCode: -32602,
      result: { isError: true, errorCategory: 'unknown_tool' },
    });
    expect(classify(o.observed).category).toBe('unknown_tool');
  });

  it('a handler exception without a code: an uncategorised tool error (the write may have run)', async () => {
    const { client, catalog } = await mcpServer();
    const o = await observeToolCall(client, { name: 'crash' }, { catalog });
    expect(o.observed).toEqual({ sent: true, jsonRpcErrorCode: null, result: { isError: true, errorCategory: null } });
    expect(classify(o.observed)).toMatchObject({ delivery: 'unknown', category: 'tool_error' });
  });

  it('a limit, on record: a handler whose own message starts like the SDK rendering is read as that code', async () => {
    const { client, catalog } = await mcpServer();
    const o = await observeToolCall(client, { name: 'explode' }, { catalog });
    expect(o.observed.jsonRpcErrorCode).toBe(-32602);
  });

  it('on record: McpServer folds its own output check into -32602 after the handler ran (a write can hide behind "invalid arguments")', async () => {
    let ran = 0;
    const server = new McpServer({ name: 'drifting', version: '1.0.0' });
    server.registerTool('write_badly', { inputSchema: {}, outputSchema: { id: z.string() } }, async () => {
      ran++;
      return { content: [], structuredContent: { id: 7 } as unknown as { id: string } };
    });
    const { client, catalog } = await link(server);
    const o = await observeToolCall(client, { name: 'write_badly' }, { catalog });
    expect(ran).toBe(1);
    expect(o.observed).toEqual({
      sent: true,
      jsonRpcErrorCode: -32602,
      result: { isError: true, errorCategory: null },
    });
  });

  it('the prefix is only the SDK rendering of a code: a structured category wins over it', () => {
    const folded: CallToolResult = {
      isError: true,
      content: [{ type: 'text', text: 'MCP error -32602: MCP error -32602: Input validation error' }],
    };
    expect(foldedJsonRpcCode(folded)).toBe(-32602);
    expect(
      foldedJsonRpcCode({ ...folded, content: [{ type: 'text', text: 'Error: MCP error -32602: x' }] }),
    ).toBeNull();
    expect(foldedJsonRpcCode({ ...folded, content: [{ type: 'text', text: 'MCP error 500: x' }] })).toBeNull();
    expect(foldedJsonRpcCode({ ...folded, content: [] })).toBeNull();
    expect(declaredCategory({ ...folded, structuredContent: { error: { category: 'NOT_FOUND' } } })).toBe('NOT_FOUND');
  });
});

describe('declaredCategory', () => {
  it.each([
    [{ structuredContent: { error: { category: 'NOT_FOUND' } } }, 'NOT_FOUND'],
    [{ _meta: { errorCategory: 'conflict' } }, 'conflict'],
    [{ structuredContent: { error: { category: 'A' } }, _meta: { errorCategory: 'B' } }, 'A'],
    [{ structuredContent: { error: 'NOT_FOUND' } }, null],
    [{ structuredContent: { error: { category: 7 } } }, null],
    [{ _meta: { errorCategory: 'x'.repeat(101) } }, null],
    [{ _meta: { errorCategory: '   ' } }, null],
    [{}, null],
  ])('%j → %s', (part, expected) => {
    expect(declaredCategory({ isError: true, content: [], ...part } as CallToolResult)).toBe(expected);
  });
});

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
    // The SDK turns an abort into McpError -32001 as well: only the signal tells it apart from a timeout.
    expect((o2.error as McpError).code).toBe(-32001);
    expect(o2.observed).toEqual({ sent: true, clientError: 'cancelled' });
    expect(classify(o2.observed)).toMatchObject({ delivery: 'unknown', category: 'cancelled' });
  });

  it('the connection closes under the call: connection_lost (-32000), unknown', async () => {
    const { server } = slowServer(500);
    const { client, catalog, serverTransport } = await link(server);
    setTimeout(() => void serverTransport.close(), 30);
    const o = await observeToolCall(client, { name: 'slow_write', arguments: { key: 'c' } }, { catalog });
    expect((o.error as McpError).code).toBe(-32000);
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
