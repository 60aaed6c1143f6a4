// A real MCP server whose tools run as tasks (SDK 1.32 experimental tasks API, InMemoryTaskStore),
// over InMemoryTransport or Streamable HTTP on 127.0.0.1, and an SDK v2 client connected to it
// (lib/mcp's: v2 has no tasks API, so the harness lists and cancels tasks with plain requests).
// `apply_credit` (a write, taskSupport required) does what its `mode` argument says:
//   complete: works `workMs`, then completes with a structured result;
//   fail:     works `workMs`, then fails with an isError result (2025-11-25);
//   hang:     never finishes (to be cancelled, or to outlive its TTL);
//   ask:      works `workMs`, then asks its client to confirm (elicitation, the task `input_required`
//             meanwhile, the request delivered on the client's tasks/result), then completes with
//             what the client answered.
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  Client,
  StreamableHTTPClientTransport,
  type StandardSchemaV1,
  type Transport,
} from '@modelcontextprotocol/client';
import {
  InMemoryTaskMessageQueue,
  InMemoryTaskStore,
} from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ElicitResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { observingFetch } from '@/lib/mcp/observe';

export const TASK_SERVER_NAME = 'tasks-mcp';

export interface TaskServerOptions {
  workMs?: number;
  pollIntervalMs?: number;
}

export function createTaskMcpServer(store = new InMemoryTaskStore(), options: TaskServerOptions = {}): McpServer {
  const server = new McpServer(
    { name: TASK_SERVER_NAME, version: '1.0.0' },
    {
      capabilities: { tasks: { requests: { tools: { call: {} } }, list: {}, cancel: {} } },
      taskStore: store,
      taskMessageQueue: new InMemoryTaskMessageQueue(),
    },
  );
  server.experimental.tasks.registerToolTask(
    'apply_credit',
    {
      description: 'Applies a credit to an account, as a task',
      inputSchema: { account: z.string(), mode: z.enum(['complete', 'fail', 'hang', 'ask']) },
      outputSchema: { credited: z.boolean(), account: z.string() },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      execution: { taskSupport: 'required' },
    },
    {
      async createTask({ account, mode }, { taskStore, taskRequestedTtl }) {
        const task = await taskStore.createTask({ ttl: taskRequestedTtl, pollInterval: options.pollIntervalMs ?? 20 });
        if (mode === 'ask') {
          void (async () => {
            await new Promise((resolve) => setTimeout(resolve, options.workMs ?? 60));
            await taskStore.updateTaskStatus(task.taskId, 'input_required');
            const answer = await server.server.request(
              {
                method: 'elicitation/create',
                params: {
                  message: `Credit ${account}?`,
                  requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } } },
                },
              },
              ElicitResultSchema,
              { relatedTask: { taskId: task.taskId } },
            );
            await taskStore.updateTaskStatus(task.taskId, 'working');
            await taskStore.storeTaskResult(task.taskId, 'completed', {
              content: [{ type: 'text', text: `Credited ${account}: ${answer.action}` }],
              structuredContent: { credited: answer.action === 'accept', account },
            });
          })().catch((error: unknown) =>
            taskStore
              .storeTaskResult(task.taskId, 'failed', {
                content: [{ type: 'text', text: `Not asked: ${(error as { code?: unknown }).code}` }],
                isError: true,
              })
              .catch(() => {}),
          );
        } else if (mode !== 'hang') {
          setTimeout(() => {
            const done =
              mode === 'complete'
                ? taskStore.storeTaskResult(task.taskId, 'completed', {
                    content: [{ type: 'text', text: `Credited ${account}` }],
                    structuredContent: { credited: true, account },
                  })
                : taskStore.storeTaskResult(task.taskId, 'failed', {
                    content: [{ type: 'text', text: 'The ledger refused the credit' }],
                    isError: true,
                  });
            // Cancelled meanwhile: the store refuses a second terminal status.
            done.catch(() => {});
          }, options.workMs ?? 60);
        }
        return { task };
      },
      getTask: (_args, { taskId, taskStore }) => taskStore.getTask(taskId),
      getTaskResult: async (_args, { taskId, taskStore }) => (await taskStore.getTaskResult(taskId)) as CallToolResult,
    },
  );
  return server;
}

export interface TaskHarness {
  client: Client;
  /** The id of the first task `tasks/list` names, if any. */
  firstTaskId(): Promise<string | undefined>;
  /** `tasks/cancel`, as someone else might send it. */
  cancelTask(taskId: string): Promise<void>;
  close(): Promise<void>;
}

const AS_SENT: StandardSchemaV1<unknown, Record<string, unknown>> = {
  '~standard': { version: 1, vendor: 'test', validate: (value) => ({ value: value as Record<string, unknown> }) },
};

function taskRequests(client: Client) {
  return {
    firstTaskId: async () => {
      const listed = await client.request({ method: 'tasks/list', params: {} } as never, AS_SENT);
      return (listed.tasks as { taskId: string }[] | undefined)?.[0]?.taskId;
    },
    cancelTask: async (taskId: string) => {
      await client.request({ method: 'tasks/cancel', params: { taskId } } as never, AS_SENT);
    },
  };
}

export async function connectTaskServer(
  kind: 'in-memory' | 'streamable-http',
  options: TaskServerOptions = {},
): Promise<TaskHarness> {
  const store = new InMemoryTaskStore();
  const client = new Client({ name: 'tasks-agent', version: '1.0.0' });
  if (kind === 'in-memory') {
    const server = createTaskMcpServer(store, options);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    await client.connect(clientSide as unknown as Transport);
    return {
      client,
      ...taskRequests(client),
      close: async () => {
        await client.close();
        await server.close();
        store.cleanup();
      },
    };
  }
  // Stateless Streamable HTTP: a server and transport per request, one task store for all.
  const http: HttpServer = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const server = createTaskMcpServer(store, options);
        const transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          enableJsonResponse: true,
        });
        res.on('close', () => {
          void transport.close();
          void server.close();
        });
        await server.connect(transport);
        const raw = Buffer.concat(chunks).toString('utf8');
        await transport.handleRequest(req, res, raw ? JSON.parse(raw) : undefined);
      })().catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
      });
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const url = new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
  await client.connect(new StreamableHTTPClientTransport(url, { fetch: observingFetch() }));
  return {
    client,
    ...taskRequests(client),
    close: async () => {
      await client.close();
      store.cleanup();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
