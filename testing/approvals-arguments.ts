// The arguments an approval request in the tests carries unless a test sends others, and their
// digest, written out by hand: `sha256:` + the hex SHA-256 of their canonical JSON (RFC 8785, keys
// sorted), {"amount":"40.00","currency":"EUR","order_id":"4411"}, as `sha256sum` gives it. Pure, so
// the browser tests may import it too.
import { createHash } from 'node:crypto';

export const ARGUMENTS = { order_id: '4411', amount: '40.00', currency: 'EUR' };
export const ARGUMENTS_DIGEST = 'sha256:c14a2d971e37fed9301f3b251d14abd8c8c7a2d12ba07c4915dca7c6a62fbb7a';

/** Other arguments for the same call (a hundred times the amount), and their digest, the same way. */
export const OTHER_ARGUMENTS = { order_id: '4411', amount: '4000.00', currency: 'EUR' };
export const OTHER_ARGUMENTS_DIGEST = 'sha256:f5617493763475e75da6e5a98572f31220c32f816e73492827b5312f987e3cf7';

/**
 * `sha256:` + the hex SHA-256 of a canonical JSON text the test wrote out itself: the digest an
 * agent would send, computed without the console's code.
 */
export const digestOfCanonical = (canonical: string) =>
  `sha256:${createHash('sha256').update(canonical, 'utf8').digest('hex')}`;
