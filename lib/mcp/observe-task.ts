// One MCP tool call run as a **task** (2025-11-25; 2026-07-28 has no tasks, so only a 2025
// connection runs one), observed: its creation, each status seen while polling, and the terminal
// answer, each as docs/api.md's `observed` with `task: { id, status, expired }`. Never classified
// from the status alone (docs/design.md): `completed` and `failed` are reported with the result or
// code `tasks/result` gave.
//
// SDK v2's Client has no tasks API, so the flow is the protocol's, sent with `client.request`:
// `tools/call` with the task parameter (answered with the created task), `tasks/get` every
// `pollInterval` until a terminal status, then `tasks/result` for the reported answer: an
// `isError` result (2025-11-25) or the JSON-RPC error. `input_required` is reported, then
// `tasks/result` waits for the end (as SDK v1's stream did). A `tasks/get` answered -32602
// ("task not found") after the task was created means the task is gone (its TTL passed): `expired`.
import {
  ProtocolError,
  ProtocolErrorCode,
  type CallToolResult,
  type Client,
  type RequestOptions,
  type StandardSchemaV1,
  type Task,
} from '@modelcontextprotocol/client';
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
  const requestOptions: RequestOptions = { signal: ctx.signal, timeout: ctx.timeoutMs };
  const send = (method: string, p: Record<string, unknown>) =>
    client.request({ method, params: p } as never, AS_SENT, requestOptions) as Promise<Record<string, unknown>>;
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
  const report = (task: Task, method: string) => {
    if (reported === task.status) return;
    reported = task.status;
    options.onStatus?.({ ...observe(withStatus(withTask({ sent: true }, task), status(method))), task });
  };
  // The reported answer of a task that ended (or waits for input: tasks/result waits for its end).
  const answer = async (task: Task): Promise<Observation> => {
    try {
      const result = (await send('tasks/result', { taskId: task.taskId })) as CallToolResult;
      const ended: Task = isTerminal(task.status) ? task : { ...task, status: result.isError ? 'failed' : 'completed' };
      const seen = fromResult(result, tool, status('tasks/result'));
      return observe(withTask(seen.observed, ended), seen.result ? { result: seen.result } : {});
    } catch (error) {
      if (isGone(error) && task.status === 'completed')
        // Completed, then gone before its result was read: nothing trustworthy came back.
        return observe(withTask(withStatus({ sent: true }, status('tasks/result')), task), { error });
      if (!isTerminal(task.status)) return stopped(error, task);
      return observe(withTask(fromError(error, ctx.trace, 'tasks/result'), task), { error });
    }
  };
  // Stopped waiting, lost the connection or gave up polling: the task itself may still run.
  const stopped = (error: unknown, task: Task): Observation => {
    const local = fromError(error, ctx.trace, 'tasks/get');
    const clientError = ctx.abortedAs() ?? local.clientError ?? 'connection_lost';
    return observe(withTask({ sent: true, clientError }, task), { error });
  };

  return traces.run(ctx.trace, async () => {
    let created: Record<string, unknown>;
    try {
      created = await send('tools/call', {
        ...params,
        task: options.ttlMs != null ? { ttl: options.ttlMs } : {},
      });
    } catch (error) {
      // An error before a task existed is the call's own error, as for any call.
      if (ctx.abortedAs())
        return observe(withStatus({ sent: true, clientError: ctx.abortedAs()! }, status('tools/call')), { error });
      return observe(fromError(error, ctx.trace, 'tools/call'), { error });
    }
    if (!isTask(created.task)) {
      // The server ran it as a plain call after all.
      const seen = fromResult(created as CallToolResult, tool, status('tools/call'));
      return observe(seen.observed, seen.result ? { result: seen.result } : {});
    }
    last = created.task;
    let method = 'tools/call';
    for (;;) {
      if (last.status === 'cancelled') return observe(withStatus(withTask({ sent: true }, last), status(method)));
      if (last.status === 'completed' || last.status === 'failed') return answer(last);
      report(last, method);
      if (last.status === 'input_required') return answer(last);
      try {
        await wait(last.pollInterval ?? 500, ctx.signal);
        const polled = await send('tasks/get', { taskId: last.taskId });
        method = 'tasks/get';
        if (isTask(polled)) last = { ...last, ...polled };
      } catch (error) {
        // The task vanished under us: tasks/get no longer finds it.
        if (isGone(error))
          return observe(withStatus(withTask({ sent: true }, last, true), status('tasks/get')), { error });
        return stopped(error, last);
      }
    }
  });
}

/** Results as the server sent them: the task flow reads its own fields. */
const AS_SENT: StandardSchemaV1<unknown, Record<string, unknown>> = {
  '~standard': {
    version: 1,
    vendor: 'countersign-mcp',
    validate: (value) => ({ value: value as Record<string, unknown> }),
  },
};

/** The server's -32602 to a `tasks/*` request: it finds no such task (its TTL passed). */
const isGone = (error: unknown) => error instanceof ProtocolError && error.code === ProtocolErrorCode.InvalidParams;

function isTask(v: unknown): v is Task {
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof (v as Task).taskId === 'string' &&
    typeof (v as Task).status === 'string'
  );
}

function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
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
