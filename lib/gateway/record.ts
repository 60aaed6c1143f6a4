// The outcome record of one call through the gateway (docs/api.md, "Outcome records"): no arguments,
// no result, the argument digest and the tool's annotations from tools/list.
import { randomUUID } from 'node:crypto';
import type { Tool } from '@modelcontextprotocol/server';
import type { Observed, Outcome, ToolAnnotations } from '../outcomes/schemas';
import { annotationsOf } from '../mcp/record';
import type { GatewayContext } from './context';

export interface CallMeta {
  requestRef: string;
  idempotencyKey?: string;
  summary: string;
}

/** A call's argument digest (lib/mcp/digest.ts), computed when first asked for. */
export type Digest = () => string;

// Built member by member in the record's order, optional ones only when present (one record per
// call: no intermediate entry arrays), the annotations made once per listed tool.
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
    /** The number of requests the call took (2026-07-28 rounds); 1 otherwise. */
    attempt?: number;
    /** A guard's refusal: the console's id of the earlier record it points to, when known. */
    earlierRecordId?: string;
  },
): Outcome {
  const o: Record<string, unknown> = {
    eventId: c.eventId ?? newEventId(),
    occurredAt: c.startedAt.toISOString(),
    durationMs: c.durationMs,
    requestRef: c.meta.requestRef,
  };
  if (c.meta.idempotencyKey !== undefined) o.idempotencyKey = c.meta.idempotencyKey;
  o.attempt = c.attempt ?? 1;
  o.organization = ctx.organization;
  o.principal = ctx.principal;
  if (ctx.agent !== undefined) o.agent = ctx.agent;
  o.server = ctx.server;
  o.tool = { name: c.name.length > 200 ? c.name.slice(0, 200) : c.name, annotations: annotations(c.tool) };
  if (c.grantId !== undefined) o.grantId = c.grantId;
  o.argsDigest = c.digest;
  o.summary = c.meta.summary;
  o.observed = c.observed;
  if (c.earlierRecordId !== undefined) o.earlierRecordId = c.earlierRecordId;
  return o as Outcome;
}

// Per tool object of a catalog (a new list brings new objects). Shared by the records of its
// calls, which are only ever serialized.
const made = new WeakMap<Tool, ToolAnnotations | null>();
function annotations(tool: Tool | undefined): ToolAnnotations | null {
  if (!tool) return null;
  let a = made.get(tool);
  if (a === undefined) made.set(tool, (a = annotationsOf(tool)));
  return a;
}

const newEventId = () => `evt_${randomUUID()}`;

export const gatewayRecord = Object.assign(record, { annotations });
