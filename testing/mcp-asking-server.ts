// A 2025-only MCP server on SDK v1 for tests (never part of the app) whose `survey` tool asks its
// client three things before it answers: an account (elicitation), a summary (sampling) and its
// roots, then answers with what it got. SDK v1 sends a handler's requests with its
// `relatedRequestId`, so over HTTP they come on the call's own stream. `seen` holds, per call, the
// answers its requests got, and counts calls whose handler saw their request cancelled.
//   npx tsx testing/mcp-asking-server.ts stdio
import { pathToFileURL } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CreateMessageResultSchema,
  ElicitResultSchema,
  ListRootsResultSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

export interface Seen {
  answers: unknown[][];
  cancelled: number;
}

export function askingServer(seen: Seen = { answers: [], cancelled: 0 }): McpServer {
  const server = new McpServer({ name: 'legacy-survey', version: '1.0.0' });
  server.registerTool(
    'survey',
    { description: 'Asks its client three things.', inputSchema: { topic: z.string() } },
    async ({ topic }, extra) => {
      extra.signal.addEventListener('abort', () => void (seen.cancelled += 1));
      const elicited = await extra.sendRequest(
        {
          method: 'elicitation/create',
          params: {
            message: `Which account is ${topic} about?`,
            requestedSchema: { type: 'object', properties: { account: { type: 'string' } }, required: ['account'] },
          },
        },
        ElicitResultSchema,
      );
      const sampled = await extra.sendRequest(
        {
          method: 'sampling/createMessage',
          params: {
            messages: [{ role: 'user', content: { type: 'text', text: `Summarize ${topic}` } }],
            maxTokens: 50,
          },
        },
        CreateMessageResultSchema,
      );
      const roots = await extra.sendRequest({ method: 'roots/list' }, ListRootsResultSchema);
      seen.answers.push([elicited, sampled, roots]);
      const account = elicited.action === 'accept' ? String(elicited.content?.account) : 'none';
      const summary = sampled.content.type === 'text' ? sampled.content.text : '';
      const uris = roots.roots.map((r) => r.uri).join(',');
      return { content: [{ type: 'text', text: `${topic}: ${account}; ${summary}; ${uris}` }] };
    },
  );
  return server;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href && process.argv[2] === 'stdio')
  void askingServer().connect(new StdioServerTransport());
