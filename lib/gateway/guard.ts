// The guards through the gateway: before a call of a tool not trusted as read-only is staged, the
// console is asked (lib/mcp/guard.ts); a trusted read is decided in the process (the read guards,
// lib/guards/read-guard.ts). A refusal is the call's answer, a tool error naming the category and
// the earlier record. The console unreachable: a write fails closed, as without a policy.
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { GuardBudgets } from '../guards/budgets';
import { guardText } from '../guards/decide';
import type { ReadCall } from '../guards/read-guard';
import { askGuards } from '../mcp/guard';
import type { Refusal } from './approval-gate';
import type { Digest } from './call';
import type { GatewayContext } from './context';
import { gatewayRecord, type CallMeta } from './record';

/** The guards' refusal of this write, or null when it may go on to be staged. */
export async function guardWrite(
  ctx: GatewayContext,
  call: { name: string; tool: Tool | undefined; meta: CallMeta; digest: Digest },
  eventId: string,
  signal?: AbortSignal,
): Promise<Refusal | null> {
  const answer = await askGuards(
    ctx.endpoint,
    ctx.reporter,
    {
      eventId,
      requestRef: call.meta.requestRef,
      organization: ctx.organization,
      principal: ctx.principal,
      agent: ctx.agent,
      server: ctx.server,
      tool: { name: call.name, annotations: gatewayRecord.annotations(call.tool) },
      argsDigest: call.digest(),
      idempotencyKey: call.meta.idempotencyKey,
      summary: call.meta.summary,
    },
    signal,
  );
  if (!answer) {
    ctx.log(`guards: no answer from Countersign for ${call.name}; not sent`);
    return {
      observed: { sent: false, clientBlock: 'approval_required' },
      category: 'unavailable',
      text: 'Countersign cannot be reached to check this write, so it was not sent: nothing was done. Try again later.',
    };
  }
  if (answer.decision !== 'refuse') return null;
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

/** The refusal of a trusted read by the process's read guards, or null when it may be forwarded. */
export function guardRead(ctx: GatewayContext, call: ReadCall, budgets: GuardBudgets): Refusal | null {
  const d = ctx.reads.decide(call, budgets);
  if (d.decision !== 'refuse') return null;
  return {
    observed: { sent: false, clientBlock: d.category },
    category: d.category,
    retry: d.retry,
    text: guardText(d, call.toolName),
    retryAfterMs: d.retryAfterMs,
  };
}
