// The guards through the gateway: a call of a tool not trusted as read-only asks the console in the
// request that stages it (lib/mcp/guard.ts, approval-gate.ts); a trusted read is decided in the
// process (the read guards, lib/guards/read-guard.ts). A refusal is the call's answer, a tool error
// naming the category and the earlier record. The console unreachable: a write fails closed, as
// any write that cannot be staged.
import type { GuardBudgets } from '../guards/budgets';
import { guardText } from '../guards/decide';
import type { ReadCall } from '../guards/read-guard';
import { guardOf, type GuardRefusal, type StagingGuard } from '../mcp/guard';
import type { Refusal } from './approval-gate';
import type { GatewayContext } from './context';
import type { CallMeta, Digest } from './record';

/** The guards' refusal of a write, as the call's answer: already recorded by the console. */
export function guardRefusal(answer: GuardRefusal): Refusal {
  return {
    observed: { sent: false, clientBlock: answer.category },
    category: answer.category,
    retry: answer.retry,
    text: answer.text,
    recordId: answer.recordId,
    retryAfterMs: answer.retryAfterMs,
    recordedAs: answer.record.eventId,
  };
}

/** The `guard` of a write's staging body (lib/mcp/guard.ts): asked in the request that stages it. */
export function writeGuard(
  ctx: GatewayContext,
  call: { name: string; meta: CallMeta; digest: Digest },
  eventId: string,
): StagingGuard {
  return guardOf(
    ctx.reporter,
    {
      organization: ctx.organization,
      requestRef: call.meta.requestRef,
      principal: ctx.principal,
      server: ctx.server,
      tool: { name: call.name },
      argsDigest: call.digest(),
      idempotencyKey: call.meta.idempotencyKey,
    },
    eventId,
  );
}

/** The refusal of a trusted read by the process's read guards, or null when it may be forwarded. */
export function guardRead(ctx: GatewayContext, call: ReadCall, budgets: GuardBudgets): Refusal | null {
  const d = ctx.reads.decide(call, budgets);
  if (d.decision !== 'refuse') return null;
  // The read guards know records by event id: the console's id once it has answered for it.
  const recordId = d.recordId === undefined ? undefined : ctx.reporter.idOf(d.recordId);
  return {
    observed: { sent: false, clientBlock: d.category },
    category: d.category,
    retry: d.retry,
    text: guardText({ ...d, recordId }, call.toolName),
    recordId,
    retryAfterMs: d.retryAfterMs,
  };
}
