// The argument digest (docs/api.md, `argsDigest`): what outcome records carry instead of the
// arguments, and what grants are bound to. The arguments themselves leave the agent's process only
// in an approval request, beside this digest of them, for the console to check and show reviewers.
//
// Canonical JSON is lib/json's (RFC 8785), the form the console hashes with: `null` is kept,
// because a tool may read `{ "note": null }` differently from `{}`. Hashed with the one-shot
// `hash` (Node ≥ 20.12): no Hash object per digest, a third of createHash's cost on short input
// (the gateway digests every call).
import { hash } from 'node:crypto';
import { canonicalJson } from '../json/canonical';

export type ArgsDigest = `sha256:${string}`;

/** `sha256:` and the lowercase hex SHA-256 of the canonical JSON of the arguments (`{}` when none). */
export function argsDigest(args: Record<string, unknown> | undefined | null): ArgsDigest {
  return `sha256:${hash('sha256', canonicalJson(args ?? {}), 'hex')}`;
}

/** A stable SHA-256 hex of several parts, e.g. to derive an Idempotency-Key. */
export function hashParts(...parts: (string | number | null | undefined)[]): string {
  return hash('sha256', canonicalJson(parts.map((p) => p ?? null)), 'hex');
}
