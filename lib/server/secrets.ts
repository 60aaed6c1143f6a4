import 'server-only';
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { config } from '@/lib/config';

// Every key the console derives comes from AUTH_SECRET (the one server secret every deployment has),
// one way: HKDF-SHA256 with the salt "countersign" and the purpose's label as the info, 32 bytes.
// A purpose's label never changes, since changing it is rotating that key; a new use gets a purpose
// of its own, so no two uses ever share a key.
//
// Rotating AUTH_SECRET changes every key. Sealed webhook secrets no longer open (set them again),
// nor do the arguments of approval requests still open (their pages then say so); the keyed hashes
// of outcome records and approval requests change, so a replay of a record sent before the
// rotation reads as different content (422), a session's records no longer link across it, and a
// retried approval request reads as another body. The outcome and approval hashes were derived
// another way before this module (an HMAC keyed with the label and the secret together): moving
// them here had that same one-time effect.
const LABELS = {
  /** AES-256-GCM key of endpoints' signing secrets, webhook_endpoints.secret_box (webhooks/secret.ts). */
  'webhook-secret-box': 'webhook-secret:v1', // the label the first sealed boxes used: they still open
  /** AES-256-GCM key of an approval request's masked arguments (approval_requests.arguments_sealed). */
  'approval-arguments': 'approval-arguments:v1',
  /** HMAC key of an outcome record's session id (outcome_records.session_hash). */
  'outcome-session-hash': 'outcome-session-hash:v1',
  /** HMAC key of an outcome record's content, for replays (outcome_records.content_hash). */
  'outcome-content-hash': 'outcome-content-hash:v1',
  /** HMAC key of an approval request's body, for Idempotency-Key replays (approval_requests.request_hash). */
  'approval-request-hash': 'approval-request-hash:v1',
} as const;

export type KeyPurpose = keyof typeof LABELS;
/** The purposes whose key encrypts (seal/open); every other purpose's key only hashes. */
export type SealPurpose = 'webhook-secret-box' | 'approval-arguments';
export type HashPurpose = Exclude<KeyPurpose, SealPurpose>;

export const KEY_PURPOSES = Object.keys(LABELS) as KeyPurpose[];

const SALT = 'countersign';

// Derived once per secret and purpose: the outcome hashes are taken for every record ingested.
const derived = new Map<KeyPurpose, { secret: string; key: Buffer; id: string }>();

function derive(purpose: KeyPurpose): { key: Buffer; id: string } {
  const secret = config().AUTH_SECRET;
  if (!secret)
    throw new Error(
      `AUTH_SECRET is not set: the ${purpose} key cannot be derived (generate one with: openssl rand -base64 32)`,
    );
  const known = derived.get(purpose);
  if (known?.secret === secret) return known;
  const key = Buffer.from(hkdfSync('sha256', secret, SALT, LABELS[purpose], 32));
  // A fingerprint, not the key: 48 bits of a hash of 256 random ones tell nothing about them.
  const id = createHash('sha256').update(key).digest('hex').slice(0, 12);
  const entry = { secret, key, id };
  derived.set(purpose, entry);
  return entry;
}

/** The 32-byte key for `purpose`, from AUTH_SECRET; throws naming AUTH_SECRET when it is not set. */
export function deriveKey(purpose: KeyPurpose): Buffer {
  return derive(purpose).key;
}

/** Which key a box is sealed under: a short fingerprint of the purpose's key, never the key. */
export function keyId(purpose: SealPurpose): string {
  return derive(purpose).id;
}

/** HMAC-SHA256 of `value` under the purpose's key, hex: what a database copy cannot brute-force back. */
export function keyedHash(purpose: HashPurpose, value: string): string {
  return createHmac('sha256', deriveKey(purpose)).update(value).digest('hex');
}

// A box: "v2.<key id>.<iv>.<tag>.<ciphertext>", base64url. The first webhook secrets were sealed as
// "v1.<iv>.<tag>.<ciphertext>" (base64, no key id, no associated data) and still open.
const b64 = (b: Buffer) => b.toString('base64url');

/**
 * Encrypts `plain` with AES-256-GCM under the purpose's key and a random 12-byte IV. `aad` binds the
 * box to where it is kept (an approval's id): it must be given again to open it, so a box copied to
 * another row does not open.
 */
export function seal(purpose: SealPurpose, plain: string, aad: string): string {
  const { key, id } = derive(purpose);
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv);
  c.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
  return ['v2', id, b64(iv), b64(c.getAuthTag()), b64(body)].join('.');
}

/**
 * The plain text of a box sealed by `seal` with the same purpose and `aad`. Throws, saying why, on a
 * box sealed under another key (another AUTH_SECRET or purpose), one altered or bound elsewhere.
 */
export function open(purpose: SealPurpose, box: string, aad: string): string {
  const { key, id } = derive(purpose);
  const parts = box.split('.');
  let iv: Buffer, tag: Buffer, body: Buffer;
  if (parts[0] === 'v2' && parts.length === 5) {
    if (parts[1] !== id)
      throw new Error(
        `${purpose}: sealed under key ${parts[1]}, not this server's ${id} (AUTH_SECRET changed since, or the box belongs to another purpose)`,
      );
    [iv, tag, body] = parts.slice(2).map((p) => Buffer.from(p, 'base64url'));
  } else if (parts[0] === 'v1' && parts.length === 4 && aad === '') {
    [iv, tag, body] = parts.slice(1).map((p) => Buffer.from(p, 'base64'));
  } else {
    throw new Error(`${purpose}: not a sealed box this server knows`);
  }
  const d = createDecipheriv('aes-256-gcm', key, iv);
  d.setAAD(Buffer.from(aad, 'utf8'));
  d.setAuthTag(tag);
  try {
    return Buffer.concat([d.update(body), d.final()]).toString('utf8');
  } catch {
    throw new Error(
      parts[0] === 'v1'
        ? `${purpose}: the box does not open (sealed under another AUTH_SECRET, or altered)`
        : `${purpose}: the box does not open (altered, or sealed for another record)`,
    );
  }
}
