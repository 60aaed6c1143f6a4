// The agent's side of "Approvals and grants" (docs/api.md): stage a write, wait for people to decide,
// redeem the grant right before the call. Anything but a redeemed grant means: do not call.
import type { ToolAnnotations } from '../outcomes/schemas';
import { guardRefusalOf, type GuardRefusal, type StagingGuard } from './guard';
import { backoffDelay } from '../backoff';
import { hashParts } from './digest';
import {
  callApi,
  isTransient,
  problemCode,
  sleep,
  type ApiResponse,
  type CountersignEndpoint,
} from './countersign-http';

export type ApprovalStatus = 'pending' | 'approved' | 'denied' | 'expired' | 'revoked' | 'redeemed';

/** `GET /api/v1/approvals/{id}`, the fields the agent reads. */
export interface ApprovalSnapshot {
  id: string;
  status: ApprovalStatus;
  requiredApprovals: number;
  version: number;
  expiresAt: string;
  grant: { id: string; expiresAt?: string; redeemedAt?: string | null; revokedAt?: string | null } | null;
}

/** `POST /api/v1/approvals` body (docs/api.md). */
export interface ApprovalRequestBody {
  requestRef: string;
  organization: string;
  principal: string;
  agent?: string;
  server: string;
  /** `description`: as the server declared it in `tools/list`, for the reviewer to read beside the arguments. */
  tool: { name: string; annotations?: ToolAnnotations | null; description?: string };
  /** The digest of `arguments`: the console refuses the request when they differ. */
  argsDigest: string;
  /**
   * The very object the tool will be called with (the one `argsDigest` was computed over), so a
   * reviewer approves what will run (docs/design.md "What a reviewer sees: what will run").
   */
  arguments: Record<string, unknown>;
  summary: string;
  resource?: { type: string; id: string };
  pendingTtlSeconds?: number;
  grantTtlSeconds?: number;
  /** Ask the guards first, in the same request (lib/mcp/guard.ts guardOf): a refusal stages nothing. */
  guard?: StagingGuard;
}

export interface ApprovalWaitOptions {
  /** How long to wait for decisions before giving up (default 15 min; the request may live on). */
  maxWaitMs?: number;
  /** First poll interval (default 500 ms), growing to `pollMaxMs` (default 5 s). */
  pollInitialMs?: number;
  pollMaxMs?: number;
  pendingTtlSeconds?: number;
  grantTtlSeconds?: number;
  /** Called once the request exists (e.g. to tell a person, or, in demos, to decide it). */
  onRequested?: (approval: ApprovalSnapshot) => void | Promise<void>;
  random?: () => number;
}

export type GrantOutcome =
  | { ok: true; approvalId: string; grantId: string }
  | {
      ok: false;
      block: 'approval_required' | 'denied_by_policy';
      approvalId: string | null;
      reason: string;
      cancelled?: boolean;
      /**
       * Why, for callers that answer with a category (the gateway): still `pending` at the end of
       * the wait, a terminal status, `unavailable` (Countersign unreachable or failing), or
       * `refused` (any other answer, e.g. a blocked tool).
       */
      why?: ApprovalStatus | 'unavailable' | 'refused' | 'guarded';
      /** `guarded`: the guards' refusal (docs/api.md "Guards"), stored by Countersign as the call's record. */
      guard?: GuardRefusal;
    };

// Per attempt: a replay after an unknown outcome needs a new grant (the first one was spent), so a
// new decision; a retried POST within one attempt gets the same request back.
export function approvalKey(
  server: string,
  tool: string,
  call: { requestRef: string; idempotencyKey?: string },
  digest: string,
  attempt: number,
): string {
  return `cs-${hashParts(server, tool, call.idempotencyKey ?? `ref:${call.requestRef}`, digest, attempt)}`;
}

// Transient failures of one API call are retried this often before the call counts as failed.
const API_ATTEMPTS = 4;

export async function obtainGrant(
  endpoint: CountersignEndpoint,
  request: { body: ApprovalRequestBody; idempotencyKey: string },
  options: ApprovalWaitOptions = {},
  signal?: AbortSignal,
): Promise<GrantOutcome> {
  const random = options.random ?? Math.random;
  const deadline = Date.now() + (options.maxWaitMs ?? 15 * 60_000);
  const blocked = (
    reason: string,
    approvalId: string | null,
    block: 'approval_required' | 'denied_by_policy' = 'approval_required',
    why?: ApprovalStatus | 'unavailable' | 'refused' | 'guarded',
  ): Extract<GrantOutcome, { ok: false }> => ({
    ok: false,
    block,
    approvalId,
    reason,
    ...(why ? { why } : {}),
    ...(signal?.aborted ? { cancelled: true } : {}),
  });
  const failed = (r: ApiResponse) => (isTransient(r) ? 'unavailable' : 'refused');

  const body = {
    ...request.body,
    pendingTtlSeconds: options.pendingTtlSeconds ?? request.body.pendingTtlSeconds,
    grantTtlSeconds: options.grantTtlSeconds ?? request.body.grantTtlSeconds,
  };
  const created = await withRetries(
    () =>
      callApi(endpoint, 'POST', '/api/v1/approvals', {
        body: withoutUndefined(body),
        headers: { 'idempotency-key': request.idempotencyKey },
        signal,
      }),
    // 409: the same key is still being stored (docs/api.md); its answer comes on the next try.
    (r) => isTransient(r) || (r.kind === 'response' && r.status === 409),
    random,
    signal,
  );
  // The guards refused the write: nothing was staged.
  const guard = created.kind === 'response' && created.status === 200 ? guardRefusalOf(created.body) : null;
  if (guard) return { ...blocked(guard.text, null, 'approval_required', 'guarded'), guard };
  if (created.kind !== 'response' || created.status !== 201)
    return blocked(`the approval request failed (${describe(created)})`, null, 'approval_required', failed(created));
  let approval = created.body as ApprovalSnapshot;
  if (!approval?.id) return blocked('the approval request was answered without an id', null);

  if (approval.status === 'pending') {
    try {
      await options.onRequested?.(approval);
    } catch {
      // A failing notification does not change what was decided.
    }
  }

  for (let poll = 1; approval.status === 'pending'; poll++) {
    const remaining = deadline - Date.now();
    if (signal?.aborted) return blocked('cancelled while waiting for approval', approval.id);
    if (remaining <= 0)
      return blocked('no decision within the wait limit', approval.id, 'approval_required', 'pending');
    await sleep(
      Math.min(
        remaining,
        backoffDelay(poll, { initialMs: options.pollInitialMs ?? 500, maxMs: options.pollMaxMs ?? 5000, random }),
      ),
      signal,
    );
    const read = await withRetries(
      () => callApi(endpoint, 'GET', `/api/v1/approvals/${encodeURIComponent(approval.id)}`, { signal }),
      isTransient,
      random,
      signal,
    );
    // A transient failure to read is not a decision: keep waiting until the limit.
    if (read.kind === 'response' && read.status === 200) approval = read.body as ApprovalSnapshot;
    else if (!isTransient(read))
      return blocked(`reading the approval failed (${describe(read)})`, approval.id, 'approval_required', 'refused');
  }

  switch (approval.status) {
    case 'approved':
      break;
    case 'denied':
      return blocked('a reviewer denied it', approval.id, 'denied_by_policy', 'denied');
    case 'redeemed':
      // The same Idempotency-Key answered a request whose grant is spent: this attempt already ran.
      return blocked(
        'the grant of this attempt was already used; a replay is a new attempt (attempt + 1)',
        approval.id,
        'approval_required',
        'redeemed',
      );
    default:
      return blocked(`the approval is ${approval.status}`, approval.id, 'approval_required', approval.status);
  }
  const grantId = approval.grant?.id;
  if (!grantId) return blocked('approved without a grant', approval.id);
  // Cancelled before redeeming: the grant stays unspent, for the same call to redeem later.
  if (signal?.aborted) return blocked('cancelled before the grant was redeemed', approval.id);

  // A lost answer to a redemption that did succeed reads as 409 on the retry: the grant is then
  // spent without our knowing it, and we stop. Never call without a confirmed redemption.
  const redeemed = await withRetries(
    () =>
      callApi(endpoint, 'POST', `/api/v1/grants/${encodeURIComponent(grantId)}/redeem`, {
        body: { server: request.body.server, tool: request.body.tool.name, argsDigest: request.body.argsDigest },
        signal,
      }),
    isTransient,
    random,
    signal,
  );
  if (redeemed.kind === 'response' && redeemed.status === 200) return { ok: true, approvalId: approval.id, grantId };
  return blocked(
    `the grant could not be redeemed (${describe(redeemed)})`,
    approval.id,
    'approval_required',
    redeemed.kind === 'response' && redeemed.status === 410 ? 'expired' : failed(redeemed),
  );
}

async function withRetries(
  call: () => Promise<ApiResponse>,
  retryable: (r: ApiResponse) => boolean,
  random: () => number,
  signal?: AbortSignal,
): Promise<ApiResponse> {
  let res = await call();
  for (let attempt = 1; attempt < API_ATTEMPTS && retryable(res) && !signal?.aborted; attempt++) {
    const wait =
      res.kind === 'response' && res.retryAfterMs != null
        ? Math.min(res.retryAfterMs, 10_000)
        : backoffDelay(attempt, { initialMs: 250, maxMs: 4000, random });
    await sleep(wait, signal);
    // Cancelled during the wait: not asked again (a fetch that ignores the signal would still ask).
    if (signal?.aborted) break;
    res = await call();
  }
  return res;
}

function describe(r: ApiResponse): string {
  if (r.kind === 'network_error') return 'Countersign unreachable';
  const code = problemCode(r.body);
  return `HTTP ${r.status}${code ? ` ${code}` : ''}`;
}

function withoutUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
