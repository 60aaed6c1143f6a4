// The `requestState` the gateway gives a 2026-07-28 client with each `input_required` round
// (docs/gateway.md "Approvals in the protocol"): integrity-protected (HMAC, SDK v2's codec) and keyed from the
// gateway's API key, so that a gateway restarted between two rounds still verifies it, and bound
// to the method, principal and server, so that a state minted for one is refused for another. It
// carries the server's own state (echoed back to it unchanged on the retry) and what the gateway
// must not do twice for the same call: its approval, once passed. A round mirroring a 2025 server's
// own requests names the call held open upstream for them (held-calls.ts) and the round's number.
// It also carries the call's rounds so far (their record: `observed.rounds`), packed small: when,
// who asked, which kinds, how many requests; never what was asked.
import { hkdfSync } from 'node:crypto';
import { createRequestStateCodec, type RequestStateCodec } from '@modelcontextprotocol/server';
import {
  MAX_RECORDED_ROUNDS,
  MAX_ROUND_REQUESTS,
  roundKinds,
  roundSchema,
  type ObservedRound,
  type RoundKind,
} from '../outcomes/schemas';

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
  /** tools/call: the call's rounds so far, oldest first (`packRounds`). */
  rounds?: PackedRound[];
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

/** A round in the state: ms from the call's first request, who asked and what as bits, how many input requests. */
export type PackedRound = [atMs: number, bits: number, requests: number];

const INT4_MAX = 2_147_483_647;
/** Bit 0: asked by the gateway; bit i + 1: `roundKinds[i]` asked. */
const GATEWAY_BIT = 1;
const kindBit = (kind: RoundKind) => 2 << roundKinds.indexOf(kind);
const ALL_BITS = (2 << roundKinds.length) - 1;

export function packRounds(rounds: readonly ObservedRound[]): PackedRound[] | undefined {
  if (!rounds.length) return undefined;
  return rounds.map((r) => [
    r.atMs,
    r.asked.reduce((bits, kind) => bits | kindBit(kind), r.by === 'gateway' ? GATEWAY_BIT : 0),
    r.requests,
  ]);
}

/**
 * The rounds a state carries (none: an empty list); null when they are not what this gateway packs
 * (too many, out of range): the state is then refused as a tampered one is.
 */
export function unpackRounds(packed: unknown): ObservedRound[] | null {
  if (packed === undefined) return [];
  if (!Array.isArray(packed) || packed.length > MAX_RECORDED_ROUNDS) return null;
  const rounds: ObservedRound[] = [];
  for (const p of packed) {
    if (!Array.isArray(p) || p.length !== 3 || !Number.isInteger(p[1]) || p[1] < 0 || p[1] > ALL_BITS) return null;
    const [atMs, bits, requests] = p as PackedRound;
    const round = roundSchema.safeParse({
      atMs,
      by: bits & GATEWAY_BIT ? 'gateway' : 'server',
      asked: roundKinds.filter((kind) => bits & kindBit(kind)),
      requests,
    });
    if (!round.success) return null;
    rounds.push(round.data);
  }
  return rounds;
}

/**
 * `rounds` with `round` after them: the first MAX_RECORDED_ROUNDS only, and a gateway's round right
 * after another is the same approval still pending (asked once, waited for again): not added.
 */
export function addRound(rounds: readonly ObservedRound[], round: ObservedRound): ObservedRound[] {
  const last = rounds.at(-1);
  if (rounds.length >= MAX_RECORDED_ROUNDS || (round.by === 'gateway' && last?.by === 'gateway')) return [...rounds];
  return [...rounds, round];
}

/** The gateway's approval round of a call that began at `startedAt` (ms since the epoch). */
export const approvalRound = (startedAt: number): ObservedRound => ({
  atMs: since(startedAt),
  by: 'gateway',
  asked: ['approval'],
  requests: 1,
});

/** The server's round: which kinds its input requests ask for, and how many there are. */
export function serverRound(inputRequests: unknown, startedAt: number): ObservedRound {
  const requests = isRecord(inputRequests) ? Object.values(inputRequests) : [];
  const asked = new Set(requests.map(kindOf));
  return {
    atMs: since(startedAt),
    by: 'server',
    asked: roundKinds.filter((kind) => asked.has(kind)),
    requests: Math.min(requests.length, MAX_ROUND_REQUESTS),
  };
}

function kindOf(request: unknown): RoundKind | undefined {
  if (!isRecord(request)) return undefined;
  if (request.method === 'sampling/createMessage') return 'sampling';
  if (request.method === 'roots/list') return 'roots';
  if (request.method !== 'elicitation/create') return undefined;
  return isRecord(request.params) && request.params.mode === 'url' ? 'elicitation_url' : 'elicitation_form';
}

const since = (startedAt: number) => Math.min(INT4_MAX, Math.max(0, Date.now() - startedAt));

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
