// `tools/call` from a 2026-07-28 client (modern-server.ts): the same policy, approval gate,
// observation and record as a 2025 session's (call.ts), on SDK v2's server and client. A retry of
// an `input_required` round carries the gateway's own requestState (round-state.ts), verified by
// the SDK before this runs: it must name this call's tool and arguments, and a grant redeemed in
// an earlier round of the same call is not asked for again.
//
// One record per call, however many rounds it takes: the state carries the call's id, when it
// began and how many of its requests were answered. The record is posted when the call ends
// (answered, refused, failed, cancelled), under an event id made of the call's id and the number
// of its request (`evt_<call>.<n>`: a replayed state cannot add a second record for the same
// request; the console keeps the first), dated at the call's first request, its `attempt` the
// number of requests it took. A call left at a round is held in `g.open` and recorded as that
// round (open-calls.ts): the server's round as `input_required`, the gateway's approval round
// as never sent.
//
// In front of a 2025 server, the call is held open upstream across its rounds (held-calls.ts):
// the server's own requests mid-call become rounds, and a retry of one resumes the held call.
import { randomUUID } from 'node:crypto';
import {
  ProtocolError,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  type Client,
  type RequestOptions,
} from '@modelcontextprotocol/client';
import { inputRequired, type ServerContext } from '@modelcontextprotocol/server';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Observed } from '../outcomes/schemas';
import { argsDigest } from '../mcp/digest';
import { fromError, fromResult } from '../mcp/observed';
import { newTrace } from '../mcp/trace';
import { needsGrant, policyRefusal, type Refusal } from './approval-gate';
import { approvalGate } from './modern-approval';
import { callMeta } from './call-meta';
import { gatewayRecord, type CallMeta } from './record';
import { credentialKey, forward, HELD_HEADER } from './upstream-client';
import { HOLD_MS, type HeldCall } from './held-calls';
import { gatewayError } from './tool-errors';
import { guardRead, writeGuard } from './guard';
import { DEFAULT_BUDGETS } from '../guards/budgets';
import type { ModernExchange } from './modern-exchange';
import { noticeHidden, relayOptions, sent, upstreamParams, wrapRound, type ModernGateway } from './modern-server';
import type { RoundState } from './round-state';

interface Call {
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
}

export async function callTool(
  g: ModernGateway,
  client: Client,
  exchange: ModernExchange | undefined,
  lifted: unknown,
  ctx: ServerContext,
): Promise<Record<string, unknown>> {
  const state = ctx.mcpReq.requestState<RoundState>() as RoundState | undefined;
  const raw = sent(exchange, lifted);
  const params = raw ?? {};
  // Not a call we can read (no name): the server answers it as it would without the gateway.
  if (typeof params.name !== 'string')
    return forward(
      client,
      'tools/call',
      upstreamParams(client, raw, state, ctx, exchange?.declared),
      relayOptions(ctx, raw, exchange),
    );
  const name = params.name;
  const args = isRecord(params.arguments) ? params.arguments : {};
  let digest: string | undefined;
  const call: Call = {
    name,
    tool: undefined,
    // 2026-07-28 has no sessions: a call that names no reference gets one of its own, kept across its rounds.
    meta: callMeta(isRecord(params._meta) ? params._meta : undefined, state?.ref ?? `gw-${randomUUID()}`, name),
    digest: () => (digest ??= argsDigest(args)),
    id: state?.call ?? randomUUID(),
    at: state?.at ?? Date.now(),
    n: (state?.n ?? 0) + 1,
  };
  if (state && (state.tool !== name || state.digest !== call.digest())) throw invalidState();
  // A round that mirrored a 2025 server's requests: its call is still running upstream, held for this retry.
  if (state?.held !== undefined) return resume(g, client, call, state, ctx, raw, exchange);
  // The client came back: this request records the call (or holds it again at its next round).
  g.open.take(call.id);

  const catalog = await tools(g, client);
  call.tool = catalog?.get(name);
  const list = catalog ? g.catalog.toolList() : null;
  const policy = list ? await g.ctx.policy.get(list) : g.ctx.policy.last();
  if (policy) noticeHidden(g, policy.hiddenKey);
  // Cancelled while the catalog or the policy was fetched: never staged, never sent (as on the relay).
  if (ctx.mcpReq.signal.aborted) return drop(g, call);
  const verdict = policy?.tools.get(name);
  const unknownTool = catalog !== null && !call.tool;
  const unansweredRead = !policy && call.tool?.annotations?.readOnlyHint === true;
  if (!unknownTool && !unansweredRead) {
    const refusal = policyRefusal(verdict, name);
    if (refusal) return refuse(g, call, refusal);
  }
  // The gate's own progress while it held the call: the server's, on the same token, goes on above it.
  let progressShift = 0;
  if (state?.grantId) call.grantId = state.grantId;
  else if (needsGrant(verdict)) {
    // The guards, asked with the staging once per call: a later round of it is the same call, already let through.
    const guard = state ? undefined : writeGuard(g.ctx, call, eventIdOf(call));
    const gate = await approvalGate(g, call, verdict, params, state, ctx, exchange?.declared, guard);
    if ('round' in gate) {
      // The gateway's own round: if the client never comes back, the call was never sent.
      hold(g, call, { sent: false, clientBlock: 'approval_required' }, Date.now());
      return gate.round;
    }
    if ('refusal' in gate) return refuse(g, call, gate.refusal);
    if ('dropped' in gate) return drop(g, call, gate.grantId);
    call.grantId = gate.grantId;
    progressShift = gate.progressShift;
  }
  // A trusted read: the guards' rows for reads, counted in this process (lib/guards/read-guard.ts), once per call.
  call.read = !unknownTool && (verdict?.readOnly === true || unansweredRead);
  if (call.read && !state) {
    const refusal = guardRead(
      g.ctx,
      {
        requestRef: call.meta.requestRef,
        principal: g.ctx.principal,
        server: g.ctx.server,
        toolName: name,
        digest: call.digest,
      },
      verdict?.budgets ?? DEFAULT_BUDGETS,
    );
    if (refusal) return refuse(g, call, refusal);
  }

  const startedAt = Date.now();
  const options = relayOptions(ctx, raw, exchange, progressShift);
  const up = upstreamParams(client, raw, state, ctx, exchange?.declared);
  if (client.getProtocolEra() === 'legacy') {
    // A 2025 server may ask the client something mid-call: the call is held open for that.
    const held = g.held.start(credentialKey(exchange?.authorization ?? null), call);
    held.run(
      forward(client, 'tools/call', up, {
        ...options,
        signal: held.signal,
        // The server's progress goes to whichever request of the client is waiting at the time.
        ...(options.onprogress ? { onprogress: held.relayProgress } : {}),
        headers: { ...options.headers, [HELD_HEADER]: held.id },
      }),
    );
    return follow(g, client, call, held, ctx, options, exchange, startedAt);
  }
  let result: Record<string, unknown>;
  try {
    result = await forward(client, 'tools/call', up, options);
  } catch (error) {
    return failed(g, call, error, ctx, startedAt);
  }
  // A round of the call, not its outcome: the call is recorded once it has one, or as this round
  // if its client never comes back.
  if (result.resultType === 'input_required') {
    hold(g, call, { sent: true, resultType: 'input_required' }, startedAt, call.grantId);
    return wrapRound(g, result, { ...chain(call), grantId: call.grantId }, ctx);
  }
  return answered(g, client, call, result, startedAt);
}

/**
 * A retry of a round that mirrored a 2025 server's requests: the call held for it is found by the
 * state (only in this process, only for the same credential, only for the last round, only once),
 * its answers go to the server, and the retry waits for what the call does next.
 */
async function resume(
  g: ModernGateway,
  client: Client,
  call: Call,
  state: RoundState,
  ctx: ServerContext,
  raw: Record<string, unknown> | undefined,
  exchange: ModernExchange | undefined,
): Promise<Record<string, unknown>> {
  const held = g.held.get(state.held ?? '') as HeldCall<Call> | undefined;
  if (!held || held.owner !== credentialKey(exchange?.authorization ?? null)) throw invalidState();
  if (!held.resume(state.round, ctx.mcpReq.inputResponses as Record<string, unknown> | undefined)) throw invalidState();
  g.open.take(call.id);
  // What the first request learnt of the call (its tool, whether a read, its grant) makes its record.
  call.tool = held.call.tool;
  call.read = held.call.read;
  call.grantId = held.call.grantId;
  return follow(g, client, call, held, ctx, relayOptions(ctx, raw, exchange), exchange, Date.now());
}

/** What a request of a held call answers: its result, its failure, or the server's requests as a round. */
async function follow(
  g: ModernGateway,
  client: Client,
  call: Call,
  held: HeldCall<Call>,
  ctx: ServerContext,
  options: RequestOptions,
  exchange: ModernExchange | undefined,
  startedAt: number,
): Promise<Record<string, unknown>> {
  const next = await held.next(ctx, options.onprogress, exchange?.declared);
  if ('asks' in next) {
    // Recorded as this round if its client never comes back, and then cancelled upstream.
    hold(g, call, { sent: true, resultType: 'input_required' }, startedAt, call.grantId, {
      afterMs: g.ctx.heldCallMs ?? HOLD_MS,
      posted: () => held.cancel(),
    });
    const requestState = await g.codec.mint(
      { ...chain(call), grantId: call.grantId, held: held.id, round: next.round },
      ctx,
    );
    return inputRequired({ inputRequests: next.asks, requestState }) as unknown as Record<string, unknown>;
  }
  // The client's request is gone, and with it the call (cancelled upstream): not answered.
  if ('cancelled' in next) {
    record(g, call, { sent: true, clientError: 'cancelled' }, startedAt, call.grantId);
    return {};
  }
  if ('failed' in next) return failed(g, call, next.failed, ctx, startedAt);
  return answered(g, client, call, next.done, startedAt);
}

/** The call failed upstream (or was cancelled): recorded, and the client gets the error. */
function failed(g: ModernGateway, call: Call, error: unknown, ctx: ServerContext, startedAt: number): never {
  const observed = ctx.mcpReq.signal.aborted
    ? ({ sent: true, clientError: 'cancelled' } as Observed)
    : observedError(error);
  record(g, call, observed, startedAt, call.grantId);
  if (error instanceof ProtocolError) throw error;
  throw new ProtocolError(-32603, 'The gateway could not reach the MCP server; the call may not have been sent.');
}

/** The server's final answer: recorded, and returned with the record's names. */
function answered(
  g: ModernGateway,
  client: Client,
  call: Call,
  result: Record<string, unknown>,
  startedAt: number,
): Record<string, unknown> {
  const observed = fromResult(result as CallToolResult, call.tool, null).observed;
  // A 2026-07-28 server's final answer is `complete` (the field may be left out: that is its
  // default); a 2025 server's answer has no such field, and its record none either.
  if (client.getProtocolEra() === 'modern') observed.resultType = 'complete';
  const eventId = record(g, call, observed, startedAt, call.grantId);
  return withMeta(result, call.meta.requestRef, eventId);
}

/** What a round's requestState carries of the call (round-state.ts). */
function chain(call: Call): Omit<RoundState, 'up' | 'approvalId' | 'grantId'> {
  return { tool: call.name, digest: call.digest(), ref: call.meta.requestRef, call: call.id, at: call.at, n: call.n };
}

/** The catalog, listed by the gateway itself when no complete list has passed yet. */
async function tools(g: ModernGateway, client: Client): Promise<Map<string, Tool> | null> {
  if (g.catalog.loaded) return g.catalog.tools;
  const found: Tool[] = [];
  let cursor: string | undefined;
  try {
    do {
      const page = await forward(client, 'tools/list', cursor ? { cursor } : undefined, { timeout: 10_000 });
      if (Array.isArray(page.tools)) found.push(...(page.tools as Tool[]));
      cursor = typeof page.nextCursor === 'string' ? page.nextCursor : undefined;
    } while (cursor);
  } catch {
    return g.catalog.tools.size ? g.catalog.tools : null;
  }
  g.catalog.replace(found, true);
  return g.catalog.tools;
}

/**
 * The call's one record, made after the current I/O: dated at its first request when it took
 * rounds (`startedAt`, when this request went to the server, otherwise), lasting until now.
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
  const durationMs = Math.max(0, Date.now() - from);
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

const eventIdOf = (call: Call) => `evt_${call.id}.${call.n}`;

function record(
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
function hold(
  g: ModernGateway,
  call: Call,
  observed: Observed,
  startedAt: number,
  grantId?: string,
  options?: { afterMs?: number; posted?: () => void },
): void {
  g.open.hold(call.id, outcome(call, g, observed, startedAt, grantId), options);
}

const invalidState = () =>
  new ProtocolError(-32602, 'Invalid or expired requestState', { reason: 'invalid_request_state' });

/**
 * A call cancelled before it was forwarded: recorded never sent, naming a grant redeemed in that
 * instant (spent, never used), and not answered: the client's request is gone.
 */
function drop(g: ModernGateway, call: Call, grantId?: string): Record<string, unknown> {
  record(g, call, { sent: false, clientError: 'cancelled' }, Date.now(), grantId);
  return {};
}

function refuse(g: ModernGateway, call: Call, { observed, category, text, recordedAs, ...detail }: Refusal) {
  const eventId = recordedAs ?? record(g, call, observed, Date.now(), undefined, detail.recordId);
  return withMeta({ ...gatewayError(category, text, detail) }, call.meta.requestRef, eventId);
}

function withMeta(result: Record<string, unknown>, requestRef: string, eventId: string): Record<string, unknown> {
  const meta = isRecord(result._meta) ? result._meta : {};
  return { ...result, _meta: { ...meta, 'countersign/requestRef': requestRef, 'countersign/eventId': eventId } };
}

/**
 * What the call's failure says, for the record. The server's JSON-RPC error (SDK v2's
 * ProtocolError: only ever the other side's answer) keeps its code as sent, 2026-07-28's
 * -32020/-32021/-32022 included; the rest is read by lib/mcp's observation, which knows SDK v1's
 * error classes (SDK v2's say the same things).
 */
export function observedError(error: unknown): Observed {
  if (error instanceof ProtocolError) return { sent: true, jsonRpcErrorCode: error.code };
  return fromError(asV1Error(error), newTrace(), 'tools/call');
}

function asV1Error(error: unknown): unknown {
  if (error instanceof SdkHttpError) return new StreamableHTTPError(error.data?.status, '');
  if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) return new McpError(-32001, '');
  if (error instanceof SdkError && error.code === SdkErrorCode.ConnectionClosed) return new McpError(-32000, '');
  return error;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
