// The guards on trusted reads (docs/design.md "Guards at the point of execution"): the rows that
// apply to reads (not retryable, bounded backoff, budgets) decided by the same function the
// console uses (lib/guards/decide.ts), on this gateway process's own reads, so a read costs no
// round trip. Counted per process, as the design allows: several instances each keep their own.
// Each read's record, classified with the shared classifier once it is made (after the answer
// went out), is what the next read of its request reference is decided on.
import { classifyRecord } from '../outcomes/classify';
import type { Outcome } from '../outcomes/schemas';
import type { GuardBudgets } from '../guards/budgets';
import { decideGuard, guardText, type GuardDecision, type GuardRecord } from '../guards/decide';
import type { Refusal } from './approval-gate';

const ALLOW: GuardDecision = { decision: 'allow' };

/** Request references remembered, least recently used dropped first. */
const REFS_MAX = 10_000;
/** Records remembered per request reference: more than any budget of calls needs to be counted. */
const PER_REF_MAX = 1_000;

export class ReadGuard {
  private readonly refs = new Map<string, GuardRecord[]>();
  private seq = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** The decision on a trusted read about to be forwarded; its digest is made only when its request has history. */
  decide(
    call: { requestRef: string; principal: string; server: string; toolName: string; digest: () => string },
    budgets: GuardBudgets,
  ): GuardDecision {
    const history = this.refs.get(call.requestRef);
    if (!history) return ALLOW;
    const { digest, ...rest } = call;
    return decideGuard(
      history,
      { ...rest, argsDigest: digest(), idempotencyKey: null, readOnly: true },
      budgets,
      new Date(this.now()),
    );
  }

  /** The refusal of a trusted read by the guards, or null when it may be forwarded. */
  refusal(
    call: { requestRef: string; principal: string; server: string; toolName: string; digest: () => string },
    budgets: GuardBudgets,
  ): Refusal | null {
    const d = this.decide(call, budgets);
    if (d.decision !== 'refuse') return null;
    return {
      observed: { sent: false, clientBlock: d.category },
      category: d.category,
      retry: d.retry,
      text: guardText(d, call.toolName),
      recordId: undefined,
      retryAfterMs: d.retryAfterMs,
    };
  }

  /** A trusted read's record, as made for the console: remembered under its request reference. */
  note(record: Outcome): void {
    const c = classifyRecord(record, true);
    let history = this.refs.get(record.requestRef);
    if (history) this.refs.delete(record.requestRef);
    else history = [];
    this.refs.set(record.requestRef, history);
    if (this.refs.size > REFS_MAX) this.refs.delete(this.refs.keys().next().value!);
    history.push({
      id: record.eventId,
      requestRef: record.requestRef,
      principal: record.principal,
      server: record.server,
      toolName: record.tool.name,
      argsDigest: record.argsDigest ?? null,
      idempotencyKey: record.idempotencyKey ?? null,
      taskId: record.observed.task?.id ?? null,
      delivery: c.delivery,
      category: c.category,
      retry: c.retry,
      readOnly: true,
      resolutionBy: null,
      resolutionVerdict: null,
      receivedAt: new Date(this.now()),
      receivedSeq: ++this.seq,
    });
    if (history.length > PER_REF_MAX) history.shift();
  }
}
