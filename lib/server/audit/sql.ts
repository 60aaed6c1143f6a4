import 'server-only';
import { sql } from '../db/kysely';

/**
 * Appends one audit entry through the audit_append function (prisma/migrations/…_audit_append_in_sql),
 * which takes the chain's lock, reads its head and inserts the entry with its hash, in one round trip.
 */
export const appendAuditEntry = (
  entry: { actor: string; action: string; targetType: string; targetId: string },
  data: string,
  canonical: string[],
) => sql`
  SELECT audit_append(${entry.actor}, ${entry.action}, ${entry.targetType}, ${entry.targetId}, ${data}::jsonb, ${canonical}::text[])`;
