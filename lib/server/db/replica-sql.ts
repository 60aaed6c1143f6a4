import 'server-only';
import { sql } from './kysely';

// The replica's lag (lib/server/db/replica.ts): one cheap statement on each side.

/** The primary's current write position. */
export const selectPrimaryLsn = () => sql<{ lsn: string }>`SELECT pg_current_wal_lsn()::text AS lsn`;

/**
 * On the replica: whether it is a standby, how far it has replayed, and how long ago the last
 * transaction it replayed committed on the primary (null before the first).
 */
export const selectReplayPosition = () => sql<{ standby: boolean; replayed: string | null; since_ms: number | null }>`
  SELECT pg_is_in_recovery() AS standby,
         pg_last_wal_replay_lsn()::text AS replayed,
         (extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp()) * 1000)::float8 AS since_ms`;
