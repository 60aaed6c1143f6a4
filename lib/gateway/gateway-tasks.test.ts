// MCP tasks through the gateway: the SDK's real task flow (experimental tasks API) from a 2025
// client through the gateway's SDK v2 side (serveModern, as over stdio) to a 2025 task server, over
// InMemoryTransport (and one over HTTP). The gateway reports the creation,
// each new status the client's polling saw, the terminal result from tasks/result, and a task
// tasks/get no longer finds (its TTL passed) as expired; the client sees what it would directly.
// A task that asks its client for input gets its answer through the client's tasks/result; a
// client's tasks/cancel reaches the server and is recorded as the task's cancellation; a host that
// probes with server/discover before its initialize is served tasks as any.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as V2Client, InMemoryTransport as V2InMemoryTransport } from '@modelcontextprotocol/client';
import { CallToolResultSchema, CreateTaskResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { cli } from '@/lib/auth/actor';
import { setPolicyRule } from '@/lib/server/policy/policy-rules';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { makeApiKey, uniq } from '@/testing/factories';
import { listIncidentOutcomes } from '@/lib/server/incidents';
import {
  clientThroughGateway,
  gatewayInMemory,
  serveOverHttp,
  consoleActors,
  testContext,
  type ConsoleActors,
  closedAfterEach,
} from '@/testing/gateway-fixtures';
import { createTaskMcpServer } from '@/testing/mcp-tasks';
import { MODERN_ENVELOPE } from '@/testing/raw-mcp-session';
import { runHttp } from './http';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

let actors: ConsoleActors;
beforeAll(async () => {
  actors = await consoleActors();
});
const open = closedAfterEach();

async function setUp() {
  const server = uniq('tasks');
  await trustServer(cli, server);
  await setPolicyRule(cli, { server, tool: null, requiredApprovals: 0 });
  const t = testContext(actors, server);
  const mcp = createTaskMcpServer(undefined, { workMs: 60, pollIntervalMs: 20 });
  const client = await clientThroughGateway(mcp, t.ctx, open, 'tasks-through-gateway');
  await client.listTools();
  return { t, client };
}

async function run(client: Client, ref: string, mode: string, ttl?: number) {
  const messages: string[] = [];
  const stream = client.experimental.tasks.callToolStream(
    { name: 'apply_credit', arguments: { account: 'acc_9', mode }, _meta: { 'countersign/requestRef': ref } },
    CallToolResultSchema,
    { task: ttl ? { ttl } : {} },
  );
  for await (const m of stream) messages.push(m.type === 'taskStatus' ? `status:${m.task.status}` : m.type);
  return messages;
}

async function recordsOf(requestRef: string, reporter: { flush(): Promise<unknown> }) {
  await reporter.flush();
  const found = await listIncidentOutcomes(await makeApiKey(['outcomes:read']), requestRef);
  if (!found.ok) throw new Error(found.failure);
  return found.value.map((r) => ({
    observed: r.observed,
    category: r.classification.category,
    taskId: r.observed.task?.id,
  }));
}

const shape = (records: Awaited<ReturnType<typeof recordsOf>>) =>
  records.map((r) => {
    const task = (r.observed as { task?: { status: string; expired?: boolean } }).task;
    return [task ? `${task.status}${task.expired ? ' (expired)' : ''}` : null, r.category];
  });

describe('gateway, MCP tasks', () => {
  it('a task that completes: working, then the result from tasks/result (ok)', async () => {
    const { t, client } = await setUp();
    const ref = uniq('req');
    const messages = await run(client, ref, 'complete');
    expect(messages.at(-1)).toBe('result');
    const records = await recordsOf(ref, t.ctx.reporter);
    expect(shape(records)).toEqual([
      ['working', 'task_running'],
      ['completed', 'ok'],
    ]);
    expect(new Set(records.map((r) => r.taskId)).size).toBe(1);
    expect(records[0].taskId).toMatch(/^[0-9a-f]{32}$/);
  });

  it('a task that fails: the status alone is no_response; the isError result from tasks/result decides', async () => {
    const { t, client } = await setUp();
    const ref = uniq('req');
    const messages = await run(client, ref, 'fail');
    // The SDK's stream stops at the failed status with its own -32603 and reads no result.
    expect(messages.slice(-2)).toEqual(['status:failed', 'error']);
    expect(shape(await recordsOf(ref, t.ctx.reporter))).toEqual([
      ['working', 'task_running'],
      ['failed', 'no_response'],
    ]);
    // A client that reads the failed task's result: that answer decides, as a further record.
    const taskId = (await recordsOf(ref, t.ctx.reporter))[0].taskId!;
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.isError).toBe(true);
    expect(shape(await recordsOf(ref, t.ctx.reporter))).toEqual([
      ['working', 'task_running'],
      ['failed', 'no_response'],
      ['failed', 'tool_error'],
    ]);
  });

  it('a task that outlives its TTL: tasks/get not found, reported expired', async () => {
    const { t, client } = await setUp();
    const ref = uniq('req');
    const messages = await run(client, ref, 'hang', 150);
    expect(messages.at(-1)).toBe('error');
    expect(shape(await recordsOf(ref, t.ctx.reporter))).toEqual([
      ['working', 'task_running'],
      ['working (expired)', 'task_expired'],
    ]);
  });

  it("the server's tasks capability is shown to a 2025 client, never to a 2026-07-28 one (its era has no tasks)", async () => {
    const { client } = await setUp();
    expect(client.getServerCapabilities()?.tasks).toEqual({ requests: { tools: { call: {} } }, list: {}, cancel: {} });

    const server = uniq('tasks-modern');
    const t = testContext(actors, server);
    const mcp = createTaskMcpServer(undefined, { workMs: 60, pollIntervalMs: 20 });
    const [clientSide, downSide] = V2InMemoryTransport.createLinkedPair();
    const served = await gatewayInMemory(mcp, t.ctx, downSide as unknown as InMemoryTransport);
    const modern = new V2Client(
      { name: 'pinned-client', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    open.push(async () => {
      await modern.close();
      await served.close();
      await mcp.close();
      await t.ctx.reporter.close(2000);
    });
    await modern.connect(clientSide);
    expect(modern.getProtocolEra()).toBe('modern');
    expect(modern.getServerCapabilities()?.tools).toBeDefined();
    expect(modern.getServerCapabilities()?.tasks).toBeUndefined();
  });

  it("over HTTP, a 2025 client's own session: a task that completes is recorded as over stdio", async () => {
    const server = uniq('tasks-http');
    await trustServer(cli, server);
    await setPolicyRule(cli, { server, tool: null, requiredApprovals: 0 });
    const t = testContext(actors, server);
    const upstream = await serveOverHttp(() => createTaskMcpServer(undefined, { workMs: 60, pollIntervalMs: 20 }));
    const gateway = await runHttp(t.ctx, upstream.url, '127.0.0.1', 0);
    const client = new Client({ name: 'tasks-over-http', version: '1.0.0' });
    open.push(async () => {
      await client.close();
      await gateway.close();
      await upstream.close();
      await t.ctx.reporter.close(2000);
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url)));
    await client.listTools();
    const ref = uniq('req');
    const messages = await run(client, ref, 'complete');
    expect(messages.at(-1)).toBe('result');
    const records = await recordsOf(ref, t.ctx.reporter);
    expect(shape(records)).toEqual([
      ['working', 'task_running'],
      ['completed', 'ok'],
    ]);
    expect(new Set(records.map((r) => r.taskId)).size).toBe(1);
  });

  it.each(['in memory (the stdio side)', 'over HTTP (a 2025 session)'])(
    'a task whose server asks its client (input_required), %s: the request reaches the client on its tasks/result, the task completes, each status recorded',
    async (over) => {
      const server = uniq('tasks-asking');
      await trustServer(cli, server);
      await setPolicyRule(cli, { server, tool: null, requiredApprovals: 0 });
      const t = testContext(actors, server);
      const options = { workMs: 60, pollIntervalMs: 20 };
      const client = new Client({ name: 'tasks-asked', version: '1.0.0' }, { capabilities: { elicitation: {} } });
      const asked: unknown[] = [];
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        asked.push(request.params.message);
        return { action: 'accept', content: { confirm: true } };
      });
      if (over.startsWith('in memory')) {
        const mcp = createTaskMcpServer(undefined, options);
        const [clientSide, downSide] = InMemoryTransport.createLinkedPair();
        const served = await gatewayInMemory(mcp, t.ctx, downSide);
        open.push(async () => {
          await client.close();
          await served.close();
          await mcp.close();
          await t.ctx.reporter.close(2000);
        });
        await client.connect(clientSide);
      } else {
        const upstream = await serveOverHttp(() => createTaskMcpServer(undefined, options));
        const gateway = await runHttp(t.ctx, upstream.url, '127.0.0.1', 0);
        open.push(async () => {
          await client.close();
          await gateway.close();
          await upstream.close();
          await t.ctx.reporter.close(2000);
        });
        await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url)));
      }
      await client.listTools();
      const ref = uniq('req');
      const messages = await run(client, ref, 'ask');
      expect(asked).toEqual(['Credit acc_9?']);
      expect(messages.slice(-2)).toEqual(['status:input_required', 'result']);
      const records = await recordsOf(ref, t.ctx.reporter);
      expect(shape(records)).toEqual([
        ['working', 'task_running'],
        ['input_required', 'task_input_required'],
        ['completed', 'ok'],
      ]);
      expect(records[2].observed.result).toEqual({ isError: false, outputValidation: 'valid' });
      expect(new Set(records.map((r) => r.taskId)).size).toBe(1);
    },
  );

  it("tasks/cancel by the client: reaches the server, whose task ends cancelled; recorded task_cancelled with the task's id", async () => {
    const server = uniq('tasks-cancel');
    await trustServer(cli, server);
    await setPolicyRule(cli, { server, tool: null, requiredApprovals: 0 });
    const t = testContext(actors, server);
    const store = new InMemoryTaskStore();
    const client = await clientThroughGateway(
      createTaskMcpServer(store, { workMs: 60, pollIntervalMs: 20 }),
      t.ctx,
      open,
      'tasks-cancelling',
    );
    open.push(async () => store.cleanup());
    await client.listTools();
    const ref = uniq('req');
    const created = await client.request(
      {
        method: 'tools/call',
        params: {
          name: 'apply_credit',
          arguments: { account: 'acc_9', mode: 'hang' },
          task: {},
          _meta: { 'countersign/requestRef': ref },
        },
      },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    const cancelled = await client.experimental.tasks.cancelTask(taskId);
    expect(cancelled).toMatchObject({ taskId, status: 'cancelled' });
    // The server's own task, not only its answer: cancelled.
    expect((await store.getTask(taskId))?.status).toBe('cancelled');
    const records = await recordsOf(ref, t.ctx.reporter);
    expect(shape(records)).toEqual([
      ['working', 'task_running'],
      ['cancelled', 'task_cancelled'],
    ]);
    expect(records.map((r) => r.taskId)).toEqual([taskId, taskId]);
  });

  it('a host that probes with server/discover before its initialize: its task is served and recorded as any', async () => {
    const server = uniq('tasks-probed');
    await trustServer(cli, server);
    await setPolicyRule(cli, { server, tool: null, requiredApprovals: 0 });
    const t = testContext(actors, server);
    const mcp = createTaskMcpServer(undefined, { workMs: 60, pollIntervalMs: 20 });
    const [clientSide, downSide] = InMemoryTransport.createLinkedPair();
    const served = await gatewayInMemory(mcp, t.ctx, downSide);
    const client = new Client({ name: 'tasks-probing', version: '1.0.0' });
    open.push(async () => {
      await client.close();
      await served.close();
      await mcp.close();
      await t.ctx.reporter.close(2000);
    });
    const answers: unknown[] = [];
    clientSide.onmessage = (m) => void answers.push(m);
    await clientSide.start();
    await clientSide.send({
      jsonrpc: '2.0',
      id: 'probe-1',
      method: 'server/discover',
      params: { _meta: MODERN_ENVELOPE },
    });
    await vi.waitFor(() => expect(answers).toHaveLength(1), { timeout: 5000 });
    expect(answers[0]).toMatchObject({ id: 'probe-1', result: { supportedVersions: ['2026-07-28'] } });
    await client.connect(clientSide);
    expect(client.getServerCapabilities()?.tasks).toEqual({ requests: { tools: { call: {} } }, list: {}, cancel: {} });
    const ref = uniq('req');
    expect((await run(client, ref, 'complete')).at(-1)).toBe('result');
    expect(shape(await recordsOf(ref, t.ctx.reporter))).toEqual([
      ['working', 'task_running'],
      ['completed', 'ok'],
    ]);
  });
});
