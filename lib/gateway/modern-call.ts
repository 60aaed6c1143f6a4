// `tools/call` from a 2026-07-28 client (modern-server.ts): the same policy, approval gate,
// observation and record as a 2025 session's (call.ts), on SDK v2's server and client. A retry of
// an `input_required` round carries the gateway's own requestState (round-state.ts), verified by
// the SDK before this runs: it must name this call's tool and arguments, and a grant redeemed in
// an earlier round of the same call is not asked for again.
import { randomUUID } from 'node:crypto';
import { ProtocolError, SdkError, SdkErrorCode, SdkHttpError, type Client } from '@modelcontextprotocol/client';
import type { ServerContext } from '@modelcontextprotocol/server';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Observed } from '../outcomes/schemas';
import { argsDigest } from '../mcp/digest';
import { fromError, fromResult } from '../mcp/observed';
import { newTrace } from '../mcp/trace';
import { needsGrant, policyRefusal, type Refusal } from './approval-gate';
import { approvalGate } from './modern-approval';
import { callMeta } from './call-meta';
import { gatewayRecord, newEventId, type CallMeta } from './record';
import { forward } from './upstream-client';
import { gatewayError } from './tool-errors';
import type { ModernExchange } from './modern-exchange';
import { relayOptions, sent, upstreamParams, wrapRound, type ModernGateway } from './modern-server';
import type { RoundState } from './round-state';

interface Call {
  name: string;
  tool: Tool | undefined;
  meta: CallMeta;
  digest: () => string;
  grantId?: string;
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
  const options = relayOptions(ctx, raw, exchange);
  const params = raw ?? {};
  // Not a call we can read (no name): the server answers it as it would without the gateway.
  if (typeof params.name !== 'string')
    return forward(client, 'tools/call', upstreamParams(client, raw, state, ctx, exchange?.declared), options);
  const name = params.name;
  const args = isRecord(params.arguments) ? params.arguments : {};
  let digest: string | undefined;
  const call: Call = {
    name,
    tool: undefined,
    // 2026-07-28 has no sessions: a call that names no reference gets one of its own, kept across its rounds.
    meta: callMeta(isRecord(params._meta) ? params._meta : undefined, state?.ref ?? `gw-${randomUUID()}`, name),
    digest: () => (digest ??= argsDigest(args)),
  };
  if (state && (state.tool !== name || state.digest !== call.digest()))
    throw new ProtocolError(-32602, 'Invalid or expired requestState', { reason: 'invalid_request_state' });

  const catalog = await tools(g, client);
  call.tool = catalog?.get(name);
  const list = catalog ? g.catalog.toolList() : null;
  const policy = list ? await g.ctx.policy.get(list) : g.ctx.policy.last();
  const verdict = policy?.tools.get(name);
  const unknownTool = catalog !== null && !call.tool;
  const unansweredRead = !policy && call.tool?.annotations?.readOnlyHint === true;
  if (!unknownTool && !unansweredRead) {
    const refusal = policyRefusal(verdict, name);
    if (refusal) return refuse(g, call, refusal);
  }
  if (state?.grantId) call.grantId = state.grantId;
  else if (needsGrant(verdict)) {
    const gate = await approvalGate(g, call, verdict, params, state, ctx, exchange?.declared);
    if ('round' in gate) return gate.round;
    if ('refusal' in gate) return refuse(g, call, gate.refusal);
    if ('dropped' in gate) {
      record(g, call, gate.dropped, new Date(), 0, gate.grantId);
      return {};
    }
    call.grantId = gate.grantId;
  }

  const startedAt = new Date();
  const t0 = performance.now();
  const elapsed = () => Math.round(performance.now() - t0);
  let result: Record<string, unknown>;
  try {
    result = await forward(client, 'tools/call', upstreamParams(client, raw, state, ctx, exchange?.declared), options);
  } catch (error) {
    const observed = ctx.mcpReq.signal.aborted
      ? ({ sent: true, clientError: 'cancelled' } as Observed)
      : fromError(asV1Error(error), newTrace(), 'tools/call');
    record(g, call, observed, startedAt, elapsed(), call.grantId);
    if (error instanceof ProtocolError) throw error;
    throw new ProtocolError(-32603, 'The gateway could not reach the MCP server; the call may not have been sent.');
  }
  // A round of the call, not its outcome: the call is recorded once it has one.
  if (result.resultType === 'input_required')
    return wrapRound(
      g,
      result,
      { tool: name, digest: call.digest(), ref: call.meta.requestRef, grantId: call.grantId },
      ctx,
    );
  const observed = fromResult(result as CallToolResult, call.tool, null).observed;
  const eventId = record(g, call, observed, startedAt, elapsed(), call.grantId);
  return withMeta(result, call.meta.requestRef, eventId);
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

function record(
  g: ModernGateway,
  call: Call,
  observed: Observed,
  startedAt: Date,
  durationMs: number,
  grantId: string | undefined,
): string {
  const eventId = newEventId();
  g.ctx.reporter.enqueueLater(() =>
    gatewayRecord(g.ctx, {
      name: call.name,
      tool: call.tool,
      meta: call.meta,
      digest: call.digest(),
      observed,
      startedAt,
      durationMs,
      grantId,
      eventId,
    }),
  );
  return eventId;
}

function refuse(g: ModernGateway, call: Call, { observed, category, text, approval }: Refusal) {
  const eventId = record(g, call, observed, new Date(), 0, undefined);
  return withMeta({ ...gatewayError(category, text, approval) }, call.meta.requestRef, eventId);
}

function withMeta(result: Record<string, unknown>, requestRef: string, eventId: string): Record<string, unknown> {
  const meta = isRecord(result._meta) ? result._meta : {};
  return { ...result, _meta: { ...meta, 'countersign/requestRef': requestRef, 'countersign/eventId': eventId } };
}

// lib/mcp's observation reads SDK v1's error classes; SDK v2's say the same things.
function asV1Error(error: unknown): unknown {
  if (error instanceof ProtocolError) return new McpError(error.code, '');
  if (error instanceof SdkHttpError) return new StreamableHTTPError(error.data?.status, '');
  if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) return new McpError(-32001, '');
  if (error instanceof SdkError && error.code === SdkErrorCode.ConnectionClosed) return new McpError(-32000, '');
  return error;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
