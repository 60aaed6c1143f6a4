// Which errors mean the database cannot be answering now (503 with Retry-After), for the HTTP
// plumbing and data access alike; no connection here, so anything may import it.
import { errorChain } from './errors';

// SQLSTATEs (class 08 is added below; 57014: cancelled by statement_timeout), socket errors and Prisma's codes for them: P1001 cannot
// reach, P1002 timed out, P1008 socket timeout, P1017 server closed the connection, P2024 pool
// timeout, P2037 too many connections.
const unavailableCodes = new Set([
  'P1001',
  'P1002',
  'P1008',
  'P1017',
  'P2024',
  'P2037',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '57014',
]);
// What @prisma/adapter-pg calls a connection failure (DriverAdapterError's cause.kind).
const unavailableKinds = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections']);
// pg's own errors carry no code: a connection dropped mid-query, the pool's connect timeout, the
// query timeout, a client reused after its connection failed, and Prisma's wording for an
// unreachable server.
const unavailableMessages =
  /ECONNREFUSED|Connection terminated|timeout exceeded when trying to connect|Query read timeout|not queryable|Can't reach database/i;

/**
 * True when an error means the database cannot be reached or is shutting down (answer 503).
 * pg's errors say so in `code`; Prisma wraps them (PrismaClientKnownRequestError P2010/P2039 for
 * a query that failed that way), keeping the driver's error in meta.driverAdapterError, whose
 * cause holds the original SQLSTATE or the kind of connection failure.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (const { code, originalCode, kind, message } of errorChain(err)) {
    for (const c of [code, originalCode]) {
      if (typeof c === 'string' && (unavailableCodes.has(c) || c.startsWith('08'))) return true;
    }
    if (typeof kind === 'string' && unavailableKinds.has(kind)) return true;
    if (typeof message === 'string' && unavailableMessages.test(message)) return true;
  }
  return false;
}
