// The conformance suite's test tools of the 2025 scenarios (tools-call-*, elicitation-sep1034/1330,
// json-schema-2020-12), written on SDK v2 from the suite's published scenario requirements. The
// ones that ask the client for something return `input_required`: on a 2026 request the client
// answers it; on a 2025 session the SDK's legacy shim sends the real elicitation/create or
// sampling/createMessage over the session. Part of testing/mcp-v2-server.ts.
import {
  fromJsonSchema,
  inputRequired,
  inputResponse,
  type McpServer,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';

/** A 1×1 red PNG, the smallest image the scenarios accept. */
export const RED_PIXEL_PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

/** A valid WAV file: 16-bit mono PCM at 8 kHz, eight samples of silence. */
export function silentWav(): string {
  const samples = 8;
  const data = samples * 2;
  const b = Buffer.alloc(44 + data);
  b.write('RIFF', 0, 'ascii');
  b.writeUInt32LE(36 + data, 4);
  b.write('WAVE', 8, 'ascii');
  b.write('fmt ', 12, 'ascii');
  b.writeUInt32LE(16, 16); // fmt chunk size
  b.writeUInt16LE(1, 20); // PCM
  b.writeUInt16LE(1, 22); // channels
  b.writeUInt32LE(8000, 24); // sample rate
  b.writeUInt32LE(8000 * 2, 28); // byte rate
  b.writeUInt16LE(2, 32); // block align
  b.writeUInt16LE(16, 34); // bits per sample
  b.write('data', 36, 'ascii');
  b.writeUInt32LE(data, 40);
  return b.toString('base64');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });

/** The schema json-schema-2020-12 expects to find unchanged in tools/list (SEP-1613, SEP-2106). */
export const SCHEMA_2020_12 = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: {
    address: {
      $anchor: 'addressDef',
      type: 'object',
      properties: { street: { type: 'string' }, city: { type: 'string' } },
    },
  },
  properties: {
    name: { type: 'string' },
    address: { $ref: '#/$defs/address' },
    contactMethod: { type: 'string', enum: ['phone', 'email'] },
    phone: { type: 'string' },
    email: { type: 'string' },
  },
  allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
  if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
  then: { required: ['phone'] },
  else: { required: ['email'] },
  additionalProperties: false,
} as const;

// elicitation-sep1034-defaults: a default for every primitive type.
const DEFAULTS_SCHEMA = {
  type: 'object' as const,
  properties: {
    name: { type: 'string' as const, default: 'John Doe' },
    age: { type: 'integer' as const, default: 30 },
    score: { type: 'number' as const, default: 95.5 },
    status: { type: 'string' as const, enum: ['active', 'inactive', 'pending'], default: 'active' },
    verified: { type: 'boolean' as const, default: true },
  },
};

// elicitation-sep1330-enums: the five enum shapes (untitled, titled, legacy enumNames, and both multi-selects).
const ENUMS_SCHEMA = {
  type: 'object' as const,
  properties: {
    untitledSingle: { type: 'string' as const, enum: ['option1', 'option2', 'option3'] },
    titledSingle: {
      type: 'string' as const,
      oneOf: [
        { const: 'value1', title: 'First Option' },
        { const: 'value2', title: 'Second Option' },
        { const: 'value3', title: 'Third Option' },
      ],
    },
    legacyEnum: {
      type: 'string' as const,
      enum: ['opt1', 'opt2', 'opt3'],
      enumNames: ['Option One', 'Option Two', 'Option Three'],
    },
    untitledMulti: {
      type: 'array' as const,
      items: { type: 'string' as const, enum: ['option1', 'option2', 'option3'] },
    },
    titledMulti: {
      type: 'array' as const,
      items: {
        anyOf: [
          { const: 'value1', title: 'First Choice' },
          { const: 'value2', title: 'Second Choice' },
          { const: 'value3', title: 'Third Choice' },
        ],
      },
    },
  },
};

/** The elicitation the client answered under `key`, as the scenarios print it; null while unanswered. */
function elicited(ctx: ServerContext, key: string): string | null {
  const view = inputResponse(ctx.mcpReq.inputResponses, key);
  if (view.kind !== 'elicit') return null;
  return `action=${view.action}, content=${JSON.stringify(view.content ?? {})}`;
}

export function registerContentTools(server: McpServer): void {
  server.registerTool('test_simple_text', { description: 'Returns one text block' }, async () =>
    text('This is a simple text response for testing.'),
  );
  server.registerTool('test_image_content', { description: 'Returns one PNG image' }, async () => ({
    content: [{ type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' }],
  }));
  server.registerTool('test_audio_content', { description: 'Returns one WAV clip' }, async () => ({
    content: [{ type: 'audio', data: silentWav(), mimeType: 'audio/wav' }],
  }));
  server.registerTool('test_embedded_resource', { description: 'Returns an embedded text resource' }, async () => ({
    content: [
      {
        type: 'resource',
        resource: {
          uri: 'test://embedded-resource',
          mimeType: 'text/plain',
          text: 'This is an embedded resource content.',
        },
      },
    ],
  }));
  server.registerTool(
    'test_multiple_content_types',
    { description: 'Returns text, an image and a resource' },
    async () => ({
      content: [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: {
            uri: 'test://mixed-content-resource',
            mimeType: 'application/json',
            text: JSON.stringify({ test: 'data', value: 123 }),
          },
        },
      ],
    }),
  );
  server.registerTool('test_error_handling', { description: 'Always fails as a tool error' }, async () => ({
    isError: true,
    content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }],
  }));
  server.registerTool('test_tool_with_logging', { description: 'Logs three lines while it runs' }, async (ctx) => {
    await ctx.mcpReq.log('info', 'Tool execution started');
    await sleep(50);
    await ctx.mcpReq.log('info', 'Tool processing data');
    await sleep(50);
    await ctx.mcpReq.log('info', 'Tool execution completed');
    return text('Tool with logging executed successfully');
  });
  server.registerTool('test_tool_with_progress', { description: 'Reports progress 0, 50, 100 of 100' }, async (ctx) => {
    const progressToken = ctx.mcpReq._meta?.progressToken;
    for (const progress of [0, 50, 100]) {
      if (progress > 0) await sleep(50);
      if (progressToken !== undefined)
        await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress, total: 100 } });
    }
    return text('Tool with progress executed successfully');
  });
  // server-sse-polling (SEP-1699): the server ends the call's SSE stream before its result; a
  // 2025 client reconnects with Last-Event-ID and the session's event store replays the result.
  server.registerTool('test_reconnection', { description: 'Closes its response stream mid-call' }, async (ctx) => {
    await sleep(20);
    ctx.http?.closeSSE?.();
    await sleep(100);
    return text('Reconnection test completed');
  });
  server.registerTool(
    'test_sampling',
    { description: 'Asks the client to sample', inputSchema: z.object({ prompt: z.string() }) },
    async ({ prompt }, ctx) => {
      const view = inputResponse(ctx.mcpReq.inputResponses, 'sample');
      if (view.kind !== 'sampling')
        return inputRequired({
          inputRequests: {
            sample: inputRequired.createMessage({
              messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
              maxTokens: 100,
            }),
          },
        });
      const block = Array.isArray(view.result.content) ? view.result.content[0] : view.result.content;
      return text(`LLM response: ${block?.type === 'text' ? block.text : JSON.stringify(block)}`);
    },
  );
  server.registerTool(
    'test_elicitation',
    { description: 'Asks the user for a name and an e-mail', inputSchema: z.object({ message: z.string() }) },
    async ({ message }, ctx) => {
      const answer = elicited(ctx, 'user');
      if (answer) return text(`User response: ${answer}`);
      return inputRequired({
        inputRequests: {
          user: inputRequired.elicit({
            message,
            requestedSchema: {
              type: 'object',
              properties: {
                username: { type: 'string', description: "User's response" },
                email: { type: 'string', description: "User's email address" },
              },
              required: ['username', 'email'],
            },
          }),
        },
      });
    },
  );
  const elicitWith = (name: string, message: string, requestedSchema: object) =>
    server.registerTool(name, { description: message }, async (ctx) => {
      const answer = elicited(ctx, 'form');
      if (answer) return text(`Elicitation completed: ${answer}`);
      return inputRequired({
        inputRequests: {
          form: inputRequired.elicit({ message, requestedSchema } as Parameters<typeof inputRequired.elicit>[0]),
        },
      });
    });
  elicitWith('test_elicitation_sep1034_defaults', 'Confirm the defaults (SEP-1034)', DEFAULTS_SCHEMA);
  elicitWith('test_elicitation_sep1330_enums', 'Pick from every enum shape (SEP-1330)', ENUMS_SCHEMA);
  server.registerTool(
    'json_schema_2020_12_tool',
    { description: 'Tool with JSON Schema 2020-12 features', inputSchema: fromJsonSchema(SCHEMA_2020_12) },
    async () => text('JSON Schema 2020-12 tool called'),
  );
}
