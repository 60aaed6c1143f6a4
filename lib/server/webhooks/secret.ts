import 'server-only';
import { open, seal } from '../secrets';

// A standard endpoint's signing secret is needed in clear to sign (HMAC), so it is kept sealed:
// AES-256-GCM under a key derived from AUTH_SECRET (lib/server/secrets.ts, 'webhook-secret-box', the
// same key every v1 box was sealed under, so those still open). A database dump alone reveals no
// secret. Bound to nothing further: the box is sealed before its endpoint has an id.

export const sealSecret = (plain: string): string => seal('webhook-secret-box', plain, '');

export const openSecret = (box: string): string => open('webhook-secret-box', box, '');
