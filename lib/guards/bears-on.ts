// Which of a caller's records not posted yet a guard's question carries (lib/mcp/guard.ts): those
// the console could read for this call's decision (lib/server/guards/sql.ts selectGuardFacts, one
// branch each), and no others, so a busy caller's question stays small. Pure.
import type { Outcome } from '../outcomes/schemas';

/** The call asked about, as far as it picks the records that bear on it. */
export type GuardSubject = {
  organization: string;
  requestRef: string;
  principal: string;
  server: string;
  tool: { name: string };
  argsDigest: string;
  idempotencyKey?: string | null;
};

/**
 * Whether the console reads this record to decide on `call`: a record of the same request
 * reference (its calls of the server, and a permission refused on any server), or one of the same
 * principal, server and tool with the same digest or the same idempotency key.
 */
export function bearsOn(record: Outcome, call: GuardSubject): boolean {
  if (record.organization !== call.organization) return false;
  if (record.requestRef === call.requestRef) return true;
  if (record.principal !== call.principal || record.server !== call.server || record.tool.name !== call.tool.name)
    return false;
  return (
    record.argsDigest === call.argsDigest || (!!call.idempotencyKey && record.idempotencyKey === call.idempotencyKey)
  );
}
