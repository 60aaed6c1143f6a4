// MCP tasks of calls through the gateway: a `tools/call` the server answers with a task instead of
// a result (call.ts) is tracked here, and the later tasks/get, tasks/result and tasks/cancel
// answers about it are observed, each new status a record with the task id.
import {
  McpError,
  type CallToolResult,
  type JSONRPCErrorResponse,
  type JSONRPCRequest,
  type JSONRPCResultResponse,
} from '@modelcontextprotocol/sdk/types.js';
import { taskStatuses, type Observed, type TaskStatus } from '../outcomes/schemas';
import { fromError, fromResult } from '../mcp/observed';
import { newTrace } from '../mcp/trace';
import type { Forwarded, Id } from './call';
import { isErrorResponse } from './messages';
import { gatewayRecord } from './record';
import type { Relay } from './relay';

// A call the server turned into an MCP task, and its last status seen.
interface TaskCall extends Forwarded {
  taskId: string;
  status: TaskStatus;
}

const MAX_TASKS = 1000;
const TASK_STATUSES = new Set<string>(taskStatuses);
const TERMINAL = new Set<TaskStatus>(['completed', 'failed', 'cancelled']);
const isTaskStatus = (v: unknown): v is TaskStatus => typeof v === 'string' && TASK_STATUSES.has(v);

/** The task of a CreateTaskResult (a tools/call answered with a task instead of a result). */
export function createdTask(result: unknown): { taskId: string; status: TaskStatus } | null {
  if (!isRecord(result) || Array.isArray(result.content) || !isRecord(result.task)) return null;
  const { taskId, status } = result.task;
  return typeof taskId === 'string' && taskId && isTaskStatus(status) ? { taskId, status } : null;
}

/** The tasks of one relay's calls, and the client's requests about them awaiting an answer. */
export class Tasks {
  private tasks = new Map<string, TaskCall>();
  private requests = new Map<Id, { taskId: string; method: string }>();

  constructor(private readonly relay: Relay) {}

  /**
   * The server made a forwarded call a task: it was accepted and runs; its outcome comes later.
   * Bounded: a client that never asks again leaves its oldest tasks forgotten, not kept forever.
   */
  track(call: Forwarded, created: { taskId: string; status: TaskStatus }): void {
    if (this.tasks.size >= MAX_TASKS) this.tasks.delete(this.tasks.keys().next().value!);
    this.tasks.set(created.taskId, { ...call, taskId: created.taskId, status: created.status });
  }

  /** The client asks about a task (tasks/get, tasks/result, tasks/cancel): its answer is observed. */
  request(request: JSONRPCRequest): void {
    const taskId = (request.params as { taskId?: unknown } | undefined)?.taskId;
    if (typeof taskId === 'string' && this.tasks.has(taskId)) {
      this.requests.set(request.id, { taskId, method: request.method });
    }
  }

  /**
   * A server's answer about a task the gateway saw created: a new status, the terminal result, or
   * "not found" (the task is gone: expired) is reported. Passed on unchanged by the relay.
   */
  answer(message: JSONRPCResultResponse | JSONRPCErrorResponse): void {
    const asked = this.requests.get(message.id as Id);
    if (!asked) return;
    this.requests.delete(message.id as Id);
    const task = this.tasks.get(asked.taskId);
    if (!task) return;
    const taskOf = (status: TaskStatus, expired = false) => ({
      id: task.taskId.slice(0, 200),
      status,
      ...(expired ? { expired: true } : {}),
    });
    if (asked.method === 'tasks/result') {
      // The terminal answer: classified by what it says, never by the status alone.
      const observed: Observed = isErrorResponse(message)
        ? { ...fromError(new McpError(message.error.code, ''), newTrace(), 'tools/call') }
        : fromResult(message.result as CallToolResult, task.tool, null).observed;
      const isError = isErrorResponse(message) || (message.result as CallToolResult).isError === true;
      const status: TaskStatus = TERMINAL.has(task.status) ? task.status : isError ? 'failed' : 'completed';
      this.tasks.delete(task.taskId);
      return this.report(task, { ...observed, task: taskOf(status) });
    }
    if (isErrorResponse(message)) {
      // tasks/get (or cancel) no longer finds it before a terminal status: expired.
      if (message.error.code === -32602 && !TERMINAL.has(task.status)) {
        this.tasks.delete(task.taskId);
        this.report(task, { sent: true, task: taskOf(task.status, true) });
      }
      return;
    }
    const status = (message.result as { status?: unknown }).status;
    if (!isTaskStatus(status) || status === task.status) return;
    task.status = status;
    // completed waits for tasks/result (the SDK always reads it). failed is reported as seen, with
    // nothing else (the status alone decides nothing: unknown for a write); SDK clients do not
    // read a failed task's result, and if one does, that answer is a further record.
    if (status === 'completed') return;
    if (status === 'cancelled') this.tasks.delete(task.taskId);
    this.report(task, { sent: true, task: taskOf(status) });
  }

  /** The connection is gone: so are its tasks and the questions about them. */
  clear(): void {
    this.requests.clear();
    this.tasks.clear();
  }

  private report(call: Forwarded, observed: Observed): void {
    this.relay.ctx.reporter.enqueue(
      gatewayRecord(this.relay.ctx, {
        name: call.name,
        tool: call.tool,
        meta: call.meta,
        digest: call.digest(),
        observed,
        startedAt: new Date(),
        durationMs: Math.round(performance.now() - call.t0),
        grantId: call.grantId,
      }),
    );
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
