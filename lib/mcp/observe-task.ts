// One MCP tool call run as a **task** (2025-11-25; the SDK 1.32 experimental tasks API), observed:
// its creation, each status seen while polling, and the terminal answer, each as docs/api.md's
// `observed` with `task: { id, status, expired }`. Never classified from the status alone
// (docs/design.md): `completed` and `failed` are reported with the result or code `tasks/result` gave.
//
// The SDK's own stream is used for creation and polling (`client.experimental.tasks.requestStream`,
// which sends `tools/call` with the task parameter, then `tasks/get` until a terminal status). Its
// terminal messages say too little: on `failed` it yields a generic -32603, so the reported answer
// is read with `tasks/result` (`getTaskResult`): an `isError` result (2025-11-25) or the JSON-RPC
// error. A `tasks/get` answered -32602 ("task not found") after the task was created means the
// task is gone (its TTL passed): `expired`.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Task } from '@modelcontextprotocol/sdk/types.js';
import { CallToolResultSchema, ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Observed, ObservedTask, TaskStatus } from '../outcomes/schemas';
import type { ToolCatalog } from './catalog';
import { fromError, fromResult, statusOf, withStatus } from './observed';
import type { Observation } from './observe';
import { traces, type Trace } from './trace';

export interface TaskCallOptions {
  /** Also run tools whose `taskSupport` is `optional` as tasks (`required` ones always are). */
  prefer?: boolean;
  /** The TTL asked of the server, in ms (the server may pick another; it says which). */
  ttlMs?: number;
  /** Called with each observation before the terminal one: the creation, then each status change. */
  onStatus?: (observation: TaskObservation) => void;
}

export interface TaskObservation extends Observation {
  /** The task as the server last described it. */
  task: Task;
}

type Clock = { done(client: Client, trace?: Trace): Omit<Observation, 'observed'> };

/** Whether this call runs as a task: the tool requires it, or the caller asked for one. */
export function runsAsTask(catalog: ToolCatalog, name: string, asked: boolean): boolean {
  const support = catalog.tools.get(name)?.execution?.taskSupport;
  return support === 'required' || (asked && support === 'optional');
}

/**
 * Runs the call as a task and answers the terminal observation (`onStatus` saw the others).
 * Never throws for the call's own failures.
 */
export async function observeTaskCall(
  client: Client,
  params: { name: string; arguments?: Record<string, unknown> },
  ctx: {
    catalog: ToolCatalog;
    trace: Trace;
    signal: AbortSignal;
    timeoutMs?: number;
    clock: Clock;
    /** Why the wait was cut short locally, if it was (the caller's signal, a broken stream). */
    abortedAs: () => 'cancelled' | 'connection_lost' | null;
  },
  options: TaskCallOptions,
): Promise<Observation> {
  const tool = ctx.catalog.tools.get(params.name);
  const requestOptions = { signal: ctx.signal, timeout: ctx.timeoutMs };
  let last: Task | null = null;
  let reported: TaskStatus | null = null;
  const status = (method: string) => statusOf(ctx.trace, method);
  const observe = (observed: Observed, more: Partial<Observation> = {}): Observation => ({
    ...ctx.clock.done(client, ctx.trace),
    // When this was seen: a task's records sort by it.
    startedAt: new Date(),
    ...more,
    observed,
  });
  const withTask = (observed: Observed, task: Task, expired = false): Observed => ({
    ...observed,
    task: taskOf(task, expired),
  });

  return traces.run(ctx.trace, async () => {
    try {
      const stream = client.experimental.tasks.requestStream({ method: 'tools/call', params }, CallToolResultSchema, {
        ...requestOptions,
        task: options.ttlMs != null ? { ttl: options.ttlMs } : {},
      });
      for await (const message of stream) {
        if (message.type === 'taskCreated' || message.type === 'taskStatus') {
          last = message.task;
          if (isTerminal(last.status)) break;
          if (reported !== last.status) {
            reported = last.status;
            const method = message.type === 'taskCreated' ? 'tools/call' : 'tasks/get';
            options.onStatus?.({
              ...observe(withStatus(withTask({ sent: true }, last), status(method))),
              task: last,
            });
          }
          continue;
        }
        if (message.type === 'result') {
          // After input_required the SDK waits on tasks/result; the answer means it ended.
          const result = message.result as CallToolResult;
          const ended: Task = { ...(last ?? placeholderTask()), status: result.isError ? 'failed' : 'completed' };
          const seen = fromResult(result, tool, status('tasks/result'));
          return observe(withTask(seen.observed, ended), seen.result ? { result: seen.result } : {});
        }
        // An error before a task existed is the call's own error, as for any call.
        if (!last) return observe(fromError(message.error, ctx.trace, 'tools/call'), { error: message.error });
        // The task vanished under us: tasks/get no longer finds it.
        if (message.error.code === ErrorCode.InvalidParams) {
          return observe(withStatus(withTask({ sent: true }, last, true), status('tasks/get')), {
            error: message.error,
          });
        }
        // Stopped waiting, lost the connection or gave up polling: the task itself may still run.
        const local = fromError(message.error, ctx.trace, 'tasks/get');
        const clientError = ctx.abortedAs() ?? local.clientError ?? 'connection_lost';
        return observe(withTask({ sent: true, clientError }, last), { error: message.error });
      }
      if (!last) return observe(withStatus({ sent: true }, status('tools/call')));
      const ended: Task = last;
      if (ended.status === 'cancelled')
        return observe(withStatus(withTask({ sent: true }, ended), status('tasks/get')));
      // completed or failed: what tasks/result reports decides, never the status alone.
      try {
        const result = (await client.experimental.tasks.getTaskResult(
          ended.taskId,
          CallToolResultSchema,
          requestOptions,
        )) as CallToolResult;
        const seen = fromResult(result, tool, status('tasks/result'));
        return observe(withTask(seen.observed, ended), seen.result ? { result: seen.result } : {});
      } catch (error) {
        const seen =
          error instanceof McpError && error.code === ErrorCode.InvalidParams && ended.status === 'completed'
            ? // Completed, then gone before its result was read: nothing trustworthy came back.
              withStatus({ sent: true }, status('tasks/result'))
            : fromError(error, ctx.trace, 'tasks/result');
        return observe(withTask(seen, ended), { error });
      }
    } catch (error) {
      // The stream itself threw (it should not): as any other failure after sending.
      const seen = fromError(error, ctx.trace, last ? 'tasks/get' : 'tools/call');
      return observe(last ? withTask(seen, last) : seen, { error });
    }
  });
}

const isTerminal = (s: TaskStatus) => s === 'completed' || s === 'failed' || s === 'cancelled';

function taskOf(task: Task, expired: boolean): ObservedTask {
  return {
    id: task.taskId.slice(0, 200),
    status: task.status,
    ...(expired && !isTerminal(task.status) ? { expired: true } : {}),
  };
}

function placeholderTask(): Task {
  const now = new Date().toISOString();
  return { taskId: 'unknown', status: 'working', ttl: null, createdAt: now, lastUpdatedAt: now };
}
