// The classifier's words: the one-sentence `whatHappened` and the `nextStep` of a verdict. Pure.
import type { Verdict } from './classify';
import type { Category } from './schemas';

// Categories where the call may have run: what to do next depends on whether it is a write.
const UNCERTAIN = new Set<Category>([
  'upstream_failure',
  'internal',
  'tool_error',
  'timeout',
  'connection_lost',
  'cancelled',
  'no_response',
  'task_cancelled',
  'task_expired',
]);

// A task the server is still running: the only safe next step is to ask the task.
const RUNNING = new Set<Category>(['task_running', 'task_input_required']);

function isUncertainCategory(category: Category): boolean {
  return UNCERTAIN.has(category);
}

// Why, in a few words, fitted into the one-sentence `whatHappened`.
const REASONS: Record<Category, string> = {
  approval_required: 'it needs an approval that has not been given',
  denied_by_policy: 'policy does not allow it',
  no_credentials: 'no credential was available for it',
  not_sent: 'the caller stopped before sending it',
  outcome_unknown: 'an earlier attempt of the same call may have taken effect and nobody has checked',
  already_done: 'the same call already took effect in this request',
  idempotency_key_reused: 'its idempotency key was already used for other arguments',
  not_retryable: 'the same call was refused before in a way a retry cannot change',
  retry_too_soon: 'it came sooner than the backoff after the last failure allows',
  budget_exhausted: 'this request used up its budget of attempts or calls',
  unauthenticated: 'the delegated credentials were not accepted',
  forbidden: 'the credentials lack the required permission',
  session_expired: 'the MCP session had expired',
  rate_limited: 'the rate limit was reached',
  unavailable: 'the service was unavailable',
  upstream_failure: 'the server answered with an upstream error',
  protocol_error: 'the request did not follow the protocol',
  invalid_arguments: 'its arguments were invalid',
  unknown_tool: 'the server has no such tool',
  internal: 'the server reported an internal error',
  input_required: 'it needs input from a person first',
  timeout: 'it timed out',
  connection_lost: 'the connection was lost',
  cancelled: 'it was cancelled',
  no_response: 'no response was recorded',
  validation: 'the tool found the input invalid',
  denied: 'the tool denied it',
  not_found: 'the tool could not find the resource',
  conflict: 'the resource had changed since it was read',
  tool_error: 'the tool reported an error without a category',
  output_schema_violation: 'its structured result was missing or broke the declared schema',
  ok: 'it succeeded',
  task_running: 'its task is still working',
  task_input_required: 'its task is waiting for input',
  task_cancelled: 'its task was cancelled before it finished',
  task_expired: 'its task expired before a final status was seen',
};

// v.category invalid_arguments with delivery unknown is only ever the folded -32602 on a write.
const isFoldedInvalidArguments = (v: Verdict) => v.category === 'invalid_arguments' && v.delivery === 'unknown';

export function describe(v: Verdict, readOnly: boolean, toolName?: string | null): string {
  const call = toolName ? `The call to ${toolName}` : 'The call';
  const reason = REASONS[v.category];
  if (RUNNING.has(v.category)) {
    return readOnly
      ? `${call} runs as an MCP task that has not finished (${reason}); it is read-only, so nothing is being changed.`
      : `${call} runs as an MCP task that has not finished (${reason}): it may already have taken effect.`;
  }
  if (isFoldedInvalidArguments(v)) {
    return `${call} ended in error -32602, which SDKs use both for invalid arguments (nothing ran) and for a result that failed the server's own output schema (it ran): it may have taken effect.`;
  }
  switch (v.delivery) {
    case 'never_sent':
      return `${call} was never sent (${reason}): nothing was done.`;
    case 'rejected':
      return isUncertainCategory(v.category)
        ? `${call} failed (${reason}); it is read-only, so nothing was changed.`
        : `${call} was refused (${reason}): nothing was done.`;
    case 'completed':
      return v.category === 'ok'
        ? `${call} ran and completed successfully.`
        : `${call} ran, but ${reason}: its content is no evidence of what was done.`;
    case 'unknown':
      return readOnly
        ? `${call} was sent but no trustworthy answer came back (${reason}); it is read-only, so nothing was changed.`
        : `${call} was sent but no trustworthy answer came back (${reason}): it may have taken effect.`;
  }
}

const CHECK_STATE = 'Check the current state first; replay only with the same idempotency key and the same input.';
const BACKOFF = 'Retry with bounded backoff.';

const NEXT_STEPS: Partial<Record<Category, string>> = {
  approval_required: 'Obtain approval through the approval queue; never route around it.',
  denied_by_policy: 'Obtain approval or a policy change; never route around it.',
  no_credentials: 'Obtain the credential through legitimate approval; never borrow another.',
  unauthenticated: 'Correct the delegated credentials; never try another account or credential.',
  forbidden: 'Request the permission through legitimate approval; never switch to a broader tool.',
  session_expired: 'Re-initialize the MCP session, then retry: nothing ran.',
  rate_limited: BACKOFF,
  unavailable: BACKOFF,
  protocol_error: 'Fix the integration; an unchanged retry fails the same way.',
  invalid_arguments: 'Correct the input, then call again.',
  unknown_tool: 'Correct the tool name or input; never substitute a broader tool.',
  input_required: 'Answer the input requests (a person may need to), then send the same call again.',
  validation: 'Correct the input, then call again.',
  denied: 'Stop: do not retry or look for another route.',
  not_found: 'Ask for a corrected identifier.',
  conflict: 'Read and reconcile the current resource, then retry with the new revision.',
  output_schema_violation: "Do not treat the content as evidence; report it to the tool's owner.",
};

// A guard's refusal (docs/design.md "Guards at the point of execution"): what to do instead.
const GUARD_NEXT_STEPS: Partial<Record<Category, string>> = {
  outcome_unknown:
    'Check the current state of the earlier attempt first; replay only with its idempotency key and the same input.',
  already_done: 'Do not call again: it is done.',
  idempotency_key_reused: 'Use a new idempotency key for new arguments, or the same arguments for this key.',
  not_retryable: 'Stop: fix what the earlier refusal names (input, permission or approval) before calling again.',
  retry_too_soon: 'Wait for the backoff to pass, then retry.',
  budget_exhausted: 'Stop: a person must look at this request before it calls again.',
};

const POLL_TASK = 'Poll the task (tasks/get) until it ends; never call the tool again.';
const ANSWER_TASK = "Answer the task's input request, then poll the task (tasks/get); never call the tool again.";
const FOLDED_CHECK_STATE =
  'Check the current state first: the call may have run. Replay only with the same idempotency key and the same input.';

export function nextStepFor(v: Verdict, readOnly: boolean): string {
  if (v.category === 'task_running') return POLL_TASK;
  if (v.category === 'task_input_required') return ANSWER_TASK;
  if (isFoldedInvalidArguments(v)) return FOLDED_CHECK_STATE;
  const guarded = v.delivery === 'never_sent' ? GUARD_NEXT_STEPS[v.category] : undefined;
  if (guarded) return guarded;
  if (v.delivery === 'never_sent' && v.retry !== 'after_approval') {
    return v.retry === 'backoff'
      ? 'Nothing was sent; retry with bounded backoff.'
      : 'Nothing was sent; send it again only if it is still wanted.';
  }
  if (v.category === 'ok') return readOnly ? 'Done.' : 'Done; never repeat this write.';
  if (isUncertainCategory(v.category)) return v.retry === 'backoff' ? BACKOFF : CHECK_STATE;
  return NEXT_STEPS[v.category] ?? CHECK_STATE;
}
