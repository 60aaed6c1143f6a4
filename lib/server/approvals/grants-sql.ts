import 'server-only';
import type { Selectable } from 'kysely';
import { sql, type DB } from '../db/kysely';

type Grant = Selectable<DB['grants']>;

/**
 * Redeems a batch of grants in one statement through the redeem_grants function
 * (prisma/migrations/…_audit_append_in_sql): each item's row, by its index in the batch, when
 * its grant was redeemed; none for an item refused.
 */
export const redeemGrants = (itemsJson: string) => sql<
  { idx: number } & Pick<Grant, 'approval_id'> & { redeemed_at: Date }
>`
  SELECT idx, approval_id, redeemed_at FROM redeem_grants(${itemsJson}::jsonb)`;
