// The one record of a 2026-07-28 `tools/call` (modern-call.ts), however many rounds it takes:
// the state carries the call's id, when it began and how many of its requests were answered. The
// record is posted when the call ends (answered, refused, failed, cancelled), under an event id
// made of the call's id and the number of its request (`evt_<call>.<n>`: a replayed state cannot
// add a second record for the same request; the console keeps the first), dated at the call's
// first request, its `attempt` the number of requests it took, its rounds (when, who asked, which
// kinds, how many requests: round-state.ts) in `observed.rounds`. A call left at a round is held
// in `g.open` and recorded as that round (open-calls.ts), that round among its rounds.
import { ProtocolError, type CallToolResult, type Client, type Tool } from '@modelcontextprotocol/client';
import type { ServerContext } from '@modelcontextprotocol/server';
import type { Observed, ObservedRound } from '../outcomes/schemas';
import { fromError, fromResult } from '../mcp/observed';
import { newTrace } from '../mcp/trace';
import type { Refusal } from './approval-gate';
import { gatewayRecord, type CallMeta } from './record';
import { createdTask, tasksOf } from './task-records';
import { gatewayError } from './tool-errors';
import type { ModernGateway } from './modern-server';

export interface Call {
  name: string;
  tool: Tool | undefined;
  meta: CallMeta;
  digest: () => string;
  grantId?: string;
  /** A trusted read: its record is what the read guards count (lib/guards/read-guard.ts). */
  read?: boolean;
  /** The call's id, when its first request came and the number of this request (round-state.ts). */
  id: string;
  at: number;
  n: number;
  /** When the server ended the call, if that was before its record is made (a held call: held-calls.ts). */
  endedAt?: number;
  /** Its interim rounds so far, oldest first (round-state.ts `addRound`). */
  rounds: ObservedRound[];
}

/** The call failed upstream (or was cancelled): recorded, and the client gets the error. */
export function failed(g: ModernGateway, call: Call, error: unknown, ctx: ServerContext, startedAt: number): never {
  const observed = ctx.mcpReq.signal.aborted
    ? ({ sent: true, clientError: 'cancelled' } as Observed)
    : observedError(error);
  record(g, call, observed, startedAt, call.grantId);
  if (error instanceof ProtocolError) throw error;
  throw new ProtocolError(-32603, 'The gateway could not reach the MCP server; the call may not have been sent.');
}

/**
 * The server's final answer: recorded, and returned with the record's names. `client`: the SDK
 * client it came through, whose era the record's `resultType` follows and through which a 2025
 * server's task is followed; none on the 2026-07-28 lean path (modern-lean.ts), whose server
 * speaks 2026-07-28 and is never asked for a task.
 */
export function answered(
  g: ModernGateway,
  call: Call,
  result: Record<string, unknown>,
  startedAt: number,
  client: Client | undefined,
): Record<string, unknown> {
  const era = client ? client.getProtocolEra() : 'modern';
  // A 2025 server that made the call a task: its creation now, its later statuses as further records.
  const created = createdTask(result);
  if (created && client) tasksOf(client, g.ctx).track(call, created, startedAt);
  const observed: Observed = created
    ? { sent: true, task: { id: created.taskId.slice(0, 200), status: created.status } }
    : fromResult(result as CallToolResult, call.tool, null).observed;
  // A 2026-07-28 server's final answer is `complete` (the field may be left out: that is its
  // default); a 2025 server's answer has no such field, and its record none either.
  if (era === 'modern') observed.resultType = 'complete';
  const eventId = record(g, call, observed, startedAt, call.grantId);
  return withMeta(result, call.meta.requestRef, eventId);
}

/**
 * The call's one record, made after the current I/O: dated at its first request when it took
 * rounds (`startedAt`, when this request went to the server, otherwise), lasting until now (or
 * until the server ended it, when that came first).
 */
function outcome(
  call: Call,
  g: ModernGateway,
  observed: Observed,
  startedAt: number,
  grantId: string | undefined,
  earlierRecordId?: string,
) {
  const from = call.n > 1 ? call.at : startedAt;
  const durationMs = Math.max(0, (call.endedAt ?? Date.now()) - from);
  // The rounds as they are now: a call held at a round is recorded with that round last.
  if (call.rounds.length) observed = { ...observed, rounds: [...call.rounds] };
  return () => {
    const record = gatewayRecord(g.ctx, {
      name: call.name,
      tool: call.tool,
      meta: call.meta,
      digest: call.digest(),
      observed,
      startedAt: new Date(from),
      durationMs,
      grantId,
      eventId: eventIdOf(call),
      attempt: call.n,
      earlierRecordId,
    });
    if (call.read) g.ctx.reads.note(record);
    return record;
  };
}

export const eventIdOf = (call: Call) => `evt_${call.id}.${call.n}`;

export function record(
  g: ModernGateway,
  call: Call,
  observed: Observed,
  startedAt: number,
  grantId: string | undefined,
  earlierRecordId?: string,
): string {
  // A write's record goes at once: the next guard check looks for it in the console.
  g.ctx.reporter.enqueueLater(outcome(call, g, observed, startedAt, grantId, earlierRecordId), !call.read);
  return eventIdOf(call);
}

/** The call answered with a round: recorded as `observed` only if its client never comes back. */
export function hold(
  g: ModernGateway,
  call: Call,
  observed: Observed,
  startedAt: number,
  grantId?: string,
  options?: { afterMs?: number; posted?: () => boolean | void },
): void {
  g.open.hold(call.id, outcome(call, g, observed, startedAt, grantId), options);
}

/**
 * A call cancelled before it was forwarded: recorded never sent, naming a grant redeemed in that
 * instant (spent, never used), and not answered: the client's request is gone.
 */
export function drop(g: ModernGateway, call: Call, grantId?: string): Record<string, unknown> {
  record(g, call, { sent: false, clientError: 'cancelled' }, Date.now(), grantId);
  return {};
}

export function refuse(g: ModernGateway, call: Call, { observed, category, text, recordedAs, ...detail }: Refusal) {
  const eventId = recordedAs ?? record(g, call, observed, Date.now(), undefined, detail.recordId);
  return withMeta({ ...gatewayError(category, text, detail) }, call.meta.requestRef, eventId);
}

export function withMeta(
  result: Record<string, unknown>,
  requestRef: string,
  eventId: string,
): Record<string, unknown> {
  const meta = isRecord(result._meta) ? result._meta : {};
  return { ...result, _meta: { ...meta, 'countersign/requestRef': requestRef, 'countersign/eventId': eventId } };
}

/**
 * What the call's failure says, for the record. The server's JSON-RPC error (SDK v2's
 * ProtocolError: only ever the other side's answer) keeps its code as sent, 2026-07-28's
 * -32020/-32021/-32022 included, never read as a local timeout or closed connection; the rest
 * (HTTP and auth refusals, the client's own timeout and closed connection) is read by lib/mcp's
 * observation.
 */
export function observedError(error: unknown): Observed {
  if (error instanceof ProtocolError) return { sent: true, jsonRpcErrorCode: error.code };
  return fromError(error, newTrace(), 'tools/call');
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
