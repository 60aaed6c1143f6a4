import 'server-only';
import { createHmac, hkdfSync } from 'node:crypto';
import { config } from '@/lib/config';

// Every key the console derives comes from AUTH_SECRET (the one server secret every deployment has),
// one way: HKDF-SHA256 with the salt "countersign" and the purpose's label as the info, 32 bytes.
// A purpose's label never changes, since changing it is rotating that key; a new use gets a purpose
// of its own, so no two uses ever share a key.
//
// Rotating AUTH_SECRET changes every key. Sealed webhook secrets no longer open (set them again);
// the keyed hashes of outcome records and approval requests change, so a replay of a record sent
// before the rotation reads as different content (422), a session's records no longer link across
// it, and a retried approval request reads as another body. The outcome and approval hashes were
// derived another way before this module (an HMAC keyed with the label and the secret together):
// moving them here had that same one-time effect.
const LABELS = {
  /** AES-256-GCM key of endpoints' signing secrets, webhook_endpoints.secret_box (webhooks/secret.ts). */
  'webhook-secret-box': 'webhook-secret:v1', // the label the first sealed boxes used: they still open
  /** HMAC key of an outcome record's session id (outcome_records.session_hash). */
  'outcome-session-hash': 'outcome-session-hash:v1',
  /** HMAC key of an outcome record's content, for replays (outcome_records.content_hash). */
  'outcome-content-hash': 'outcome-content-hash:v1',
  /** HMAC key of an approval request's body, for Idempotency-Key replays (approval_requests.request_hash). */
  'approval-request-hash': 'approval-request-hash:v1',
} as const;

export type KeyPurpose = keyof typeof LABELS;

export const KEY_PURPOSES = Object.keys(LABELS) as KeyPurpose[];

const SALT = 'countersign';

// Derived once per secret and purpose: the outcome hashes are taken for every record ingested.
const derived = new Map<KeyPurpose, { secret: string; key: Buffer }>();

/** The 32-byte key for `purpose`, from AUTH_SECRET; throws naming AUTH_SECRET when it is not set. */
export function deriveKey(purpose: KeyPurpose): Buffer {
  const secret = config().AUTH_SECRET;
  if (!secret)
    throw new Error(
      `AUTH_SECRET is not set: the ${purpose} key cannot be derived (generate one with: openssl rand -base64 32)`,
    );
  const known = derived.get(purpose);
  if (known?.secret === secret) return known.key;
  const key = Buffer.from(hkdfSync('sha256', secret, SALT, LABELS[purpose], 32));
  derived.set(purpose, { secret, key });
  return key;
}

/** HMAC-SHA256 of `value` under the purpose's key, hex: what a database copy cannot brute-force back. */
export function keyedHash(purpose: Exclude<KeyPurpose, 'webhook-secret-box'>, value: string): string {
  return createHmac('sha256', deriveKey(purpose)).update(value).digest('hex');
}
