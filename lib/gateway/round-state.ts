// The `requestState` the gateway gives a 2026-07-28 client with each `input_required` round
// (docs/gateway.md "Approvals in the protocol"): integrity-protected (HMAC, SDK v2's codec) and keyed from the
// gateway's API key, so that a gateway restarted between two rounds still verifies it, and bound
// to the method, principal and server, so that a state minted for one is refused for another. It
// carries the server's own state (echoed back to it unchanged on the retry) and what the gateway
// must not do twice for the same call: its approval, once passed. A round mirroring a 2025 server's
// own requests names the call held open upstream for them (held-calls.ts) and the round's number.
import { hkdfSync } from 'node:crypto';
import { createRequestStateCodec, type RequestStateCodec } from '@modelcontextprotocol/server';

export interface RoundState {
  /** The server's own requestState of this round, if it gave one. */
  up?: string;
  /** tools/call: the tool and argument digest the state was minted for; a retry must match. */
  tool?: string;
  digest?: string;
  /** tools/call: the call's request reference (its record's), kept across its rounds. */
  ref?: string;
  /** tools/call: the approval the call waits for (a round the gateway asked itself). */
  approvalId?: string;
  /** tools/call: the grant redeemed for this call in an earlier round (its approval passed). */
  grantId?: string;
  /** tools/call: the call's own id (its record's event id comes from it), kept across its rounds. */
  call?: string;
  /** tools/call: when the call's first request arrived (ms since the epoch). */
  at?: number;
  /** tools/call: how many requests of the call the gateway has answered (the retry is number `n + 1`). */
  n?: number;
  /** tools/call: the upstream call held open for its 2025 server's requests (held-calls.ts). */
  held?: string;
  /** tools/call: which round of the held call this state answers (a retry of an older one is refused). */
  round?: number;
  /**
   * tools/call: what the server's progress is raised by (approval-gate.ts `progressShift`), set by the
   * request that held the call for its grant and kept by its retries, so that a client showing one
   * bar per call never sees it step back.
   */
  shift?: number;
}

/** How long a round's state stays valid: as long as a call may wait for people. */
export const TTL_SECONDS = 3600;

export function roundStateCodec(
  apiKey: string,
  scope: { principal: string; organization: string; server: string },
): RequestStateCodec<RoundState> {
  const key = new Uint8Array(hkdfSync('sha256', apiKey, 'countersign-gateway', 'requestState v1', 32));
  return createRequestStateCodec<RoundState>({
    key,
    ttlSeconds: TTL_SECONDS,
    bind: (ctx) => [ctx.mcpReq.method, scope.organization, scope.principal, scope.server].join('\0'),
  });
}
