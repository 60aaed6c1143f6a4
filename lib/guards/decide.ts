// The guards at the point of execution (docs/design.md "Guards at the point of execution"): whether
// a call may go to its server, decided from the records the console holds before it. Pure: the
// console decides with it (lib/server/guards/); its table test is lib/guards/decide.test.ts.
//
// The rows, first match wins (same principal, server and tool):
//   1. outcome_unknown: a write whose earlier attempt with the same digest ended `unknown`, that
//      nothing resolved, unless this call carries that attempt's idempotency key.
//   2. already_done: a write whose earlier attempt with the same digest, in the same request
//      reference, completed `ok`, or ended unknown and a state check said `happened`.
//   3. idempotency_key_reused: a write under an idempotency key an earlier attempt used with
//      another digest.
//   4. not_retryable: the same call (digest) whose latest attempt that reached the server was
//      refused with retry `no`, `after_correction` or `after_approval`; its retry is repeated.
//   5. retry_too_soon: the same call after failed attempts, sooner than the bounded backoff allows
//      since the last of them.
//   6. budget_exhausted: the tool's failed attempts, or the server's calls, in the request
//      reference have reached their budget (with a budget of 5, the 6th is refused).
//   7. hold: a write in a request reference where a permission was refused: approval first.
// Rows 1, 2, 3 and 7 protect writes only; 4, 5 and 6 apply to reads too.
//
// Decisions made here:
// - A guard's own refusal (never_sent with a guard category) is no attempt: it reached nothing. It
//   is no failed attempt, no call for the budgets, and no refusal for row 4 (a budget refusal in
//   one request must not make the same call non-retryable in the next).
// - A local block (approval_required, denied_by_policy, no_credentials) is no refusal for row 4:
//   policy decides it afresh at every call, and an approval obtained must let the call through.
//   It is a call for the call budget, and (denied_by_policy) a permission refusal for row 7.
// - Row 4 reads the latest attempt that reached the server: a later attempt that went through
//   (after a grant, after a fix elsewhere) lifts it. A protocol error (a malformed message, a
//   header that disagrees with the body, an unsupported version) is about the message, not the
//   call: the same tool and arguments in a corrected message may succeed, and tool and digest
//   cannot tell the two apart, so it neither makes the call non-retryable nor asks for a backoff
//   (it still counts against the budget of failed attempts).
// - Row 2 is per operation: a call that carries an idempotency key other than the completed
//   attempt's is another operation (the same write made twice on purpose); without a key, the
//   completed write is the one repeated.
// - Rows 1, 3, 4 and 5 look across request references, as the table says; 2, 6 and 7 within one.
// - The budgets count records of the request reference for the server (calls) and its tool
//   (failed attempts), whoever the principal; the records of one MCP task are one attempt.
// - Time is the console's: receipt times (receivedAt) and `now` come from its clock, never the
//   caller's occurredAt.
import { backoffMs, type GuardBudgets } from './budgets';
import { isGuardCategory, type Category, type Delivery, type GuardCategory, type Retry } from '../outcomes/schemas';

/** One earlier record, as the guards read it. */
export type GuardRecord = {
  id: string;
  requestRef: string;
  principal: string;
  server: string;
  toolName: string;
  argsDigest: string | null;
  idempotencyKey: string | null;
  /** The MCP task it belongs to: a task's records are one attempt. */
  taskId: string | null;
  delivery: Delivery;
  category: Category;
  retry: Retry;
  readOnly: boolean;
  resolutionBy: 'record' | 'state_check' | null;
  resolutionVerdict: 'happened' | 'did_not_happen' | null;
  /** When the console received it (its clock). */
  receivedAt: Date;
  /** Receipt order, for records received in the same millisecond. */
  receivedSeq: number;
};

/** The call about to be made. */
export type GuardCall = {
  requestRef: string;
  principal: string;
  server: string;
  toolName: string;
  argsDigest: string;
  idempotencyKey: string | null;
  /** Trusted read-only (readOnlyHint from a trusted server), as the console decides it. */
  readOnly: boolean;
};

export type GuardDecision =
  | { decision: 'allow' }
  | { decision: 'hold'; recordId: string }
  | { decision: 'refuse'; category: GuardCategory; retry: Retry; recordId?: string; retryAfterMs?: number };

/** Refusals after which the same call cannot succeed unchanged (row 4). */
const NOT_RETRYABLE: readonly Retry[] = ['no', 'after_correction', 'after_approval'];
/** Refused permission (row 7): unauthenticated, forbidden, denied, denied by policy. */
const PERMISSION: readonly Category[] = ['unauthenticated', 'forbidden', 'denied', 'denied_by_policy'];

export const isGuardRefusal = (r: Pick<GuardRecord, 'delivery' | 'category'>) =>
  r.delivery === 'never_sent' && isGuardCategory(r.category);

const isFailure = (r: GuardRecord) => r.delivery === 'rejected' || r.delivery === 'unknown';
/** A protocol error is about the message (its framing, headers, version), not the call it carries. */
const aboutTheMessage = (r: GuardRecord) => r.category === 'protocol_error';
const byReceipt = (a: GuardRecord, b: GuardRecord) =>
  a.receivedAt.getTime() - b.receivedAt.getTime() || a.receivedSeq - b.receivedSeq;
const last = <T>(xs: T[]): T | undefined => xs[xs.length - 1];
/** How many attempts: the records of one task count once. */
const attempts = (rs: GuardRecord[]) => new Set(rs.map((r) => (r.taskId ? `task:${r.taskId}` : r.id))).size;

/**
 * `callsInRequest`: the calls of the server in the request reference, for a caller that counts
 * them instead of keeping every record (the gateway's read guards); otherwise counted in `history`.
 */
export function decideGuard(
  history: readonly GuardRecord[],
  call: GuardCall,
  budgets: GuardBudgets,
  now: Date,
  callsInRequest?: number,
): GuardDecision {
  const earlier = history.filter((r) => !isGuardRefusal(r)).sort(byReceipt);
  const sameTool = earlier.filter(
    (r) => r.principal === call.principal && r.server === call.server && r.toolName === call.toolName,
  );
  const sameCall = sameTool.filter((r) => r.argsDigest === call.argsDigest);
  const sameRef = earlier.filter((r) => r.requestRef === call.requestRef);
  const refuse = (category: GuardCategory, retry: Retry, recordId?: string, retryAfterMs?: number): GuardDecision => ({
    decision: 'refuse',
    category,
    retry,
    ...(recordId ? { recordId } : {}),
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  });

  if (!call.readOnly) {
    // 1. An unresolved unknown; only its own idempotency key may replay it.
    const open = last(
      sameCall.filter(
        (r) =>
          r.delivery === 'unknown' &&
          r.resolutionVerdict === null &&
          !(call.idempotencyKey !== null && r.idempotencyKey === call.idempotencyKey),
      ),
    );
    if (open) return refuse('outcome_unknown', 'after_state_check', open.id);

    // 2. Already done in this request: by the same operation (a call with a key of its own is
    // another operation, the way an agent makes the same write twice on purpose).
    const done = last(
      sameCall.filter(
        (r) =>
          r.requestRef === call.requestRef &&
          (call.idempotencyKey === null || r.idempotencyKey === call.idempotencyKey) &&
          ((r.delivery === 'completed' && r.category === 'ok') ||
            (r.delivery === 'unknown' && r.resolutionBy === 'state_check' && r.resolutionVerdict === 'happened')),
      ),
    );
    if (done) return refuse('already_done', 'no', done.id);

    // 3. The key names another operation. A record without a digest matches nothing.
    if (call.idempotencyKey !== null) {
      const clash = last(
        sameTool.filter(
          (r) => r.idempotencyKey === call.idempotencyKey && r.argsDigest !== null && r.argsDigest !== call.argsDigest,
        ),
      );
      if (clash) return refuse('idempotency_key_reused', 'after_correction', clash.id);
    }
  }

  // 4. The same call's latest answer from the server said a retry cannot change it.
  const sent = sameCall.filter((r) => r.delivery !== 'never_sent');
  const latest = last(sent);
  if (latest && latest.delivery === 'rejected' && !aboutTheMessage(latest) && NOT_RETRYABLE.includes(latest.retry)) {
    return refuse('not_retryable', latest.retry, latest.id);
  }

  // 5. The bounded backoff since the last of the failures in a row (a completed attempt ends a
  // row); a corrected message may follow a protocol error at once.
  let failures = 0;
  for (let i = sent.length - 1; i >= 0 && isFailure(sent[i]) && !aboutTheMessage(sent[i]); i--) failures++;
  if (failures > 0) {
    const wait = backoffMs(failures, budgets.backoffBaseMs);
    const elapsed = now.getTime() - latest!.receivedAt.getTime();
    if (elapsed < wait) return refuse('retry_too_soon', 'backoff', latest!.id, wait - elapsed);
  }

  // 6. Budgets of the request reference.
  const failed = sameRef.filter((r) => r.server === call.server && r.toolName === call.toolName && isFailure(r));
  if (attempts(failed) >= budgets.failedAttempts) return refuse('budget_exhausted', 'no', last(failed)!.id);
  const calls = sameRef.filter((r) => r.server === call.server);
  if ((callsInRequest ?? (calls.length ? attempts(calls) : 0)) >= budgets.calls)
    return refuse('budget_exhausted', 'no', last(calls)?.id);

  // 7. A write after a permission refusal in this request waits for a person: the first refusal is named.
  if (!call.readOnly) {
    const refused = sameRef.find((r) => r.delivery !== 'completed' && PERMISSION.includes(r.category));
    if (refused) return { decision: 'hold', recordId: refused.id };
  }

  return { decision: 'allow' };
}

/** One sentence for the agent: what was not done, and what to do. */
export function guardText(d: Exclude<GuardDecision, { decision: 'allow' }>, toolName: string): string {
  const call = `The call to ${toolName}`;
  if (d.decision === 'hold') {
    return `${call} was not sent: a permission was refused earlier in this request (record ${d.recordId}), so it needs an approval first; ask for it, never route around it.`;
  }
  const earlier = d.recordId ? ` (record ${d.recordId})` : '';
  switch (d.category) {
    case 'outcome_unknown':
      return `${call} was not sent: an earlier attempt with the same arguments${earlier} may have taken effect and nobody has checked; check its state first, and replay only with that attempt's idempotency key.`;
    case 'already_done':
      return `${call} was not sent: the same call already took effect in this request${earlier}; do not call it again.`;
    case 'idempotency_key_reused':
      return `${call} was not sent: its idempotency key was already used with other arguments${earlier}; use a new key for new arguments.`;
    case 'not_retryable':
      return `${call} was not sent: the same call was refused before${earlier} and an unchanged retry cannot succeed; ${
        d.retry === 'after_correction'
          ? 'correct the input first'
          : d.retry === 'after_approval'
            ? 'obtain approval first'
            : 'stop'
      }.`;
    case 'retry_too_soon':
      return `${call} was not sent: it came too soon after the last failure${earlier}; wait ${Math.ceil((d.retryAfterMs ?? 0) / 1000)} s, then retry.`;
    case 'budget_exhausted':
      return `${call} was not sent: this request has used up its budget of attempts${earlier}; stop, a person must look at it first.`;
  }
}
