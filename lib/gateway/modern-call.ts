// `tools/call` from a 2026-07-28 client (modern-server.ts): the same policy, approval gate,
// observation and record as a 2025 session's (call.ts), on SDK v2's server and client. A retry of
// an `input_required` round carries the gateway's own requestState (round-state.ts), verified by
// the SDK before this runs: it must name this call's tool and arguments, and a grant redeemed in
// an earlier round of the same call is not asked for again.
//
// One record per call, however many rounds it takes (modern-record.ts). In front of a 2025
// server, the call is held open upstream across its rounds (held-calls.ts): the server's own
// requests mid-call become rounds, and a retry of one resumes the held call.
import { randomUUID } from 'node:crypto';
import { ProtocolError, type Client, type RequestOptions, type Tool } from '@modelcontextprotocol/client';
import { inputRequired, type ServerContext } from '@modelcontextprotocol/server';
import { argsDigest } from '../mcp/digest';
import { needsGrant, policyRefusal } from './approval-gate';
import { approvalGate } from './modern-approval';
import { callMeta } from './call-meta';
import { credentialKey, forward, HELD_HEADER } from './upstream-client';
import { HOLD_MS, type HeldCall } from './held-calls';
import { guardRead, writeGuard } from './guard';
import { DEFAULT_BUDGETS } from '../guards/budgets';
import type { ModernExchange } from './modern-exchange';
import { answered, drop, eventIdOf, failed, hold, observedError, record, refuse, type Call } from './modern-record';
import { noticeHidden, relayOptions, sent, upstreamParams, wrapRound, type ModernGateway } from './modern-server';
import type { RoundState } from './round-state';

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
  // Cancelled while the catalog or the policy was fetched: never staged, never sent.
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
      // Ended by its server while its client was away: recorded as the server's outcome, not the round.
      posted: () => {
        held.cancel();
        const ended = held.outcome;
        call.endedAt = held.endedAt;
        if (ended && 'done' in ended) answered(g, client, call, ended.done, startedAt);
        else if (ended) record(g, call, observedError(ended.failed), startedAt, call.grantId);
        return ended !== undefined;
      },
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

const invalidState = () =>
  new ProtocolError(-32602, 'Invalid or expired requestState', { reason: 'invalid_request_state' });

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
