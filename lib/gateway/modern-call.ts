// `tools/call` from a 2026-07-28 client (modern-server.ts): the same policy, approval gate,
// observation and record as a 2025 session's (call.ts), on SDK v2's server and client. A retry of
// an `input_required` round carries the gateway's own requestState (round-state.ts), verified by
// the SDK before this runs: it must name this call's tool and arguments, and a grant redeemed in
// an earlier round of the same call is not asked for again.
//
// One record per call, however many rounds it takes (modern-record.ts), its rounds noted on the
// call and carried by their state (round-state.ts `addRound`). In front of a 2025 server, the call
// is held open upstream across its rounds (held-calls.ts): the server's own requests mid-call
// become rounds, and a retry of one resumes the held call.
//
// The lean path (modern-lean.ts) judges, guards and records a plain call with the same functions
// (newCall, judge, trustedRead, modern-record.ts), and hands back here what it does not answer.
import { randomUUID } from 'node:crypto';
import { ProtocolError, type Client, type RequestOptions, type Tool } from '@modelcontextprotocol/client';
import { inputRequired, type ServerContext } from '@modelcontextprotocol/server';
import { argsDigest } from '../mcp/digest';
import { needsGrant, policyRefusal, type Refusal } from './approval-gate';
import { approvalGate } from './modern-approval';
import { callMeta } from './call-meta';
import { credentialKey, forward, HELD_HEADER } from './upstream-client';
import { HOLD_MS, type HeldCall } from './held-calls';
import { guardRead, writeGuard } from './guard';
import { DEFAULT_BUDGETS } from '../guards/budgets';
import type { ModernExchange } from './modern-exchange';
import type { ToolPolicy } from './policy';
import { answered, drop, eventIdOf, failed, hold, observedError, record, refuse, type Call } from './modern-record';
import { noticeHidden, relayOptions, sent, upstreamParams, wrapRound, type ModernGateway } from './modern-server';
import { addRound, packRounds, serverRound, unpackRounds, type RoundState } from './round-state';

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
  // Judged and sent by the lean path (modern-lean.ts), whose answer from the server was not one
  // it serves: the same request goes on here as if sent from here, the server's answer replayed.
  const handed = exchange?.handed;
  if (handed) {
    const up = upstreamParams(client, raw, state, ctx, exchange.declared);
    return settle(
      g,
      client,
      handed.call,
      forward(client, 'tools/call', up, relayOptions(ctx, raw, exchange)),
      ctx,
      handed.startedAt,
    );
  }
  const call = newCall(params.name, params, state);
  if (state && (state.tool !== call.name || state.digest !== call.digest() || !unpackRounds(state.rounds)))
    throw invalidState();
  // A round that mirrored a 2025 server's requests: its call is still running upstream, held for this retry.
  if (state?.held !== undefined) return resume(g, client, call, state, ctx, raw, exchange);
  // The client came back: this request records the call (or holds it again at its next round).
  g.open.take(call.id);

  const judged = await judge(g, call, await tools(g, client));
  // Cancelled while the catalog or the policy was fetched: never staged, never sent.
  if (ctx.mcpReq.signal.aborted) return drop(g, call);
  if (judged.refusal) return refuse(g, call, judged.refusal);
  // The gate's own progress while it held the call: the server's, on the same token, goes on above it,
  // in this request and in the retries of its later rounds (the state carries the shift).
  let progressShift = state?.shift ?? 0;
  if (state?.grantId) call.grantId = state.grantId;
  else if (judged.gated) {
    // The guards, asked with the staging once per call: a later round of it is the same call, already let through.
    const guard = state ? undefined : writeGuard(g.ctx, call, eventIdOf(call));
    const gate = await approvalGate(g, call, judged.gated, params, state, ctx, exchange?.declared, guard);
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
  // A later round of a read is the same call, already counted.
  const readRefusal = trustedRead(g, call, judged, state !== undefined);
  if (readRefusal) return refuse(g, call, readRefusal);

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
    return follow(g, client, call, held, ctx, options, exchange, startedAt, progressShift);
  }
  return settle(g, client, call, forward(client, 'tools/call', up, options), ctx, startedAt, progressShift);
}

/** What the server answered the call (sent at `startedAt`): its failure, a round, or its result. */
async function settle(
  g: ModernGateway,
  client: Client,
  call: Call,
  sending: Promise<Record<string, unknown>>,
  ctx: ServerContext,
  startedAt: number,
  shift = 0,
): Promise<Record<string, unknown>> {
  let result: Record<string, unknown>;
  try {
    result = await sending;
  } catch (error) {
    return failed(g, call, error, ctx, startedAt);
  }
  // A round of the call, not its outcome: the call is recorded once it has one, or as this round
  // if its client never comes back.
  if (result.resultType === 'input_required') {
    call.rounds = addRound(call.rounds, serverRound(result.inputRequests, call.at));
    hold(g, call, { sent: true, resultType: 'input_required' }, startedAt, call.grantId);
    return wrapRound(g, result, { ...chain(call, shift), grantId: call.grantId }, ctx);
  }
  return answered(g, call, result, startedAt, client);
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
  const shift = state.shift ?? 0;
  return follow(g, client, call, held, ctx, relayOptions(ctx, raw, exchange, shift), exchange, Date.now(), shift);
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
  shift: number,
): Promise<Record<string, unknown>> {
  const next = await held.next(ctx, options.onprogress, exchange?.declared);
  if ('asks' in next) {
    call.rounds = addRound(call.rounds, serverRound(next.asks, call.at));
    // Recorded as this round if its client never comes back, and then cancelled upstream.
    hold(g, call, { sent: true, resultType: 'input_required' }, startedAt, call.grantId, {
      afterMs: g.ctx.heldCallMs ?? HOLD_MS,
      // Ended by its server while its client was away: recorded as the server's outcome, not the round.
      posted: () => {
        held.cancel();
        const ended = held.outcome;
        call.endedAt = held.endedAt;
        if (ended && 'done' in ended) answered(g, call, ended.done, startedAt, client);
        else if (ended) record(g, call, observedError(ended.failed), startedAt, call.grantId);
        return ended !== undefined;
      },
    });
    const requestState = await g.codec.mint(
      { ...chain(call, shift), grantId: call.grantId, held: held.id, round: next.round },
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
  return answered(g, call, next.done, startedAt, client);
}

/** A call as its first request (or the retry carrying `state`) names it; not yet judged. */
export function newCall(name: string, params: Record<string, unknown>, state: RoundState | undefined): Call {
  const args = isRecord(params.arguments) ? params.arguments : {};
  let digest: string | undefined;
  return {
    name,
    tool: undefined,
    // 2026-07-28 has no sessions: a call that names no reference gets one of its own, kept across its rounds.
    meta: callMeta(isRecord(params._meta) ? params._meta : undefined, state?.ref ?? `gw-${randomUUID()}`, name),
    digest: () => (digest ??= argsDigest(args)),
    id: state?.call ?? randomUUID(),
    at: state?.at ?? Date.now(),
    n: (state?.n ?? 0) + 1,
    // Checked before the call is judged: a state whose rounds are not the gateway's is refused.
    rounds: unpackRounds(state?.rounds) ?? [],
  };
}

export interface Judged {
  verdict: ToolPolicy | undefined;
  /** Policy refuses the call outright (blocked, or hidden). */
  refusal?: Refusal;
  /** The verdict, when the call runs only with a reviewer's grant (approval-gate.ts). */
  gated: ToolPolicy | undefined;
  unknownTool: boolean;
  /** No policy answer, and the tool says it only reads: let through as a read. */
  unansweredRead: boolean;
}

/**
 * What policy says of the call, from the catalog (null: none could be listed) and the policy for
 * it: nothing is recorded, staged or sent. The call's tool is noted on it.
 */
export async function judge(g: ModernGateway, call: Call, catalog: Map<string, Tool> | null): Promise<Judged> {
  call.tool = catalog?.get(call.name);
  const list = catalog ? g.catalog.toolList() : null;
  const policy = list ? await g.ctx.policy.get(list) : g.ctx.policy.last();
  if (policy) noticeHidden(g, policy.hiddenKey);
  const verdict = policy?.tools.get(call.name);
  const unknownTool = catalog !== null && !call.tool;
  const unansweredRead = !policy && call.tool?.annotations?.readOnlyHint === true;
  const refusal = unknownTool || unansweredRead ? null : policyRefusal(verdict, call.name);
  const gated = needsGrant(verdict) ? verdict : undefined;
  return { verdict, ...(refusal ? { refusal } : {}), gated, unknownTool, unansweredRead };
}

/**
 * A trusted read: the guards' rows for reads, counted in this process (lib/guards/read-guard.ts),
 * once per call (`counted`: a later round of it, already let through).
 */
export function trustedRead(g: ModernGateway, call: Call, judged: Judged, counted: boolean): Refusal | null {
  call.read = !judged.unknownTool && (judged.verdict?.readOnly === true || judged.unansweredRead);
  if (!call.read || counted) return null;
  return guardRead(
    g.ctx,
    {
      requestRef: call.meta.requestRef,
      principal: g.ctx.principal,
      server: g.ctx.server,
      toolName: call.name,
      digest: call.digest,
    },
    judged.verdict?.budgets ?? DEFAULT_BUDGETS,
  );
}

/** What a round's requestState carries of the call (round-state.ts). */
function chain(call: Call, shift: number): Omit<RoundState, 'up' | 'approvalId' | 'grantId'> {
  return {
    tool: call.name,
    digest: call.digest(),
    ref: call.meta.requestRef,
    call: call.id,
    at: call.at,
    n: call.n,
    ...(shift ? { shift } : {}),
    rounds: packRounds(call.rounds),
  };
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

const invalidState = () =>
  new ProtocolError(-32602, 'Invalid or expired requestState', { reason: 'invalid_request_state' });

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
