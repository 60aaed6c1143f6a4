// The approval gate of a `tools/call` through the gateway (modern-call.ts, modern-approval.ts): what the console's policy
// says of the tool (refused outright, a grant needed, or let through), and for a call that needs a
// grant, the grant staged, waited for and redeemed right before forwarding (lib/mcp/approvals.ts),
// with progress notifications to the client meanwhile (the server's later progress on the same
// token is raised above them: progressShift). A grant not obtained is a refusal. The
// request carries the call's own arguments object (the one digested and forwarded) and the tool's
// description from `tools/list`, for the reviewer (docs/design.md "What a reviewer sees: what will run").
import type { JSONRPCMessage, JSONRPCRequest, Tool } from '@modelcontextprotocol/server';
import type { Observed } from '../outcomes/schemas';
import { approvalKey, obtainGrant, type GrantOutcome } from '../mcp/approvals';
import { callApi, type CountersignEndpoint } from '../mcp/countersign-http';
import type { StagingGuard } from '../mcp/guard';
import { guardRefusal } from './guard';
import { approvalUrl, type GatewayContext } from './context';
import type { ToolPolicy } from './policy';
import { gatewayRecord, type CallMeta, type Digest } from './record';
import type { GatewayErrorCategory, GatewayErrorDetail } from './tool-errors';
import { dropOldest } from '../bounded';

/** A call the gateway answers itself, unsent: what it records, and what the client reads. */
export interface Refusal extends GatewayErrorDetail {
  observed: Observed;
  category: GatewayErrorCategory;
  text: string;
  /** Already recorded, by the console (a guard's refusal), under this event id: not recorded again. */
  recordedAs?: string;
}

/**
 * The refusal of a tool the policy names nothing for (the console never answered), blocks, or
 * holds (its definition changed since it was accepted); null when the policy lets the call go on.
 */
export function policyRefusal(verdict: ToolPolicy | undefined, name: string): Refusal | null {
  if (!verdict) {
    return {
      observed: { sent: false, clientBlock: 'approval_required' },
      category: 'unavailable',
      text: 'Countersign cannot be reached, so this call was not sent: nothing was done. Try again later.',
    };
  }
  if (verdict.blocked) {
    return {
      observed: { sent: false, clientBlock: 'denied_by_policy' },
      category: 'denied_by_policy',
      text: `The tool "${name}" is blocked by Countersign policy: it was not called, and cannot be approved.`,
    };
  }
  if (verdict.held) {
    // Recorded as a policy refusal: records know approval_required, denied_by_policy and
    // no_credentials (docs/api.md "Outcome records"), and this is the console's policy holding it.
    return {
      observed: { sent: false, clientBlock: 'denied_by_policy' },
      category: 'tool_changed',
      text:
        `The tool "${name}" was not called: its definition changed since it was accepted, and the new ` +
        'definition waits for an admin to review it in the Countersign console. It can be called again once accepted.',
    };
  }
  return null;
}

/** Whether a call of this tool waits for a grant: one that needs approvals, or any write. */
export const needsGrant = (verdict: ToolPolicy | undefined): verdict is ToolPolicy =>
  verdict !== undefined && (verdict.requiredApprovals > 0 || !verdict.readOnly);

/** Who holds a call: the gateway's context, and the way to the client (progress while it waits). */
export interface Holder {
  ctx: GatewayContext;
  toClient(message: JSONRPCMessage, options?: { relatedRequestId?: string | number }): Promise<void>;
}

/**
 * Asks the console for a grant for this call (the guards first, when `guard` is given) and waits for it (until `signal` aborts or the
 * gateway's approval wait ends), sending the client a progress notification at each interval
 * when its request carries a progress token.
 */
export async function holdForGrant(
  holder: Holder,
  request: JSONRPCRequest,
  meta: CallMeta,
  name: string,
  tool: Tool | undefined,
  digest: Digest,
  signal: AbortSignal,
  maxWaitMs = holder.ctx.approvalWaitMs,
  guard?: StagingGuard,
): Promise<GrantOutcome> {
  const ctx = holder.ctx;
  const args = callArguments(request);
  // Not an object: nothing a reviewer could be shown is what the server would get. Not staged.
  if (!args) {
    return {
      ok: false,
      block: 'approval_required',
      approvalId: null,
      reason: 'its arguments are not a JSON object, so they cannot be approved',
      why: 'refused',
    };
  }
  const progressToken = (request.params?._meta as { progressToken?: unknown } | undefined)?.progressToken;
  let progress = 0;
  const tick =
    typeof progressToken === 'string' || typeof progressToken === 'number'
      ? setInterval(() => {
          void holder.toClient(
            {
              jsonrpc: '2.0',
              method: 'notifications/progress',
              params: { progressToken, progress: ++progress, message: 'Waiting for approval in Countersign' },
            },
            { relatedRequestId: request.id },
          );
          sentWhileHeld.set(request, progress);
        }, ctx.progressIntervalMs ?? 1000)
      : undefined;
  const body = {
    requestRef: meta.requestRef,
    organization: ctx.organization,
    principal: ctx.principal,
    ...(ctx.agent ? { agent: ctx.agent } : {}),
    server: ctx.server,
    tool: { name, annotations: gatewayRecord.annotations(tool), ...describedBy(tool) },
    argsDigest: digest(),
    arguments: args,
    summary: meta.summary,
    // The guards, asked in the request that stages the call (guard.ts).
    ...(guard ? { guard } : {}),
  };
  const book = attemptBook(ctx);
  const identity = approvalKey(ctx.server, name, meta, body.argsDigest, 0);
  let attempt = book.get(identity) ?? 1;
  try {
    for (;;) {
      const grant = await obtainGrant(
        ctx.endpoint,
        { body, idempotencyKey: approvalKey(ctx.server, name, meta, body.argsDigest, attempt) },
        { maxWaitMs, pollInitialMs: ctx.pollInitialMs ?? 500, pollMaxMs: 2000 },
        signal,
      );
      // That attempt's grant was spent: this call is a new attempt of the same call, which the
      // guards let through (guard.ts), so it gets a request of its own.
      if (!grant.ok && grant.why === 'redeemed' && !signal.aborted && attempt < ATTEMPTS_MAX) {
        attempt++;
        continue;
      }
      remember(book, identity, grant.ok ? attempt + 1 : attempt);
      return grant;
    }
  } finally {
    clearInterval(tick);
  }
}

// The last progress value the gateway sent on a held call's token, by the call's request. The
// server's progress on the same token comes after it, so it is sent on above it (progressShift).
const sentWhileHeld = new WeakMap<JSONRPCRequest, number>();

/**
 * What the server's progress on this call's token is raised by once the call is forwarded: one
 * above the last value the gateway sent while it held the call (a server counting from 0 then
 * still increases, as MCP requires of each notification's progress), or 0 when it sent none and
 * the server's values go on as they are.
 */
export function progressShift(request: JSONRPCRequest): number {
  const last = sentWhileHeld.get(request);
  return last === undefined ? 0 : last + 1;
}

/** The server's progress raised by `shift`, its total with it (progress never passes the total). */
export function shiftedProgress<P extends { progress: number; total?: number }>(params: P, shift: number): P {
  if (!shift) return params;
  const total = typeof params.total === 'number' ? { total: params.total + shift } : {};
  return { ...params, progress: params.progress + shift, ...total };
}

// The attempt each call (server, tool, idempotency key or request reference, digest) is at, per
// gateway process: the next repeat of a call whose grant was redeemed stages a new request at
// once. Another instance, or this one restarted, finds its way up from 1, a request at a time.
const ATTEMPTS_MAX = 64;
const BOOK_MAX = 10_000;
const books = new WeakMap<GatewayContext, Map<string, number>>();
function attemptBook(ctx: GatewayContext): Map<string, number> {
  let book = books.get(ctx);
  if (!book) books.set(ctx, (book = new Map()));
  return book;
}
function remember(book: Map<string, number>, identity: string, attempt: number) {
  book.delete(identity);
  book.set(identity, attempt);
  dropOldest(book, BOOK_MAX);
}

/**
 * The arguments the call is forwarded with: the request's own object, the one modern-call.ts digests
 * (none at all reads as `{}`, as the digest does); null when they are something else.
 */
export function callArguments(request: JSONRPCRequest): Record<string, unknown> | null {
  const args = (request.params as { arguments?: unknown } | undefined)?.arguments;
  if (args === undefined) return {};
  return typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : null;
}

/** The console keeps a description of at most this many characters (docs/api.md "Approvals and grants"). */
export const DESCRIPTION_MAX = 8192;

// As the server declared it; one too long for the console is cut, marked, rather than the call refused.
function describedBy(tool: Tool | undefined): { description?: string } {
  const text = tool?.description;
  if (typeof text !== 'string' || !text.trim()) return {};
  if (text.length <= DESCRIPTION_MAX) return { description: text };
  // Never half of a surrogate pair at the cut.
  const cut = text.slice(0, DESCRIPTION_MAX - 1).replace(/[\uD800-\uDBFF]$/, '');
  return { description: `${cut}…` };
}

/** The refusal of a call whose grant was not obtained: denied, expired or revoked, pending, or unreachable. */
export function grantRefusal(endpoint: CountersignEndpoint, grant: Extract<GrantOutcome, { ok: false }>): Refusal {
  if (grant.guard) return guardRefusal(grant.guard);
  const url = grant.approvalId ? approvalUrl(endpoint, grant.approvalId) : undefined;
  const approval = grant.approvalId ? { id: grant.approvalId, url } : undefined;
  const [category, text] =
    grant.why === 'denied'
      ? (['denied', 'A reviewer denied this call in Countersign: it was not sent, and must not be retried.'] as const)
      : grant.why === 'expired' || grant.why === 'revoked'
        ? ([
            'approval_expired',
            `The approval is ${grant.why}: the call was not sent. The same call asks again.`,
          ] as const)
        : grant.why === 'unavailable'
          ? (['unavailable', 'Countersign cannot be reached, so this call was not sent: nothing was done.'] as const)
          : grant.why === 'pending'
            ? ([
                'approval_required',
                `This call needs approval in Countersign${url ? ` (${url})` : ''}; it was not sent. The same call goes through once it is approved.`,
              ] as const)
            : (['approval_required', `This call was not sent: ${grant.reason}.`] as const);
  return { observed: { sent: false, clientBlock: grant.block }, category, text, approval };
}

/** What the console is told when a client declines the approval link. */
export const DECLINED_REASON = 'The client declined the elicitation: the call will not be made.';

/**
 * Takes back a pending request whose call will not be made (docs/api.md "Approvals and grants"): the person
 * declined the approval link in the client. Best effort: the call is not sent either way; a
 * request that could not be withdrawn (the console unreachable, already decided) stays what it is
 * and expires as any other. Answers whether the console withdrew it.
 */
export async function withdrawRequest(ctx: GatewayContext, approvalId: string, reason = DECLINED_REASON) {
  const r = await callApi(ctx.endpoint, 'POST', `/api/v1/approvals/${encodeURIComponent(approvalId)}/withdraw`, {
    body: { reason },
  });
  const withdrawn = r.kind === 'response' && r.status === 200;
  if (!withdrawn)
    ctx.log(
      `approval ${approvalId}: not withdrawn (${r.kind === 'response' ? `HTTP ${r.status}` : 'console unreachable'})`,
    );
  return withdrawn;
}
