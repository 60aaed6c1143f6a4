// `tools/call` through the gateway: policy, then (when needed) a grant staged, waited for and
// redeemed right before forwarding (approval-gate.ts), then the call forwarded unchanged and its
// answer observed with lib/mcp's observation and reported with the tool's annotations (a call the
// server makes a task: tasks.ts). Nothing else is ever done to it.
import {
  McpError,
  type CallToolResult,
  type JSONRPCErrorResponse,
  type JSONRPCMessage,
  type JSONRPCNotification,
  type JSONRPCRequest,
  type JSONRPCResultResponse,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { Observed } from '../outcomes/schemas';
import { argsDigest } from '../mcp/digest';
import { fromError, fromResult } from '../mcp/observed';
import { newTrace } from '../mcp/trace';
import {
  grantRefusal,
  holdForGrant,
  needsGrant,
  policyRefusal,
  progressShift,
  shiftedProgress,
  type Refusal,
} from './approval-gate';
import { callMeta, withMeta } from './call-meta';
import type { Exchange } from './exchange';
import { isErrorResponse } from './messages';
import { gatewayRecord, newEventId, type CallMeta } from './record';
import type { Relay } from './relay';
import { createdTask, Tasks } from './tasks';
import { gatewayError } from './tool-errors';
import { guardRead, writeGuard } from './guard';
import { DEFAULT_BUDGETS } from '../guards/budgets';
import { Unsent } from './unsent';

export type Id = string | number;

/** A call sent on to the server, awaiting its answer. */
export interface Forwarded {
  name: string;
  tool: Tool | undefined;
  meta: CallMeta;
  digest: Digest;
  grantId?: string;
  /** A trusted read: its record is what the read guards count (lib/guards/read-guard.ts). */
  read: boolean;
  startedAt: Date;
  t0: number;
  /** The call's progress token, when the gateway sent progress of its own on it while it held the call. */
  shiftedToken?: Id;
}

export class ToolCalls {
  private forwarded = new Map<Id, Forwarded>();
  /**
   * What the server's progress is raised by, per progress token of a forwarded call the gateway
   * held for its grant with progress of its own (approval-gate.ts progressShift).
   */
  private shifts = new Map<Id, number>();
  /** Calls that awaited something on their way and are not forwarded yet (see enforced()). */
  private unsent = new Map<Id, AbortController>();
  private tasks: Tasks;

  constructor(private readonly relay: Relay) {
    this.tasks = new Tasks(relay);
  }

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
    if (policy) this.relay.noticeHidden(policy.hiddenKey);
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
      const refusal = policyRefusal(verdict, name);
      if (refusal) {
        local();
        return this.refuse(request, meta, name, tool, digest, refusal);
      }
    }
    let grantId: string | undefined;
    if (needsGrant(verdict)) {
      local();
      const signal = unsent.signal();
      const guard = writeGuard(ctx, { name, meta, digest }, newEventId());
      const grant = await holdForGrant(this.relay, request, meta, name, tool, digest, signal, undefined, guard);
      // Cancelled, even if the grant was redeemed meanwhile (its answer came after the cancel, or
      // the redemption's own answer was cut by it): not sent. A redeemed grant is spent by then and
      // is not used again; the record names it, a call that redeemed a grant and was not sent.
      if (signal.aborted)
        return this.dropCancelled(exchange, meta, name, tool, digest, grant.ok ? grant.grantId : undefined);
      if (!grant.ok)
        return this.refuse(request, meta, name, tool, digest, grantRefusal(this.relay.ctx.endpoint, grant));
      grantId = grant.grantId;
    }
    // A trusted read: the guards' rows for reads, counted in this process (lib/guards/read-guard.ts).
    const read = !unknownTool && (verdict?.readOnly === true || unansweredRead);
    if (read) {
      const refusal = guardRead(
        ctx,
        { requestRef: meta.requestRef, principal: ctx.principal, server: ctx.server, toolName: name, digest },
        verdict?.budgets ?? DEFAULT_BUDGETS,
      );
      if (refusal) {
        local();
        return this.refuse(request, meta, name, tool, digest, refusal);
      }
    }
    // Forwarded from here on: a cancel now is one of a call that was sent.
    unsent.release();
    const shift = progressShift(request);
    const token = progressTokenOf(request);
    const shiftedToken = shift && token !== undefined ? token : undefined;
    if (shiftedToken !== undefined) this.shifts.set(shiftedToken, shift);
    this.forwarded.set(request.id, {
      name,
      tool,
      meta,
      digest,
      grantId,
      read,
      startedAt: new Date(),
      t0: performance.now(),
      shiftedToken,
    });
    // Sent again on a closed kept-alive connection only when running it twice is harmless.
    const error = await this.relay.toServer(request, { resendable: read, exchange });
    // No HTTP exchange is traced here (the upstream reports its errors itself): an empty trace.
    if (error) this.finish(request.id, fromError(error, newTrace(), 'tools/call'), upstreamError(request.id));
  }

  /** The server's progress notification, raised above the gateway's own on a call it held (approval-gate.ts). */
  progressed(message: JSONRPCNotification): JSONRPCNotification {
    const params = message.params as { progressToken?: Id; progress?: unknown; total?: number } | undefined;
    const shift = params?.progressToken === undefined ? undefined : this.shifts.get(params.progressToken);
    if (!shift || typeof params?.progress !== 'number') return message;
    return { ...message, params: shiftedProgress(params as { progress: number; total?: number }, shift) };
  }

  /** The client asks about a task (tasks/get, tasks/result, tasks/cancel): its answer is observed. */
  taskRequest(request: JSONRPCRequest): void {
    this.tasks.request(request);
  }

  /** A server's answer to a forwarded call: passed on, then observed and reported. True when it was one. */
  answered(message: JSONRPCResultResponse | JSONRPCErrorResponse): boolean {
    const call = this.forwarded.get(message.id as Id);
    if (!call) {
      this.tasks.answer(message);
      return false;
    }
    const created = isErrorResponse(message) ? null : createdTask(message.result);
    if (created) {
      this.tasks.track(call, created);
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
    this.tasks.clear();
    this.shifts.clear();
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
    if (call.shiftedToken !== undefined) this.shifts.delete(call.shiftedToken);
    const durationMs = Math.round(performance.now() - call.t0);
    const eventId = newEventId();
    if (answer) void this.relay.toClient(withMeta(answer, call.meta.requestRef, eventId));
    const ctx = this.relay.ctx;
    // A write's record goes at once: the next guard check looks for it in the console.
    ctx.reporter.enqueueLater(() => {
      const record = gatewayRecord(ctx, {
        name: call.name,
        tool: call.tool,
        meta: call.meta,
        digest: call.digest(),
        observed: typeof observed === 'function' ? observed() : observed,
        startedAt: call.startedAt,
        durationMs,
        grantId: call.grantId,
        eventId,
      });
      if (call.read) ctx.reads.note(record);
      return record;
    }, !call.read);
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

  /** A call the gateway answers itself, unsent: recorded, and the refusal sent to the client. */
  private refuse(
    request: JSONRPCRequest,
    meta: CallMeta,
    name: string,
    tool: Tool | undefined,
    digest: Digest,
    { observed, category, text, recordedAs, ...detail }: Refusal,
  ): void {
    let eventId = recordedAs;
    if (eventId === undefined) {
      const record = gatewayRecord(this.relay.ctx, {
        name,
        tool,
        meta,
        digest: digest(),
        observed,
        startedAt: new Date(),
        durationMs: 0,
        earlierRecordId: detail.recordId,
      });
      this.relay.ctx.reporter.enqueue(record);
      eventId = record.eventId;
    }
    const result = gatewayError(category, text, detail);
    void this.relay.toClient(
      withMeta({ jsonrpc: '2.0', id: request.id, result } as JSONRPCMessage, meta.requestRef, eventId),
    );
  }
}

export type Digest = () => string;

/**
 * The arguments' digest, made when first asked for: before forwarding only by a call that needs
 * a grant (the approval request and the redemption name it); otherwise for the record, made after
 * the answer went out to the client.
 */
function lazyDigest(args: Record<string, unknown>): Digest {
  let digest: string | undefined;
  return () => (digest ??= argsDigest(args));
}

function progressTokenOf(request: JSONRPCRequest): Id | undefined {
  const token = (request.params?._meta as { progressToken?: unknown } | undefined)?.progressToken;
  return typeof token === 'string' || typeof token === 'number' ? token : undefined;
}

const upstreamError = (id: Id): JSONRPCMessage => ({
  jsonrpc: '2.0',
  id,
  error: { code: -32603, message: 'The gateway could not reach the MCP server; the call may not have been sent.' },
});

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
