// A 2025-only MCP server on SDK v1 for tests (never part of the app) whose tools ask their client
// mid-call in the ways testing/mcp-asking-server.ts does not: more times than a call may ask, for
// something the client may not have declared, on the session's own stream rather than the call's,
// with progress between its requests, in URL mode, and with a request it stops waiting for. Each
// tool notes in `seen` what its requests got back: the answer, or the JSON-RPC code of the error
// (over stdio, each tool's result says it too).
//   npx tsx testing/mcp-asking-corners.ts stdio
import { pathToFileURL } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CreateMessageResultSchema,
  ElicitResultSchema,
  ListRootsResultSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/** What one request of the server got: the client's answer, or the error's code. */
export type Got = { answer: unknown } | { code: number | string };

export interface CornersSeen {
  /** Per call, in order, what each of its requests got. */
  got: Got[][];
  /** The server's own requests it stopped waiting for (its timeout). */
  gaveUp: number;
}

const form = (message: string) => ({
  method: 'elicitation/create' as const,
  params: {
    message,
    requestedSchema: { type: 'object' as const, properties: { value: { type: 'string' as const } } },
  },
});

async function got(request: Promise<unknown>): Promise<Got> {
  try {
    return { answer: await request };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return { code: typeof code === 'number' || typeof code === 'string' ? code : String(error) };
  }
}

const text = (value: unknown) => ({ content: [{ type: 'text' as const, text: JSON.stringify(value) }] });

export function cornersServer(seen: CornersSeen = { got: [], gaveUp: 0 }): McpServer {
  const server = new McpServer({ name: 'legacy-corners', version: '1.0.0' });

  server.registerTool(
    'ask_repeatedly',
    { description: 'Asks its client for a value `times` times.', inputSchema: { times: z.number().int() } },
    async ({ times }, extra) => {
      const mine: Got[] = [];
      seen.got.push(mine);
      for (let i = 1; i <= times; i++) mine.push(await got(extra.sendRequest(form(`Value ${i}?`), ElicitResultSchema)));
      return text(mine.map((g) => ('code' in g ? g.code : 'answered')));
    },
  );

  server.registerTool('summarize', { description: 'Asks its client to sample a summary.' }, async (extra) => {
    const mine: Got[] = [];
    seen.got.push(mine);
    mine.push(
      await got(
        extra.sendRequest(
          {
            method: 'sampling/createMessage',
            params: { messages: [{ role: 'user', content: { type: 'text', text: 'Summarize' } }], maxTokens: 20 },
          },
          CreateMessageResultSchema,
        ),
      ),
    );
    return text(mine);
  });

  // The session's own stream (no relatedRequestId): SDK v1 sends it on the client's GET stream.
  server.registerTool('roots_off_call', { description: 'Asks its client for roots, unrelated.' }, async () => {
    const mine: Got[] = [];
    seen.got.push(mine);
    mine.push(await got(server.server.request({ method: 'roots/list' }, ListRootsResultSchema, { timeout: 5000 })));
    return text(mine);
  });

  server.registerTool('staged_report', { description: 'Reports progress between two questions.' }, async (extra) => {
    const mine: Got[] = [];
    seen.got.push(mine);
    const token = extra._meta?.progressToken;
    const progress = async (n: number) => {
      if (token !== undefined)
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken: token, progress: n, total: 3, message: `step ${n}` },
        });
    };
    await progress(1);
    mine.push(await got(extra.sendRequest(form('First?'), ElicitResultSchema)));
    await progress(2);
    mine.push(await got(extra.sendRequest(form('Second?'), ElicitResultSchema)));
    await progress(3);
    return text('reported');
  });

  server.registerTool('connect_account', { description: 'Sends its client to a page.' }, async (extra) => {
    const mine: Got[] = [];
    seen.got.push(mine);
    const elicitationId = 'elicit-7';
    mine.push(
      await got(
        extra.sendRequest(
          {
            method: 'elicitation/create',
            params: {
              mode: 'url',
              message: 'Sign in to the bank.',
              url: 'https://bank.example/connect?session=7',
              elicitationId,
            },
          },
          ElicitResultSchema,
        ),
      ),
    );
    // The page was visited and the account connected: 2025's completion notice for it.
    await extra.sendNotification({ method: 'notifications/elicitation/complete', params: { elicitationId } });
    return text('connected');
  });

  server.registerTool(
    'ask_briefly',
    { description: 'Asks its client once, waits a moment, and goes on without an answer.' },
    async (extra) => {
      const mine: Got[] = [];
      seen.got.push(mine);
      const answer = await got(extra.sendRequest(form('Quickly?'), ElicitResultSchema, { timeout: 200 }));
      mine.push(answer);
      if ('code' in answer) seen.gaveUp += 1;
      return text('went on');
    },
  );

  server.registerTool(
    'ask_after',
    { description: 'Waits `ms`, then asks its client once.', inputSchema: { ms: z.number().int() } },
    async ({ ms }, extra) => {
      const mine: Got[] = [];
      seen.got.push(mine);
      await new Promise((resolve) => setTimeout(resolve, ms));
      mine.push(await got(extra.sendRequest(form('Now?'), ElicitResultSchema)));
      return text(mine);
    },
  );

  server.registerTool(
    'pause',
    {
      description: 'Says it started (progress 0, when given a token), then waits `ms`, asking nothing.',
      inputSchema: { ms: z.number().int() },
    },
    async ({ ms }, extra) => {
      const progressToken = extra._meta?.progressToken;
      if (progressToken !== undefined)
        await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: 0 } });
      await new Promise((resolve) => setTimeout(resolve, ms));
      return text('paused');
    },
  );

  return server;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href && process.argv[2] === 'stdio')
  void cornersServer().connect(new StdioServerTransport());
