// A 2026-07-28 client's call that needs a grant (docs/gateway.md "Approvals in the protocol"):
// answered at once with `input_required` carrying a URL-mode elicitation to the request's page and
// the gateway's requestState (round-state.ts: approval, principal, server, tool, argument digest,
// expiry). The retry with that state finds the same approval (its idempotency key comes from the
// call's reference and digest, both in the state) and waits for it at most `--approval-wait`:
// approved → redeemed and forwarded once; still pending → another round; denied, expired or
// revoked → the tool error. No connection is held while people decide, and a gateway restarted
// between the rounds verifies the state with the same key. A client that declines the link: the
// request is withdrawn in the console (the staging key's own withdrawal) and the call recorded as
// never sent. A client that declared no URL
// elicitation is held as a 2025 client is.
import {
  CLIENT_CAPABILITIES_META_KEY,
  inputRequired,
  inputResponse,
  type ClientCapabilities,
  type JSONRPCRequest,
  type ServerContext,
  type Tool,
} from '@modelcontextprotocol/server';
import { grantRefusal, holdForGrant, progressShift, withdrawRequest, type Holder, type Refusal } from './approval-gate';
import type { StagingGuard } from '../mcp/guard';
import { approvalUrl } from './context';
import type { ModernGateway } from './modern-server';
import type { CallMeta } from './record';
import { addRound, approvalRound, packRounds, type RoundState } from './round-state';
import type { ObservedRound } from '../outcomes/schemas';
import type { ToolPolicy } from './policy';

/** The key of the gateway's own input request in `inputRequests` / `inputResponses`. */
export const APPROVAL_INPUT = 'countersign_approval';

export interface GatedCall {
  name: string;
  tool: Tool | undefined;
  meta: CallMeta;
  digest: () => string;
  /** The call's id, first request, request number and rounds so far, carried by its rounds (round-state.ts). */
  id: string;
  at: number;
  n: number;
  rounds: ObservedRound[];
}

export type Gate =
  /** `progressShift`: what the server's progress is raised by, above the gate's own (approval-gate.ts). */
  | { go: true; grantId: string; progressShift: number }
  | { go: false; refusal: Refusal }
  | { go: false; dropped: true; grantId?: string }
  | { go: false; round: Record<string, unknown> };

export async function approvalGate(
  g: ModernGateway,
  call: GatedCall,
  verdict: ToolPolicy,
  params: Record<string, unknown>,
  state: RoundState | undefined,
  ctx: ServerContext,
  declared: ClientCapabilities | undefined,
  guard?: StagingGuard,
): Promise<Gate> {
  const signal = ctx.mcpReq.signal;
  const byUrl = declaresUrlElicitation(ctx, declared);
  if (byUrl && state?.approvalId) {
    const answer = inputResponse(ctx.mcpReq.inputResponses, APPROVAL_INPUT);
    // The person declined (or dismissed) the link: the request is withdrawn from the reviewers'
    // queue, and the call is not sent.
    if (answer.kind === 'elicit' && answer.action !== 'accept') {
      const withdrawn = await withdrawRequest(g.ctx, state.approvalId);
      return {
        go: false,
        refusal: {
          observed: { sent: false, clientBlock: 'approval_required' },
          category: 'approval_required',
          text: `The approval was declined in the client: the call was not sent, and nothing was done${withdrawn ? '; the request was withdrawn from Countersign' : ''}.`,
          approval: { id: state.approvalId, url: approvalUrl(g.ctx.endpoint, state.approvalId) },
        },
      };
    }
  }
  const request = { jsonrpc: '2.0', id: ctx.mcpReq.id, method: 'tools/call', params } as JSONRPCRequest;
  // The gate's progress while it waits goes on this request's answer stream.
  const holder: Holder = {
    ctx: g.ctx,
    toClient: async (message) => {
      if ('method' in message) await ctx.mcpReq.notify(message as never).catch(() => undefined);
    },
  };
  // The first round asks without waiting; a retry waits for the decision, bounded.
  const waitMs = byUrl && !state?.approvalId ? 0 : g.ctx.approvalWaitMs;
  const grant = await holdForGrant(
    holder,
    request,
    call.meta,
    call.name,
    call.tool,
    call.digest,
    signal,
    waitMs,
    guard,
  );
  if (signal.aborted)
    return {
      go: false,
      dropped: true,
      ...(grant.ok ? { grantId: grant.grantId } : {}),
    };
  if (grant.ok) return { go: true, grantId: grant.grantId, progressShift: progressShift(request) };
  if (!byUrl || grant.why !== 'pending' || !grant.approvalId)
    return { go: false, refusal: grantRefusal(g.ctx.endpoint, grant) };
  const url = approvalUrl(g.ctx.endpoint, grant.approvalId);
  // The gateway's own round, noted on the call (once, however long the approval stays pending).
  call.rounds = addRound(call.rounds, approvalRound(call.at));
  const who = verdict.requiredApprovals > 1 ? `${verdict.requiredApprovals} reviewers` : 'a reviewer';
  return {
    go: false,
    round: inputRequired({
      inputRequests: {
        [APPROVAL_INPUT]: inputRequired.elicitUrl({
          message: `"${call.name}" needs approval by ${who} of ${g.ctx.organization} in Countersign before it runs. Open the request, then retry once it is decided.`,
          url,
        }),
      },
      requestState: await g.codec.mint(
        {
          tool: call.name,
          digest: call.digest(),
          ref: call.meta.requestRef,
          approvalId: grant.approvalId,
          call: call.id,
          at: call.at,
          n: call.n,
          rounds: packRounds(call.rounds),
        },
        ctx,
      ),
    }) as unknown as Record<string, unknown>,
  };
}

/**
 * Whether this request's client declared URL-mode elicitation: a 2026-07-28 request in its
 * envelope, a 2025 session at its initialize (the SDK's legacy shim then sends the round as a
 * real `elicitation/create` while the call is held).
 */
function declaresUrlElicitation(ctx: ServerContext, declared: ClientCapabilities | undefined): boolean {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const capabilities = (envelope?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined) ?? declared;
  return capabilities?.elicitation?.url !== undefined;
}
