// The MCP servers lib/mcp's observation tests call, linked in memory to a real SDK client: a
// low-level server whose every answer the test decides (what McpServer would never send, missing
// structured content, real JSON-RPC errors, is what a client meets in the wild), or any server.
// The servers are SDK v1's (2025 era); the client is SDK v2's, as lib/mcp's.
import { expect } from 'vitest';
import { Client, type Transport } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { classifyOutcome } from '@/lib/outcomes/classify';
import { observedSchema, type Observed } from '@/lib/outcomes/schemas';
import { prepareSession } from '@/lib/mcp/observe';

const OUTPUT = {
  type: 'object' as const,
  properties: { total: { type: 'number' } },
  required: ['total'],
  additionalProperties: false,
};
export const tools: Tool[] = [
  { name: 'with_schema', inputSchema: { type: 'object' }, outputSchema: OUTPUT },
  { name: 'no_schema', inputSchema: { type: 'object' } },
  { name: 'write', inputSchema: { type: 'object' }, annotations: { readOnlyHint: false } },
];
export type Answer = () => Promise<CallToolResult> | CallToolResult;

const open: (() => Promise<unknown>)[] = [];
/** Closes every client and server linked so far (call it in afterEach). */
export async function closeLinked() {
  while (open.length) await open.pop()!();
}

export async function lowLevel(answers: Record<string, Answer>) {
  const server = new Server({ name: 'fixture', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => answers[req.params.name]());
  return link(server);
}

export async function link(server: Server | McpServer) {
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'test', version: '1.0.0' });
  await server.connect(serverTransport);
  await client.connect(clientTransport as unknown as Transport);
  open.push(
    () => client.close(),
    () => server.close(),
  );
  const ready = await prepareSession(client);
  if (!ready.ok) throw new Error('no catalog');
  return { client, catalog: ready.catalog, serverTransport };
}

/** The observation, asserted to be one the record schema accepts. */
const valid = (o: Observed) => {
  expect(observedSchema.safeParse(o).success).toBe(true);
  return o;
};
export const classify = (o: Observed, readOnly = false) =>
  classifyOutcome({ observed: valid(o), annotations: { readOnlyHint: readOnly }, serverTrusted: true });
