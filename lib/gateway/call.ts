// `tools/call` through the gateway: policy, then (when needed) a grant staged, waited for and
// redeemed right before forwarding, then the call forwarded unchanged and its answer observed with
// lib/mcp's observation and reported with the tool's annotations. Nothing else is ever done to it.
import {
  McpError,
  type CallToolResult,
  type JSONRPCErrorResponse,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type JSONRPCResultResponse,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { taskStatuses, type Observed, type TaskStatus } from '../outcomes/schemas';
import { obtainGrant, type GrantOutcome } from '../mcp/approvals';
import { approvalKey } from '../mcp/countersign-client';
import { argsDigest } from '../mcp/digest';
import { fromError, fromResult } from '../mcp/observed';
import { newTrace } from '../mcp/trace';
import { approvalUrl } from './context';
import type { Exchange } from './exchange';
import { isErrorResponse } from './messages';
import { gatewayRecord, newEventId, type CallMeta } from './record';
import type { Relay } from './relay';
import { gatewayError } from './tool-errors';

type Id = string | number;

interface Forwarded {
  name: string;
  tool: Tool | undefined;
  meta: CallMeta;
  digest: Digest;
  grantId?: string;
  startedAt: Date;
  t0: number;
}

// A call the server turned into an MCP task: later tasks/get, tasks/result and tasks/cancel
// answers about it are observed too, each new status a record with the task id.
interface TaskCall extends Forwarded {
  taskId: string;
  status: TaskStatus;
}

export class ToolCalls {
  private forwarded = new Map<Id, Forwarded>();
  /** Calls that awaited something on their way and are not forwarded yet (see enforced()). */
  private unsent = new Map<Id, AbortController>();
  private tasks = new Map<string, TaskCall>();
  private taskRequests = new Map<Id, { taskId: string; method: string }>();

  constructor(private readonly relay: Relay) {}

  /** `exchange`: the client's HTTP request (HTTP mode), told when the gateway answers the call itself. */
  async handle(request: JSONRPCRequest, exchange?: Exchange): Promise<void> {
    const params = (request.params ?? {}) as { name?: unknown; arguments?: unknown; _meta?: Record<string, unknown> };
    // Not a call we can read (no name): the server answers it as it would without the gateway.
    if (typeof params.name !== 'string') return void this.relay.toServer(request, { exchange });
    const name = params.name;
    const args = isRecord(params.arguments) ? params.arguments : {};
    const meta = callMeta(params._meta, this.relay.sessionRef, name);
    const digest = lazyDigest(args);
    const unsent = new Unsent(this.unsent, request.id);
    try {
      await this.enforced(request, exchange, name, meta, digest, unsent);
    } finally {
      unsent.release();
    }
  }

  // A call is stoppable from its arrival until it is forwarded: every await on its way (the
  // catalog, the policy, the grant) registers it in `unsent` with an AbortController, which the
  // client's notifications/cancelled aborts (cancelled() below), and is followed by a check of
  // it. A cancelled call is never forwarded: recorded never_sent / cancelled, and not answered
  // (MCP: a cancelled request gets no response). The usual call, catalog known and policy fresh,
  // awaits nothing before it is forwarded: nothing can come between, so nothing is registered.
  private async enforced(
    request: JSONRPCRequest,
    exchange: Exchange | undefined,
    name: string,
    meta: CallMeta,
    digest: Digest,
    unsent: Unsent,
  ): Promise<void> {
    const ctx = this.relay.ctx;
    // The usual case without a wait: the catalog known and its policy fresh.
    let catalog: Map<string, Tool> | null = this.relay.catalog;
    if (!this.relay.catalogLoaded) {
      const signal = unsent.signal();
      catalog = await this.relay.tools();
      if (signal.aborted) return this.dropCancelled(exchange, meta, name, catalog?.get(name), digest);
    }
    const tool = catalog?.get(name);
    const list = catalog ? this.relay.toolList() : null;
    let policy = list ? ctx.policy.cached(list) : ctx.policy.last();
    if (list && !policy) {
      const signal = unsent.signal();
      policy = await ctx.policy.get(list);
      if (signal.aborted) return this.dropCancelled(exchange, meta, name, tool, digest);
    }
    if (policy) this.relay.noticeBlocked(policy.blockedKey);
    const verdict = policy?.tools.get(name);

    // A tool the server does not list is not ours to judge: it answers "unknown tool" itself.
    const unknownTool = catalog !== null && !tool;
    // The console never answered (down since the gateway started): a tool the server declares
    // read-only goes through, its record buffered; anything else fails closed below.
    const unansweredRead = !policy && tool?.annotations?.readOnlyHint === true;
    // The gateway answers (or holds) the call itself: the server is not asked now, so the
    // client's HTTP request waits for no refusal of the server's.
    const local = () => exchange?.settle(null);
    if (!unknownTool && !unansweredRead) {
      if (!verdict) {
        local();
        return this.refuse(
          request,
          meta,
          name,
          tool,
          digest,
          { sent: false, clientBlock: 'approval_required' },
          'unavailable',
          'Countersign cannot be reached, so this call was not sent: nothing was done. Try again later.',
        );
      }
      if (verdict.blocked) {
        local();
        return this.refuse(
          request,
          meta,
          name,
          tool,
          digest,
          { sent: false, clientBlock: 'denied_by_policy' },
          'denied_by_policy',
          `The tool "${name}" is blocked by Countersign policy: it was not called, and cannot be approved.`,
        );
      }
    }
    let grantId: string | undefined;
    if (verdict && (verdict.requiredApprovals > 0 || !verdict.readOnly)) {
      local();
      const signal = unsent.signal();
      const grant = await this.hold(request, meta, name, tool, digest, signal);
      // Cancelled, even if the grant was redeemed meanwhile (its answer came after the cancel, or
      // the redemption's own answer was cut by it): not sent. A redeemed grant is spent by then and
      // is not used again; the record names it, a call that redeemed a grant and was not sent.
      if (signal.aborted)
        return this.dropCancelled(exchange, meta, name, tool, digest, grant.ok ? grant.grantId : undefined);
      if (!grant.ok) return this.blockedByGrant(request, meta, name, tool, digest, grant);
      grantId = grant.grantId;
    }
    // Forwarded from here on: a cancel now is one of a call that was sent.
    unsent.release();
    this.forwarded.set(request.id, { name, tool, meta, digest, grantId, startedAt: new Date(), t0: performance.now() });
    // Sent again on a closed kept-alive connection only when running it twice is harmless.
    const error = await this.relay.toServer(request, {
      resendable: verdict?.readOnly === true || unansweredRead,
      exchange,
    });
    // No HTTP exchange is traced here (the upstream reports its errors itself): an empty trace.
    if (error) this.finish(request.id, fromError(error, newTrace(), 'tools/call'), upstreamError(request.id));
  }

  /** The client asks about a task (tasks/get, tasks/result, tasks/cancel): its answer is observed. */
  taskRequest(request: JSONRPCRequest): void {
    const taskId = (request.params as { taskId?: unknown } | undefined)?.taskId;
    if (typeof taskId === 'string' && this.tasks.has(taskId)) {
      this.taskRequests.set(request.id, { taskId, method: request.method });
    }
  }

  /**
   * A server's answer about a task the gateway saw created: a new status, the terminal result, or
   * "not found" (the task is gone: expired) is reported. Passed on unchanged by the relay.
   */
  observeTaskAnswer(message: JSONRPCResultResponse | JSONRPCErrorResponse): void {
    const asked = this.taskRequests.get(message.id as Id);
    if (!asked) return;
    this.taskRequests.delete(message.id as Id);
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

  /** A server's answer to a forwarded call: passed on, then observed and reported. True when it was one. */
  answered(message: JSONRPCResultResponse | JSONRPCErrorResponse): boolean {
    const call = this.forwarded.get(message.id as Id);
    if (!call) {
      this.observeTaskAnswer(message);
      return false;
    }
    const created = isErrorResponse(message) ? null : createdTask(message.result);
    if (created) {
      // The server made the call a task: it was accepted and runs; its outcome comes later.
      // Bounded: a client that never asks again leaves its oldest tasks forgotten, not kept forever.
      if (this.tasks.size >= MAX_TASKS) this.tasks.delete(this.tasks.keys().next().value!);
      this.tasks.set(created.taskId, { ...call, taskId: created.taskId, status: created.status });
      this.finish(
        message.id as Id,
        { sent: true, task: { id: created.taskId.slice(0, 200), status: created.status } },
        message,
      );
      return true;
    }
    if (isErrorResponse(message)) {
      const code = message.error.code;
      this.finish(message.id as Id, () => fromError(new McpError(code, ''), newTrace(), 'tools/call'), message);
    } else {
      const result = message.result as CallToolResult;
      this.finish(message.id as Id, () => fromResult(result, call.tool, null).observed, message);
    }
    return true;
  }

  /**
   * The client cancelled: a call not forwarded yet is dropped (never sent; true: the server never
   * saw it, the cancel is not passed on); a forwarded one is reported cancelled, and the cancel
   * goes on to the server, as does one for any id the gateway does not hold.
   */
  cancelled(id: Id | undefined): boolean {
    if (id === undefined) return false;
    const unsent = this.unsent.get(id);
    if (unsent) {
      unsent.abort();
      return true;
    }
    if (this.forwarded.has(id)) this.finish(id, { sent: true, clientError: 'cancelled' }, null);
    return false;
  }

  connectionClosed(side: 'client' | 'server' | 'gateway'): void {
    this.taskRequests.clear();
    this.tasks.clear();
    for (const controller of this.unsent.values()) controller.abort();
    for (const id of [...this.forwarded.keys()]) {
      const error: JSONRPCMessage | null = side === 'client' ? null : upstreamError(id);
      this.finish(id, { sent: true, clientError: side === 'client' ? 'cancelled' : 'connection_lost' }, error);
    }
  }

  // The answer goes to the client first; the observation and the record are made after this I/O.
  private finish(id: Id, observed: Observed | (() => Observed), answer: JSONRPCMessage | null): void {
    const call = this.forwarded.get(id);
    if (!call) return;
    this.forwarded.delete(id);
    const durationMs = Math.round(performance.now() - call.t0);
    const eventId = newEventId();
    if (answer) void this.relay.toClient(withMeta(answer, call.meta.requestRef, eventId));
    const ctx = this.relay.ctx;
    ctx.reporter.enqueueLater(() =>
      gatewayRecord(ctx, {
        name: call.name,
        tool: call.tool,
        meta: call.meta,
        digest: call.digest(),
        observed: typeof observed === 'function' ? observed() : observed,
        startedAt: call.startedAt,
        durationMs,
        grantId: call.grantId,
        eventId,
      }),
    );
  }

  private async hold(
    request: JSONRPCRequest,
    meta: CallMeta,
    name: string,
    tool: Tool | undefined,
    digest: Digest,
    signal: AbortSignal,
  ) {
    const ctx = this.relay.ctx;
    const progressToken = (request.params?._meta as { progressToken?: unknown } | undefined)?.progressToken;
    let progress = 0;
    const tick =
      typeof progressToken === 'string' || typeof progressToken === 'number'
        ? setInterval(() => {
            void this.relay.toClient(
              {
                jsonrpc: '2.0',
                method: 'notifications/progress',
                params: { progressToken, progress: ++progress, message: 'Waiting for approval in Countersign' },
              },
              { relatedRequestId: request.id },
            );
          }, ctx.progressIntervalMs ?? 1000)
        : undefined;
    try {
      return await obtainGrant(
        ctx.endpoint,
        {
          body: {
            requestRef: meta.requestRef,
            organization: ctx.organization,
            principal: ctx.principal,
            ...(ctx.agent ? { agent: ctx.agent } : {}),
            server: ctx.server,
            tool: { name, annotations: gatewayRecord.annotations(tool) },
            argsDigest: digest(),
            summary: meta.summary,
          },
          idempotencyKey: approvalKey(ctx.server, name, meta, digest(), 1),
        },
        { maxWaitMs: ctx.approvalWaitMs, pollInitialMs: ctx.pollInitialMs ?? 500, pollMaxMs: 2000 },
        signal,
      );
    } finally {
      clearInterval(tick);
    }
  }

  private blockedByGrant(
    request: JSONRPCRequest,
    meta: CallMeta,
    name: string,
    tool: Tool | undefined,
    digest: Digest,
    grant: Extract<GrantOutcome, { ok: false }>,
  ) {
    const url = grant.approvalId ? approvalUrl(this.relay.ctx.endpoint, grant.approvalId) : undefined;
    const approval = grant.approvalId ? { id: grant.approvalId, url } : undefined;
    const [category, text] =
      grant.why === 'denied'
        ? (['denied', 'A reviewer denied this call in Countersign: it was not sent, and must not be retried.'] as const)
        : grant.why === 'expired' || grant.why === 'revoked'
          ? ([
              'approval_expired',
              `The approval is ${grant.why}: the call was not sent. The same call asks again.`,
            ] as const)
          : grant.why === 'unavailable'
            ? (['unavailable', 'Countersign cannot be reached, so this call was not sent: nothing was done.'] as const)
            : grant.why === 'pending'
              ? ([
                  'approval_required',
                  `This call needs approval in Countersign${url ? ` (${url})` : ''}; it was not sent. The same call goes through once it is approved.`,
                ] as const)
              : (['approval_required', `This call was not sent: ${grant.reason}.`] as const);
    const observed: Observed = { sent: false, clientBlock: grant.block };
    return this.refuse(request, meta, name, tool, digest, observed, category, text, approval);
  }

  /** A call cancelled before it was sent: recorded so, and not answered (the client stopped waiting). */
  private dropCancelled(
    exchange: Exchange | undefined,
    meta: CallMeta,
    name: string,
    tool: Tool | undefined,
    digest: Digest,
    grantId?: string,
  ): void {
    // Its HTTP request waits for no refusal of the server's: the server is never asked.
    exchange?.settle(null);
    this.relay.ctx.reporter.enqueue(
      gatewayRecord(this.relay.ctx, {
        name,
        tool,
        meta,
        digest: digest(),
        observed: { sent: false, clientError: 'cancelled' },
        startedAt: new Date(),
        durationMs: 0,
        grantId,
      }),
    );
  }

  private refuse(
    request: JSONRPCRequest,
    meta: CallMeta,
    name: string,
    tool: Tool | undefined,
    digest: Digest,
    observed: Observed,
    category: Parameters<typeof gatewayError>[0],
    text: string,
    approval?: { id: string; url?: string },
  ): void {
    const record = gatewayRecord(this.relay.ctx, {
      name,
      tool,
      meta,
      digest: digest(),
      observed,
      startedAt: new Date(),
      durationMs: 0,
    });
    this.relay.ctx.reporter.enqueue(record);
    const result = gatewayError(category, text, approval);
    void this.relay.toClient(
      withMeta({ jsonrpc: '2.0', id: request.id, result } as JSONRPCMessage, meta.requestRef, record.eventId),
    );
  }
}

type Digest = () => string;

/**
 * The arguments' digest, made when first asked for: before forwarding only by a call that needs
 * a grant (the approval request and the redemption name it); otherwise for the record, made after
 * the answer went out to the client.
 */
function lazyDigest(args: Record<string, unknown>): Digest {
  let digest: string | undefined;
  return () => (digest ??= argsDigest(args));
}

/** One call's registration in `unsent`, made by its first await on the way (see enforced()). */
class Unsent {
  private controller: AbortController | null = null;

  constructor(
    private readonly calls: Map<Id, AbortController>,
    private readonly id: Id,
  ) {}

  /** Registers the call (once); its signal is aborted when the client cancels it. */
  signal(): AbortSignal {
    if (!this.controller) this.calls.set(this.id, (this.controller = new AbortController()));
    return this.controller.signal;
  }

  /** Forwarded, or answered by the gateway: no longer the gateway's to stop. */
  release(): void {
    if (this.controller && this.calls.get(this.id) === this.controller) this.calls.delete(this.id);
  }
}

function callMeta(meta: Record<string, unknown> | undefined, sessionRef: string, name: string): CallMeta {
  const text = (key: string, max: number) => {
    const v = meta?.[key];
    return typeof v === 'string' && v.trim() ? v.trim().slice(0, max) : undefined;
  };
  return {
    requestRef: text('countersign/requestRef', 200) ?? sessionRef,
    idempotencyKey: text('countersign/idempotencyKey', 200),
    summary: text('countersign/summary', 500) ?? `${name} (through the Countersign gateway)`,
  };
}

function withMeta(message: JSONRPCMessage, requestRef: string, eventId: string): JSONRPCMessage {
  if (!('result' in message) || !isRecord(message.result)) return message;
  const result = message.result as { _meta?: Record<string, unknown> };
  return {
    ...message,
    result: {
      ...result,
      _meta: { ...result._meta, 'countersign/requestRef': requestRef, 'countersign/eventId': eventId },
    },
  } as JSONRPCMessage;
}

const upstreamError = (id: Id): JSONRPCMessage => ({
  jsonrpc: '2.0',
  id,
  error: { code: -32603, message: 'The gateway could not reach the MCP server; the call may not have been sent.' },
});

const MAX_TASKS = 1000;
const TASK_STATUSES = new Set<string>(taskStatuses);
const TERMINAL = new Set<TaskStatus>(['completed', 'failed', 'cancelled']);
const isTaskStatus = (v: unknown): v is TaskStatus => typeof v === 'string' && TASK_STATUSES.has(v);

/** The task of a CreateTaskResult (a tools/call answered with a task instead of a result). */
function createdTask(result: unknown): { taskId: string; status: TaskStatus } | null {
  if (!isRecord(result) || Array.isArray(result.content) || !isRecord(result.task)) return null;
  const { taskId, status } = result.task;
  return typeof taskId === 'string' && taskId && isTaskStatus(status) ? { taskId, status } : null;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
