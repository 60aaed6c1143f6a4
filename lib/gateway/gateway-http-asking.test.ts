// A server that asks the client things (elicitation, sampling, progress, logging) over Streamable
// HTTP, through the gateway: what it sends inside its answer to a call goes with that answer, and
// the client's answers reach the server, as direct.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { cli } from '@/lib/auth/actor';
import { setPolicyRule } from '@/lib/server/policy/policy-rules';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { runHttp } from './http';
import { uniq } from '@/testing/factories';
import {
  closedAfterEach,
  consoleActors,
  serveOverHttp,
  testContext,
  type ConsoleActors,
} from '@/testing/gateway-fixtures';
import { rawSession, rpc } from '@/testing/raw-mcp-session';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

let actors: ConsoleActors;
beforeAll(async () => {
  actors = await consoleActors();
});
const open = closedAfterEach();

function askingServer(): McpServer {
  const server = new McpServer({ name: 'asking', version: '1.0.0' }, { capabilities: { logging: {} } });
  server.registerTool(
    'ask',
    {
      inputSchema: { question: z.string() },
      outputSchema: { name: z.string(), sampled: z.string() },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ question }, extra) => {
      const token = extra._meta?.progressToken;
      if (token !== undefined)
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken: token, progress: 1 },
        });
      await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: 'asking' } });
      const elicited = await server.server.elicitInput({
        message: question,
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      });
      const sampled = await server.server.createMessage({
        messages: [{ role: 'user', content: { type: 'text', text: question } }],
        maxTokens: 10,
      });
      const out = {
        name: String(elicited.content?.name ?? ''),
        sampled: sampled.content.type === 'text' ? sampled.content.text : '',
      };
      return { content: [{ type: 'text', text: JSON.stringify(out) }], structuredContent: out };
    },
  );
  // Tells without asking: progress and a log message inside its answer, then the result.
  server.registerTool('tell', { annotations: { readOnlyHint: true, openWorldHint: false } }, async (extra) => {
    const token = extra._meta?.progressToken;
    if (token !== undefined)
      await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: 1 } });
    await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: 'telling' } });
    return { content: [{ type: 'text', text: 'told' }] };
  });
  return server;
}

async function askingGateway() {
  const upstream = await serveOverHttp(askingServer);
  const server = uniq('asking');
  await trustServer(cli, server);
  await setPolicyRule(cli, { server, tool: null, requiredApprovals: 0 });
  const t = testContext(actors, server);
  const gateway = await runHttp(t.ctx, upstream.url, '127.0.0.1', 0);
  open.push(async () => {
    await gateway.close();
    await upstream.close();
    await t.ctx.reporter.close(2000);
  });
  return { upstream, gateway };
}

describe('what the server sends inside its answer to a call', () => {
  it('goes with that answer, in order, before any GET stream is open (as direct)', async () => {
    const { upstream, gateway } = await askingGateway();
    const call = rpc(3, 'tools/call', { name: 'tell', arguments: {}, _meta: { progressToken: 'p' } });
    // Raw sessions that never open the GET stream: what went there would be lost.
    const answers = [];
    for (const url of [upstream.url.toString(), gateway.url]) {
      const session = await rawSession(url, 'unused');
      answers.push(await session.post(call));
    }
    const expected = [
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'p', progress: 1 } },
      { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'telling' } },
      { jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: 'told' }] } },
    ];
    const [direct, through] = answers;
    expect(direct.type).toBe('text/event-stream');
    expect(direct.messages).toEqual(expected);
    expect(through.status).toBe(200);
    expect(through.type).toBe('text/event-stream');
    expect(through.messages.slice(0, 2)).toEqual(expected.slice(0, 2));
    // The answer as the server sent it, with the gateway's record reference added.
    expect(through.messages[2]).toEqual({
      ...expected[2],
      result: {
        ...expected[2].result,
        _meta: { 'countersign/requestRef': 'gw-session', 'countersign/eventId': 'evt' },
      },
    });
  });
});

describe('server-to-client requests over Streamable HTTP through the gateway', () => {
  it('elicitation, sampling, progress and logging reach the client and its answers the server, as direct', async () => {
    const { upstream, gateway } = await askingGateway();
    const ask = async (url: URL) => {
      const client = new Client(
        { name: 'asking-client', version: '1.0.0' },
        { capabilities: { elicitation: {}, sampling: {} } },
      );
      const seen: string[] = [];
      client.setRequestHandler(ElicitRequestSchema, async (r) => {
        seen.push(`elicit ${r.params.message}`);
        return { action: 'accept', content: { name: 'Ada' } };
      });
      client.setRequestHandler(CreateMessageRequestSchema, async () => {
        seen.push('sample');
        return { model: 'm', role: 'assistant', content: { type: 'text', text: 'sampled' } };
      });
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void seen.push(`log ${n.params.data}`));
      await client.connect(new StreamableHTTPClientTransport(url));
      open.push(() => client.close());
      // Called at once: the client's GET stream may not be open yet. What the server sends inside
      // its answer to the call goes with the call's answer, as direct, not on that stream.
      const progress: number[] = [];
      const result = (await client.callTool({ name: 'ask', arguments: { question: 'Who?' } }, undefined, {
        onprogress: (p) => void progress.push(p.progress),
        timeout: 10_000,
      })) as CallToolResult;
      return { result: result.structuredContent, seen: seen.sort(), progress };
    };
    const direct = await ask(upstream.url);
    const through = await ask(new URL(gateway.url));
    expect(direct).toEqual({
      result: { name: 'Ada', sampled: 'sampled' },
      seen: ['elicit Who?', 'log asking', 'sample'],
      progress: [1],
    });
    expect(through).toEqual(direct);
  }, 30_000);
});
