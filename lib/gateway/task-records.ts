// MCP tasks of a 2025 client's calls through the gateway (2025-11-25; 2026-07-28 has no tasks): a
// `tools/call` the server answers with a task instead of a result (modern-record.ts `answered`) is
// tracked here, and the later tasks/get, tasks/result and tasks/cancel answers about it
// (modern-server.ts relays them) are observed, each new status a further record with the task id.
//
// A task lives in the server's session, so the tasks are kept per upstream client: a 2025 client's
// own session over HTTP, the child's one client over stdio.
//
// A task that needs its client's input (`input_required`) asks it with a request of its own
// (elicitation, sampling, roots) naming the task in its `_meta` (`related-task`), which the server
// sends while its client waits on `tasks/result` for that task: the gateway sends it on to the
// client whose `tasks/result` is waiting there, on that request (`taskAsker`).
import {
  ProtocolError,
  RELATED_TASK_META_KEY,
  type CallToolResult,
  type Client,
  type RequestOptions,
} from '@modelcontextprotocol/client';
import type { ServerContext } from '@modelcontextprotocol/server';
import { taskStatuses, type Observed, type TaskStatus } from '../outcomes/schemas';
import { fromError, fromResult } from '../mcp/observed';
import { newTrace } from '../mcp/trace';
import type { GatewayContext } from './context';
import type { Call } from './modern-record';
import { gatewayRecord } from './record';
import { NO_TIMEOUT_MS } from './upstream-client';
import { dropOldest } from '../bounded';

// A call the server turned into an MCP task, and its last status seen.
interface TaskCall {
  call: Call;
  taskId: string;
  status: TaskStatus;
  /** When the call went to the server (epoch ms): each record lasts from then. */
  t0: number;
}

const MAX_TASKS = 1000;
const TASK_METHODS = new Set(['tasks/get', 'tasks/result', 'tasks/cancel']);
const TASK_STATUSES = new Set<string>(taskStatuses);
const TERMINAL = new Set<TaskStatus>(['completed', 'failed', 'cancelled']);
const isTaskStatus = (v: unknown): v is TaskStatus => typeof v === 'string' && TASK_STATUSES.has(v);

/** The task of a CreateTaskResult (a tools/call answered with a task instead of a result). */
export function createdTask(result: unknown): { taskId: string; status: TaskStatus } | null {
  if (!isRecord(result) || Array.isArray(result.content) || !isRecord(result.task)) return null;
  const { taskId, status } = result.task;
  return typeof taskId === 'string' && taskId && isTaskStatus(status) ? { taskId, status } : null;
}

const perUpstream = new WeakMap<Client, TaskRecords>();

/** The tasks created through this upstream client. */
export function tasksOf(client: Client, ctx: GatewayContext): TaskRecords {
  let tasks = perUpstream.get(client);
  if (!tasks) perUpstream.set(client, (tasks = new TaskRecords(ctx)));
  return tasks;
}

/**
 * A request relayed to the server (`ctx`: the client's request): when it asks about a task the
 * gateway saw created (tasks/get, tasks/result, tasks/cancel), its answer is observed; it reaches
 * the client unchanged either way. While a `tasks/result` waits, the task's own requests go to
 * its client on it.
 */
export function observedTaskAnswer<T>(
  client: Client,
  method: string,
  params: unknown,
  ctx: ServerContext,
  send: () => Promise<T>,
): Promise<T> {
  const tasks = perUpstream.get(client);
  const taskId = isRecord(params) ? params.taskId : undefined;
  if (!tasks || !TASK_METHODS.has(method) || typeof taskId !== 'string' || !tasks.has(taskId)) return send();
  const waiting = method === 'tasks/result' ? tasks.wait(taskId, ctx) : undefined;
  return send()
    .then(
      (result) => {
        tasks.answer(taskId, method, { result });
        return result;
      },
      (error: unknown) => {
        // Only the server's own answer says something of the task; a local failure (the connection) says nothing.
        if (error instanceof ProtocolError) tasks.answer(taskId, method, { error });
        throw error;
      },
    )
    .finally(() => waiting?.());
}

/**
 * Who answers the server's request `params` (sent to the gateway's client `client`) when it names a
 * task whose client waits on `tasks/result`: a function sending it to that client, on that request.
 */
export function taskAsker(
  client: Client,
  params: unknown,
): ((method: string, options: RequestOptions) => Promise<Record<string, unknown>>) | undefined {
  const meta = isRecord(params) && isRecord(params._meta) ? params._meta[RELATED_TASK_META_KEY] : undefined;
  const taskId = isRecord(meta) ? meta.taskId : undefined;
  const ctx = typeof taskId === 'string' ? perUpstream.get(client)?.waiting(taskId) : undefined;
  if (!ctx) return undefined;
  // No timeout of the gateway's own: the server's request waits for a person as long as the server lets it.
  return (method, options) =>
    ctx.mcpReq.send({ method, params: params as Record<string, unknown> } as never, {
      timeout: NO_TIMEOUT_MS,
      ...options,
    }) as Promise<Record<string, unknown>>;
}

/** The tasks of one upstream session's calls. */
export class TaskRecords {
  private tasks = new Map<string, TaskCall>();
  /** The client's `tasks/result` requests waiting on the server, by task (the latest one). */
  private readonly waits = new Map<string, ServerContext>();

  constructor(private readonly ctx: GatewayContext) {}

  has(taskId: string): boolean {
    return this.tasks.has(taskId);
  }

  /** A `tasks/result` of the client (`ctx`) waits on the server for the task; the returned function ends its wait. */
  wait(taskId: string, ctx: ServerContext): () => void {
    this.waits.set(taskId, ctx);
    return () => {
      if (this.waits.get(taskId) === ctx) this.waits.delete(taskId);
    };
  }

  waiting(taskId: string): ServerContext | undefined {
    return this.waits.get(taskId);
  }

  /**
   * The server made a call a task: it was accepted and runs; its outcome comes later.
   * Bounded: a client that never asks again leaves its oldest tasks forgotten, not kept forever.
   */
  track(call: Call, created: { taskId: string; status: TaskStatus }, t0: number): void {
    this.tasks.set(created.taskId, { call, taskId: created.taskId, status: created.status, t0 });
    dropOldest(this.tasks, MAX_TASKS);
  }

  /**
   * The server's answer about a task the gateway saw created: a new status, the terminal result, or
   * "not found" (the task is gone: expired) is reported.
   */
  answer(taskId: string, method: string, answer: { result: unknown } | { error: ProtocolError }): void {
    const task = this.tasks.get(taskId);
    if (!task) return;
    const taskOf = (status: TaskStatus, expired = false) => ({
      id: task.taskId.slice(0, 200),
      status,
      ...(expired ? { expired: true } : {}),
    });
    if (method === 'tasks/result') {
      // The terminal answer: classified by what it says, never by the status alone.
      const result = 'result' in answer ? (answer.result as CallToolResult) : undefined;
      const observed: Observed = result
        ? fromResult(result, task.call.tool, null).observed
        : fromError((answer as { error: ProtocolError }).error, newTrace(), 'tools/call');
      const isError = !result || result.isError === true;
      const status: TaskStatus = TERMINAL.has(task.status) ? task.status : isError ? 'failed' : 'completed';
      this.tasks.delete(task.taskId);
      return this.report(task, { ...observed, task: taskOf(status) });
    }
    if ('error' in answer) {
      // tasks/get (or cancel) no longer finds it before a terminal status: expired.
      if (answer.error.code === -32602 && !TERMINAL.has(task.status)) {
        this.tasks.delete(task.taskId);
        this.report(task, { sent: true, task: taskOf(task.status, true) });
      }
      return;
    }
    const status = isRecord(answer.result) ? answer.result.status : undefined;
    if (!isTaskStatus(status) || status === task.status) return;
    task.status = status;
    // completed waits for tasks/result (the SDK always reads it). failed is reported as seen, with
    // nothing else (the status alone decides nothing: unknown for a write); SDK clients do not
    // read a failed task's result, and if one does, that answer is a further record.
    if (status === 'completed') return;
    if (status === 'cancelled') this.tasks.delete(task.taskId);
    this.report(task, { sent: true, task: taskOf(status) });
  }

  private report({ call, t0 }: TaskCall, observed: Observed): void {
    this.ctx.reporter.enqueue(
      gatewayRecord(this.ctx, {
        name: call.name,
        tool: call.tool,
        meta: call.meta,
        digest: call.digest(),
        observed,
        startedAt: new Date(),
        durationMs: Math.max(0, Date.now() - t0),
        grantId: call.grantId,
      }),
    );
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
