import 'server-only';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { deriveKey } from '../secrets';

// A standard endpoint's signing secret is needed in clear to sign (HMAC), so it is kept sealed:
// AES-256-GCM under a key derived from AUTH_SECRET (lib/server/secrets.ts, 'webhook-secret-box', the
// same key every v1 box was sealed under). A database dump alone reveals no secret.

const key = () => deriveKey('webhook-secret-box');

export function sealSecret(plain: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key(), iv);
  const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
  return ['v1', iv.toString('base64'), c.getAuthTag().toString('base64'), body.toString('base64')].join('.');
}

export function openSecret(box: string): string {
  const [v, iv, tag, body] = box.split('.');
  if (v !== 'v1' || !iv || !tag || !body) throw new Error('webhook secret: unknown seal');
  const d = createDecipheriv('aes-256-gcm', key(), Buffer.from(iv, 'base64'));
  d.setAuthTag(Buffer.from(tag, 'base64'));
  return Buffer.concat([d.update(Buffer.from(body, 'base64')), d.final()]).toString('utf8');
}
