import { createHash, randomBytes } from 'node:crypto';

// Credentials are 32 random bytes: a plain SHA-256 is enough to store them (nothing to brute-force).

export const API_KEY_PREFIX = 'cs_live_';
export const PERSONAL_TOKEN_PREFIX = 'cs_pat_';

export function newSecret(prefix: string): { secret: string; hash: string; display: string } {
  const secret = prefix + randomBytes(32).toString('base64url');
  return { secret, hash: hashSecret(secret), display: secret.slice(0, prefix.length + 6) + '…' };
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
