// The outcome record of one call made through withCountersign (countersign-client.ts): what was
// called, by whom, for which request, and what was observed; never the arguments or the result
// (their digest only).
import { randomUUID } from 'node:crypto';
import type { Tool } from '@modelcontextprotocol/client';
import { outcomeSchema, type Observed, type Outcome, type ToolAnnotations } from '../outcomes/schemas';
import type { CallOptions, CountersignOptions } from './countersign-client';
import type { Observation } from './observe';

/** The record of one call (of a provisional one too: checkCallOptions), with a new event id. */
export function callRecord(
  o: CountersignOptions,
  name: string,
  tool: Tool | null | undefined,
  digest: string,
  call: CallOptions,
  attempt: number,
  observed: Observed,
  observation: Partial<Observation> | null,
  grantId: string | undefined,
): Outcome {
  return dropUndefined({
    eventId: `evt_${randomUUID()}`,
    occurredAt: (observation?.startedAt ?? new Date()).toISOString(),
    durationMs: observation?.durationMs,
    requestRef: call.requestRef,
    idempotencyKey: call.idempotencyKey,
    attempt,
    organization: o.organization,
    principal: o.principal,
    agent: o.agent,
    server: o.server,
    serverVersion: clip(observation?.serverVersion, 100),
    protocolVersion: clip(observation?.protocolVersion, 64),
    tool: { name, annotations: annotationsOf(tool ?? undefined) },
    mcpRequestId: observation?.mcpRequestId,
    sessionId: clip(observation?.sessionId, 1024),
    grantId,
    argsDigest: digest,
    summary: call.summary,
    observed,
  }) as Outcome;
}

// The annotations the record schema knows; MCP may add more hints, which are not ours to forward.
export function annotationsOf(
  tool: { annotations?: Partial<ToolAnnotations> | null } | undefined,
): ToolAnnotations | null {
  const a = tool?.annotations;
  if (!a) return null;
  return dropUndefined({
    title: clip(a.title, 200),
    readOnlyHint: a.readOnlyHint,
    destructiveHint: a.destructiveHint,
    idempotentHint: a.idempotentHint,
    openWorldHint: a.openWorldHint,
  });
}

/** Throws a TypeError naming the fields when the caller's options make a record the schema refuses. */
export function checkCallOptions(provisional: Outcome): void {
  const parsed = outcomeSchema.safeParse(provisional);
  if (!parsed.success) {
    const fields = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new TypeError(`withCountersign: invalid call options (${fields})`);
  }
}

const clip = (s: string | null | undefined, max: number) => (s ? s.slice(0, max) : undefined);

function dropUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
