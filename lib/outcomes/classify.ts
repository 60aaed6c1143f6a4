// THE outcome classifier (docs/design.md, "Classifying an outcome"). The console and the agent-side
// integration both call this, so an outcome means the same thing everywhere. It reads codes,
// statuses and declared categories only: English messages are never parsed.
//
// Precedence when several fields are set (first match wins):
//   1. Not sent. `sent: false` with no sign of an answer (status, code, result or task):
//      never_sent. Any such sign means something did leave the caller, so it counts as sent.
//   2. A task (version 2). Once a server created a task the call was accepted, so what the
//      caller saw while polling (an HTTP status, a lost connection) says nothing about the
//      call itself. Still `working` / `input_required`: task_running / task_input_required.
//      Expired, or cancelled: task_expired / task_cancelled. Ended `completed` or `failed`:
//      the rows below for the code or result the caller reports with it, never the status
//      alone (2025-11-25 and 2026-07-28 disagree on what `failed` means); an HTTP failure
//      reported with it is no refusal (the task exists) but no trustworthy answer: no_response.
//   3. HTTP status >= 400: admission refused or failed before JSON-RPC ran.
//   4. JSON-RPC error code. It beats a result because SDKs fold protocol errors into
//      `isError` results ("MCP error -32602"): the caller reports the code and the code wins.
//      A -32602 folded into an `isError` result (both reported) is unknown for a write
//      (version 2): the SDK uses that code for its own post-handler output check too.
//   5. `resultType: "input_required"` (2026-07-28 multi round-trip): the server asks first.
//   6. Tool result: `isError` with its declared category, else output validation.
//   7. Client error (timeout, connection lost, cancelled). A received answer above is more
//      specific than a later local failure, but a client error beats silence.
//   8. Nothing else: no_response.
import { describe, nextStepFor } from './classify-wording';
import { normalizeErrorCategory, type DeclaredCategory } from './error-categories';
import type {
  Boundary,
  Category,
  Classification,
  ClientBlock,
  Delivery,
  GuardCategory,
  Observed,
  ObservedResult,
  ObservedTask,
  Outcome,
  Retry,
  ToolAnnotations,
} from './schemas';

/**
 * Stored with each classification so records can be re-derived when the rules change.
 * 1: the first table. 2: MCP tasks, `resultType: "input_required"`, -32020/-32021/-32022, and
 * the folded -32602 on a write is unknown. 3: the guards' refusals (clientBlock outcome_unknown,
 * already_done, idempotency_key_reused, not_retryable, retry_too_soon, budget_exhausted).
 */
export const CLASSIFIER_VERSION = 3;

export interface ClassifyInput {
  observed: Observed;
  annotations?: ToolAnnotations | null;
  /** Whether an admin trusts this server's annotations (`servers:trust`). */
  serverTrusted: boolean;
  /** Named in `whatHappened` when given. */
  toolName?: string | null;
}

export type Verdict = Pick<Classification, 'boundary' | 'delivery' | 'category' | 'retry'>;

export function classifyOutcome(input: ClassifyInput): Classification {
  const readOnly = isReadOnly(input.annotations, input.serverTrusted);
  const verdict = decide(input.observed, readOnly);
  return {
    ...verdict,
    readOnly,
    whatHappened: describe(verdict, readOnly, input.toolName),
    nextStep: nextStepFor(verdict, readOnly),
  };
}

/** Convenience for a whole record: takes the tool name and annotations from it. */
export function classifyRecord(record: Pick<Outcome, 'observed' | 'tool'>, serverTrusted: boolean): Classification {
  return classifyOutcome({
    observed: record.observed,
    annotations: record.tool.annotations,
    serverTrusted,
    toolName: record.tool.name,
  });
}

/** The only outcome the console may present as a success. */
export function isSuccess(c: Pick<Classification, 'delivery' | 'category'>): boolean {
  return c.delivery === 'completed' && c.category === 'ok';
}

// An untrusted server's hints are display-only; MCP's default is readOnly=false.
function isReadOnly(annotations: ToolAnnotations | null | undefined, trusted: boolean): boolean {
  return trusted && annotations?.readOnlyHint === true;
}

function decide(o: Observed, readOnly: boolean): Verdict {
  if (!wasSent(o)) return fromNeverSent(o);
  if (o.task) {
    const fromStatus = fromTaskStatus(o.task, readOnly);
    if (fromStatus) return fromStatus;
  }
  // A task that ended, reported with an HTTP failure: the call was accepted (the task exists),
  // so "refused" would be false, and no answer that came with a failure status is trusted.
  if (o.task && o.httpStatus != null && o.httpStatus >= 400) {
    return verdict('client', 'unknown', 'no_response', uncertainRetry(readOnly));
  }
  return (
    (o.task ? null : fromHttp(o.httpStatus, o.authError, readOnly)) ??
    fromJsonRpc(o.jsonRpcErrorCode, o.result, readOnly) ??
    (o.resultType === 'input_required' ? verdict('protocol', 'rejected', 'input_required', 'after_input') : null) ??
    fromResult(o.result, readOnly) ??
    fromClientError(o.clientError, readOnly) ??
    verdict('client', 'unknown', 'no_response', uncertainRetry(readOnly))
  );
}

function wasSent(o: Observed): boolean {
  return o.sent || o.httpStatus != null || o.jsonRpcErrorCode != null || o.result != null || o.task != null;
}

// The statuses that decide by themselves. `completed` and `failed` do not: the caller's
// reported code or result does (null here).
function fromTaskStatus(task: ObservedTask, readOnly: boolean): Verdict | null {
  if (task.status === 'completed' || task.status === 'failed') return null;
  // A task seen cancelled stays cancelled even if it later vanished.
  if (task.status === 'cancelled') return uncertain('tool', 'task_cancelled', readOnly);
  if (task.expired) return uncertain('tool', 'task_expired', readOnly);
  // Running: it may act at any moment, whatever the tool; the task will tell.
  const category = task.status === 'working' ? 'task_running' : 'task_input_required';
  return verdict('tool', 'unknown', category, 'after_state_check');
}

// A guard's refusal carries the retry of docs/design.md's guard table. not_retryable repeats the
// retry of the refusal it points to, which the observation does not carry: `no`, the strictest of
// the three it can be, so a record never promises more than the guard did.
export const GUARD_RETRY: Record<GuardCategory, Retry> = {
  outcome_unknown: 'after_state_check',
  already_done: 'no',
  idempotency_key_reused: 'after_correction',
  not_retryable: 'no',
  retry_too_soon: 'backoff',
  budget_exhausted: 'no',
};

const blockRetry = (block: ClientBlock): Retry =>
  block in GUARD_RETRY ? GUARD_RETRY[block as GuardCategory] : 'after_approval';

function fromNeverSent(o: Observed): Verdict {
  if (o.clientBlock) return verdict('client', 'never_sent', o.clientBlock, blockRetry(o.clientBlock));
  // Nothing left the caller, so sending again is safe; a deliberate cancel is not retried.
  if (o.clientError === 'timeout' || o.clientError === 'connection_lost') {
    return verdict('client', 'never_sent', o.clientError, 'backoff');
  }
  return verdict('client', 'never_sent', o.clientError ?? 'not_sent', 'no');
}

function fromHttp(
  status: number | null | undefined,
  authError: Observed['authError'],
  readOnly: boolean,
): Verdict | null {
  if (status == null || status < 400) return null;
  if (status === 401 || status === 403) {
    // WWW-Authenticate's error is more precise than the status some servers pick.
    const forbidden = authError ? authError === 'insufficient_scope' : status === 403;
    return forbidden
      ? verdict('admission', 'rejected', 'forbidden', 'after_approval')
      : verdict('admission', 'rejected', 'unauthenticated', 'after_reauth');
  }
  // MCP answers 404 to a request carrying a session id it no longer knows.
  if (status === 404) return verdict('admission', 'rejected', 'session_expired', 'after_reauth');
  if (status === 429) return verdict('admission', 'rejected', 'rate_limited', 'backoff');
  if (status === 503) return verdict('admission', 'rejected', 'unavailable', 'backoff');
  // 500, 502, 504 and any other 5xx: a gateway may have forwarded the call before failing.
  if (status >= 500) return uncertain('admission', 'upstream_failure', readOnly);
  // Any other 4xx is a malformed or unacceptable request: nothing ran, fix the integration.
  return verdict('admission', 'rejected', 'protocol_error', 'no');
}

function fromJsonRpc(
  code: number | null | undefined,
  result: ObservedResult | null | undefined,
  readOnly: boolean,
): Verdict | null {
  if (code == null) return null;
  switch (code) {
    case -32700:
    case -32600:
    case -32601:
      return verdict('protocol', 'rejected', 'protocol_error', 'no');
    // 2026-07-28: header mismatch, missing client capability, unsupported protocol version.
    case -32020:
    case -32021:
    case -32022:
      return verdict('protocol', 'rejected', 'protocol_error', 'no');
    case -32602: {
      // MCP reports an unknown tool as -32602 too; only a declared category tells them apart.
      // The tool does not exist, so nothing ran, folded or not.
      if (normalizeErrorCategory(result?.errorCategory) === 'unknown_tool') {
        return verdict('protocol', 'rejected', 'unknown_tool', 'after_correction');
      }
      // Folded into an isError result, the code may be the SDK's own check of a result the
      // handler already produced: a write may have run.
      if (result?.isError && !readOnly) return verdict('tool', 'unknown', 'invalid_arguments', 'after_state_check');
      return verdict('protocol', 'rejected', 'invalid_arguments', 'after_correction');
    }
    case -32042:
      return verdict('protocol', 'rejected', 'input_required', 'after_input');
    // The TypeScript SDK's local codes: the server may have received the call.
    case -32001:
      return verdict('client', 'unknown', 'timeout', uncertainRetry(readOnly));
    case -32000:
      return verdict('client', 'unknown', 'connection_lost', uncertainRetry(readOnly));
    default:
      // -32603 and codes we do not know: an error after the server accepted the call, so it
      // may have acted.
      return uncertain('protocol', 'internal', readOnly);
  }
}

const TOOL_RETRY: Record<Exclude<DeclaredCategory, 'unknown_tool'>, Retry> = {
  validation: 'after_correction',
  forbidden: 'after_approval',
  denied: 'no',
  not_found: 'after_correction',
  conflict: 'after_state_check',
  unavailable: 'backoff',
  rate_limited: 'backoff',
};

function fromResult(result: ObservedResult | null | undefined, readOnly: boolean): Verdict | null {
  if (result == null) return null;
  if (result.isError) {
    const declared = normalizeErrorCategory(result.errorCategory);
    if (declared === 'unknown_tool') {
      return verdict('protocol', 'rejected', 'unknown_tool', 'after_correction');
    }
    if (declared) return verdict('tool', 'rejected', declared, TOOL_RETRY[declared]);
    return uncertain('tool', 'tool_error', readOnly);
  }
  if (result.outputValidation === 'invalid' || result.outputValidation === 'missing') {
    return verdict('tool', 'completed', 'output_schema_violation', 'no');
  }
  return verdict('none', 'completed', 'ok', 'no');
}

function fromClientError(error: Observed['clientError'], readOnly: boolean): Verdict | null {
  return error ? verdict('client', 'unknown', error, uncertainRetry(readOnly)) : null;
}

// A failure that may have taken effect: only a trusted read-only call can call it refused.
function uncertain(boundary: Boundary, category: Category, readOnly: boolean): Verdict {
  return verdict(boundary, readOnly ? 'rejected' : 'unknown', category, uncertainRetry(readOnly));
}

function uncertainRetry(readOnly: boolean): Retry {
  return readOnly ? 'backoff' : 'after_state_check';
}

function verdict(boundary: Boundary, delivery: Delivery, category: Category, retry: Retry): Verdict {
  return { boundary, delivery, category, retry };
}
