// The guards on trusted reads (docs/design.md "Guards at the point of execution"): the rows that
// apply to reads (not retryable, bounded backoff, budgets) decided by the same function the
// console uses (decide.ts), on this process's own reads, so a read costs no round trip: the
// gateway's (lib/gateway/modern-call.ts) and the agent SDK's (lib/mcp). Counted per
// process, as the design allows: several instances each keep their own.
// Each read's record, classified with the shared classifier once it is made (after the answer
// went out), is what the next read of its request reference is decided on.
//
// Kept small, so that a read's decision and memory do not grow with the calls a request makes:
// per request reference, the number of its calls, its failed reads (the newest RECORDS_MAX), and
// the latest success of each call that failed before.
import { classifyRecord } from '../outcomes/classify';
import { isGuardCategory, type Outcome } from '../outcomes/schemas';
import type { GuardBudgets } from './budgets';
import { decideGuard, type GuardDecision, type GuardRecord } from './decide';
import { dropOldest } from '../bounded';

/** Request references remembered, least recently used dropped first. */
const REFS_MAX = 10_000;
/** Records kept per request reference: more than any budget of failed attempts. */
const RECORDS_MAX = 1_000;

type Reads = { calls: number; records: GuardRecord[] };
export type ReadCall = {
  requestRef: string;
  principal: string;
  server: string;
  toolName: string;
  digest: () => string;
};

export class ReadGuard {
  private readonly refs = new Map<string, Reads>();
  private seq = 0;

  /**
   * `settle`: makes the records still waiting to be made, so that a read that came before the
   * last one's record was made (an in-process client, no I/O between) is decided on it.
   */
  constructor(
    private readonly settle: () => void = () => {},
    private readonly now: () => number = Date.now,
  ) {}

  /** The decision on a trusted read about to be forwarded; its digest is made only when its request has history. */
  decide(call: ReadCall, budgets: GuardBudgets): GuardDecision {
    this.settle();
    const reads = this.refs.get(call.requestRef);
    if (!reads) return { decision: 'allow' };
    const { digest, ...rest } = call;
    return decideGuard(
      reads.records,
      { ...rest, argsDigest: digest(), idempotencyKey: null, readOnly: true },
      budgets,
      new Date(this.now()),
      reads.calls,
    );
  }

  /** A trusted read's record, as made for the console: counted under its request reference. */
  note(record: Outcome): void {
    const block = record.observed.clientBlock;
    if (record.observed.sent === false && block && isGuardCategory(block)) return; // no attempt
    let reads = this.refs.get(record.requestRef);
    if (reads) this.refs.delete(record.requestRef);
    else reads = { calls: 0, records: [] };
    this.refs.set(record.requestRef, reads);
    dropOldest(this.refs, REFS_MAX);

    const c = classifyRecord(record, true);
    reads.calls++;
    const seen: GuardRecord = {
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
    };
    // A success matters only after failures of the same call (it ends their run, and lifts a
    // refusal): only the latest one of such a call is kept; the others are only counted.
    if (c.delivery === 'completed') {
      const same = (r: GuardRecord) => r.toolName === seen.toolName && r.argsDigest === seen.argsDigest;
      if (!reads.records.some((r) => same(r) && r.delivery !== 'completed')) return;
      reads.records = reads.records.filter((r) => !(same(r) && r.delivery === 'completed'));
    }
    reads.records.push(seen);
    if (reads.records.length > RECORDS_MAX) reads.records.shift();
  }
}
