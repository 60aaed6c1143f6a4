// @ts-check
// The Content-Security-Policy, in one place for its two users: proxy.ts, which puts a fresh
// script nonce in every page's policy, and next.config.js, which sets the nonce-less policy on
// the API's answers (they carry no scripts, and skipping the proxy there saves a good part of the
// CPU a bare API answer costs: bench:ingest's HTTP figures show it).

/**
 * Scripts only with this response's nonce (and what they load, 'strict-dynamic'), or with no nonce
 * given only the console's own script files; never 'unsafe-inline' for scripts, so markup that
 * reached a page through some record's text could not run even if escaping failed somewhere.
 * @param {string} [nonce]
 * @returns {string}
 */
export function contentSecurityPolicy(nonce) {
  return [
    "default-src 'self'",
    nonce ? `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'` : "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}
