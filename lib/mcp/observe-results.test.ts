// Observing a call that got an answer: results, error results, JSON-RPC errors, folded codes.
import { afterEach, describe, expect, it } from 'vitest';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { McpError, UrlElicitationRequiredError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ProtocolError } from '@modelcontextprotocol/client';
import { z } from 'zod';
import { classify, closeLinked, link, lowLevel } from '../../testing/mcp-fixture';
import { observeToolCall } from './observe';
import { declaredCategory, foldedJsonRpcCode } from './observed';

afterEach(closeLinked);

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
    // The error SDK v2's callTool throws for it (v1 threw McpError -32602).
    expect(o.error).toBeInstanceOf(ProtocolError);
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
    expect((o.error as ProtocolError).code).toBe(-32600);
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
    // SDK v1 refused it (McpError); v2 checks the structured content of successful results only.
    expect(o.error).toBeUndefined();
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
