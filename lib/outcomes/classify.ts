// THE outcome classifier (DESIGN.md, "Classifying an outcome"). The console and the agent-side
// integration both call this, so an outcome means the same thing everywhere. It reads codes,
// statuses and declared categories only: English messages are never parsed.
//
// Precedence when several fields are set (first match wins):
//   1. Not sent. `sent: false` with no sign of an answer (status, code or result): never_sent.
//      Any such sign means something did leave the caller, so the record is treated as sent.
//   2. HTTP status >= 400: admission refused or failed before JSON-RPC ran.
//   3. JSON-RPC error code. It beats a result because SDKs fold protocol errors into
//      `isError` results ("MCP error -32602"): the caller reports the code and the code wins.
//   4. Tool result: `isError` with its declared category, else output validation.
//   5. Client error (timeout, connection lost, cancelled). A received answer above is more
//      specific than a later local failure, but a client error beats silence.
//   6. Nothing else: no_response.
import type {
  Boundary,
  Category,
  Classification,
  Delivery,
  Observed,
  ObservedResult,
  Outcome,
  Retry,
  ToolAnnotations,
} from './schemas';

/** Stored with each classification so records can be re-derived when the rules change. */
export const CLASSIFIER_VERSION = 1;

/** Categories a tool (or an SDK folding a protocol error) may declare for itself. */
export type DeclaredCategory =
  'validation' | 'forbidden' | 'denied' | 'not_found' | 'conflict' | 'unavailable' | 'rate_limited' | 'unknown_tool';

// Spellings seen in the wild, after normalisation. Only categories that promise the call had
// no effect belong here: e.g. UPSTREAM_TIMEOUT is absent on purpose, because a timed-out
// upstream may have acted; it stays an uncategorised (uncertain) tool error.
const SPELLINGS = new Map<string, DeclaredCategory>([
  ...spell(
    'validation',
    'validation',
    'validation_error',
    'validation_failed',
    'invalid',
    'invalid_input',
    'invalid_argument',
    'invalid_arguments',
    'invalid_params',
    'bad_request',
  ),
  ...spell(
    'forbidden',
    'forbidden',
    'permission_denied',
    'access_denied',
    'insufficient_scope',
    'insufficient_permission',
    'insufficient_permissions',
  ),
  ...spell('denied', 'denied', 'denied_by_policy', 'policy_denied'),
  ...spell('not_found', 'not_found', 'notfound', 'resource_not_found'),
  ...spell(
    'conflict',
    'conflict',
    'revision_conflict',
    'version_conflict',
    'edit_conflict',
    'precondition_failed',
    'concurrent_modification',
  ),
  ...spell(
    'unavailable',
    'unavailable',
    'retryable_upstream',
    'upstream_unavailable',
    'service_unavailable',
    'temporarily_unavailable',
  ),
  ...spell(
    'rate_limited',
    'rate_limited',
    'ratelimited',
    'rate_limit',
    'rate_limit_exceeded',
    'too_many_requests',
    'throttled',
  ),
  ...spell('unknown_tool', 'unknown_tool', 'tool_not_found', 'no_such_tool'),
]);

function spell(category: DeclaredCategory, ...names: string[]): [string, DeclaredCategory][] {
  return names.map((name) => [name, category]);
}

/**
 * Maps a declared error category to ours: case-insensitive, camelCase split, and any run of
 * separators ('-', ' ', '.', '/', …) read as '_'. Unrecognised or empty: null (no category).
 */
export function normalizeErrorCategory(raw: string | null | undefined): DeclaredCategory | null {
  if (!raw) return null;
  const key = raw
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_|_$/g, '');
  return SPELLINGS.get(key) ?? null;
}

export interface ClassifyInput {
  observed: Observed;
  annotations?: ToolAnnotations | null;
  /** Whether an admin trusts this server's annotations (`servers:trust`). */
  serverTrusted: boolean;
  /** Named in `whatHappened` when given. */
  toolName?: string | null;
}

type Verdict = Pick<Classification, 'boundary' | 'delivery' | 'category' | 'retry'>;

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
  return (
    fromHttp(o.httpStatus, o.authError, readOnly) ??
    fromJsonRpc(o.jsonRpcErrorCode, o.result, readOnly) ??
    fromResult(o.result, readOnly) ??
    fromClientError(o.clientError, readOnly) ??
    verdict('client', 'unknown', 'no_response', uncertainRetry(readOnly))
  );
}

function wasSent(o: Observed): boolean {
  return o.sent || o.httpStatus != null || o.jsonRpcErrorCode != null || o.result != null;
}

function fromNeverSent(o: Observed): Verdict {
  if (o.clientBlock) return verdict('client', 'never_sent', o.clientBlock, 'after_approval');
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
    case -32602: {
      // MCP reports an unknown tool as -32602 too; only a declared category tells them apart.
      const unknownTool = normalizeErrorCategory(result?.errorCategory) === 'unknown_tool';
      return verdict('protocol', 'rejected', unknownTool ? 'unknown_tool' : 'invalid_arguments', 'after_correction');
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

// Categories where the call may have run: what to do next depends on whether it is a write.
const UNCERTAIN = new Set<Category>([
  'upstream_failure',
  'internal',
  'tool_error',
  'timeout',
  'connection_lost',
  'cancelled',
  'no_response',
]);

function isUncertainCategory(category: Category): boolean {
  return UNCERTAIN.has(category);
}

// Why, in a few words, fitted into the one-sentence `whatHappened`.
const REASONS: Record<Category, string> = {
  approval_required: 'it needs an approval that has not been given',
  denied_by_policy: 'policy does not allow it',
  no_credentials: 'no credential was available for it',
  not_sent: 'the caller stopped before sending it',
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
};

function describe(v: Verdict, readOnly: boolean, toolName?: string | null): string {
  const call = toolName ? `The call to ${toolName}` : 'The call';
  const reason = REASONS[v.category];
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
  input_required: 'Wait for the requested human input, then retry.',
  validation: 'Correct the input, then call again.',
  denied: 'Stop: do not retry or look for another route.',
  not_found: 'Ask for a corrected identifier.',
  conflict: 'Read and reconcile the current resource, then retry with the new revision.',
  output_schema_violation: "Do not treat the content as evidence; report it to the tool's owner.",
};

function nextStepFor(v: Verdict, readOnly: boolean): string {
  if (v.delivery === 'never_sent' && v.retry !== 'after_approval') {
    return v.retry === 'backoff'
      ? 'Nothing was sent; retry with bounded backoff.'
      : 'Nothing was sent; send it again only if it is still wanted.';
  }
  if (v.category === 'ok') return readOnly ? 'Done.' : 'Done; never repeat this write.';
  if (isUncertainCategory(v.category)) return v.retry === 'backoff' ? BACKOFF : CHECK_STATE;
  return NEXT_STEPS[v.category] ?? CHECK_STATE;
}
