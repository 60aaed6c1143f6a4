// MCP tasks through the wrapper, with the SDK's real task flow (experimental tasks API,
// InMemoryTaskStore) over InMemoryTransport and Streamable HTTP, driven by SDK v2's client: a task that completes, fails,
// is cancelled, outlives its TTL. Every status seen is its own record, linked by the task id.
import { afterEach, describe, expect, it } from 'vitest';
import { fakeCountersign } from '../../testing/fake-countersign';
import { connectTaskServer, TASK_SERVER_NAME, type TaskHarness } from '../../testing/mcp-tasks';
import { classifyRecord } from '../outcomes/classify';
import type { Outcome } from '../outcomes/schemas';
import { withCountersign, type GuardedCallResult } from './countersign-client';

const open: TaskHarness[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

async function setup(kind: 'in-memory' | 'streamable-http', workMs = 60) {
  const harness = await connectTaskServer(kind, { workMs, pollIntervalMs: 20 });
  open.push(harness);
  const countersign = fakeCountersign({ decide: () => 'approve', trustedServers: [TASK_SERVER_NAME] });
  const agent = withCountersign(harness.client, {
    url: 'http://countersign.test',
    apiKey: 'cs_live_fake',
    fetch: countersign.fetch,
    server: TASK_SERVER_NAME,
    trustedServer: true,
    organization: 'acme',
    principal: 'user_193',
    reporterOptions: { flushIntervalMs: 10 },
    approval: { pollInitialMs: 5, pollMaxMs: 20, maxWaitMs: 5000 },
  });
  return { harness, countersign, agent };
}

const verdict = (r: GuardedCallResult) => {
  const { boundary, delivery, category, retry } = r.classification;
  return { boundary, delivery, category, retry };
};
const tasksOf = (outcomes: Outcome[]) => outcomes.map((o) => o.observed.task);
const categories = (outcomes: Outcome[]) => outcomes.map((o) => classifyRecord(o, true).category);

describe.each(['in-memory', 'streamable-http'] as const)('MCP tasks over %s', (kind) => {
  it('a task that completes: working is reported, then the result (ok), linked by one task id', async () => {
    const { agent, countersign } = await setup(kind);
    const r = await agent.callTool(
      { name: 'apply_credit', arguments: { account: 'acc_1', mode: 'complete' } },
      { requestRef: 'req_task_ok', summary: 'Credit acc_1' },
    );
    expect(verdict(r)).toEqual({ boundary: 'none', delivery: 'completed', category: 'ok', retry: 'no' });
    expect(r.result?.structuredContent).toEqual({ credited: true, account: 'acc_1' });
    await agent.flush();
    const [first, last] = countersign.outcomes;
    expect(countersign.outcomes).toHaveLength(2);
    expect(tasksOf(countersign.outcomes)).toEqual([
      { id: expect.any(String), status: 'working' },
      { id: first.observed.task!.id, status: 'completed' },
    ]);
    expect(categories(countersign.outcomes)).toEqual(['task_running', 'ok']);
    expect(first.observed.task!.id).toMatch(/^[0-9a-f]{32}$/);
    expect(last.observed.result).toEqual({ isError: false, outputValidation: 'valid' });
    // Later statuses are later records.
    expect(Date.parse(last.occurredAt)).toBeGreaterThanOrEqual(Date.parse(first.occurredAt));
    expect(first.eventId).not.toBe(last.eventId);
    if (kind === 'streamable-http') expect(last.observed.httpStatus).toBe(200);
  });

  it('a task that fails with an isError result (2025-11-25): classified by the result, not the status', async () => {
    const { agent, countersign } = await setup(kind);
    const r = await agent.callTool(
      { name: 'apply_credit', arguments: { account: 'acc_2', mode: 'fail' } },
      { requestRef: 'req_task_fail', summary: 'Credit acc_2' },
    );
    expect(r.record.observed).toMatchObject({ task: { status: 'failed' }, result: { isError: true } });
    // No declared category on a write: the tool may have acted.
    expect(verdict(r)).toEqual({
      boundary: 'tool',
      delivery: 'unknown',
      category: 'tool_error',
      retry: 'after_state_check',
    });
    await agent.flush();
    expect(categories(countersign.outcomes)).toEqual(['task_running', 'tool_error']);
  });

  it('a task that is cancelled while working: task_cancelled, check state first', async () => {
    const { agent, countersign, harness } = await setup(kind);
    const pending = agent.callTool(
      { name: 'apply_credit', arguments: { account: 'acc_3', mode: 'hang' } },
      { requestRef: 'req_task_cancel', summary: 'Credit acc_3' },
    );
    // Someone cancels it through the SDK (tasks/cancel) once it exists.
    const deadline = Date.now() + 3000;
    let taskId: string | undefined;
    while (!taskId && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      taskId = await harness.firstTaskId();
    }
    expect(taskId).toBeDefined();
    await harness.cancelTask(taskId!);
    const r = await pending;
    expect(r.record.observed.task).toEqual({ id: taskId, status: 'cancelled' });
    expect(verdict(r)).toEqual({
      boundary: 'tool',
      delivery: 'unknown',
      category: 'task_cancelled',
      retry: 'after_state_check',
    });
    await agent.flush();
    expect(categories(countersign.outcomes)).toEqual(['task_running', 'task_cancelled']);
  });

  it('a task that outlives its TTL: expired, never a terminal status', async () => {
    const { agent, countersign } = await setup(kind);
    const r = await agent.callTool(
      { name: 'apply_credit', arguments: { account: 'acc_4', mode: 'hang' } },
      { requestRef: 'req_task_ttl', summary: 'Credit acc_4', task: { ttlMs: 150 } },
    );
    expect(r.record.observed.task).toEqual({ id: expect.any(String), status: 'working', expired: true });
    expect(verdict(r)).toEqual({
      boundary: 'tool',
      delivery: 'unknown',
      category: 'task_expired',
      retry: 'after_state_check',
    });
    expect(r.classification.nextStep).toMatch(/^Check the current state first/);
    await agent.flush();
    expect(categories(countersign.outcomes)).toEqual(['task_running', 'task_expired']);
    expect(new Set(tasksOf(countersign.outcomes).map((t) => t?.id)).size).toBe(1);
  });
});
