// The outcome record of one call through the gateway (API.md, "Outcome records"): no arguments,
// no result, the argument digest and the tool's annotations from tools/list.
import { randomUUID } from 'node:crypto';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Observed, Outcome } from '../outcomes/schemas';
import { annotationsOf } from '../mcp/countersign-client';
import type { GatewayContext } from './context';

export interface CallMeta {
  requestRef: string;
  idempotencyKey?: string;
  summary: string;
}

function record(
  ctx: GatewayContext,
  c: {
    name: string;
    tool: Tool | undefined;
    meta: CallMeta;
    digest: string;
    observed: Observed;
    startedAt: Date;
    durationMs: number;
    grantId?: string;
    eventId?: string;
  },
): Outcome {
  const o: Record<string, unknown> = {
    eventId: c.eventId ?? newEventId(),
    occurredAt: c.startedAt.toISOString(),
    durationMs: c.durationMs,
    requestRef: c.meta.requestRef,
    idempotencyKey: c.meta.idempotencyKey,
    attempt: 1,
    organization: ctx.organization,
    principal: ctx.principal,
    agent: ctx.agent,
    server: ctx.server,
    tool: { name: c.name.slice(0, 200), annotations: annotationsOf(c.tool) },
    grantId: c.grantId,
    argsDigest: c.digest,
    summary: c.meta.summary,
    observed: c.observed,
  };
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Outcome;
}

export const newEventId = () => `evt_${randomUUID()}`;

export const gatewayRecord = Object.assign(record, { annotations: annotationsOf });
