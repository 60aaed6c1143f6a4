import 'server-only';
import type { Selectable } from 'kysely';
import { sql, type DB } from './kysely';

// The overview's counts (lib/server/data/outcome-stats.ts), computed in PostgreSQL over the
// occurred_at index. Counts are int8, which pg answers as text.

type Classified = Pick<Selectable<DB['outcome_records']>, 'delivery' | 'category' | 'read_only'>;

/** Per delivery, category and read-only: the records of the last 24 hours and of the last 7 days. */
// `unresolved`: unknowns nothing has settled yet (DESIGN.md "Resolving an unknown"), the ones the
// overview counts as unknown writes.
export const selectOverviewGroups = () => sql<Classified & { d1: string; d7: string; unresolved: boolean }>`
  SELECT delivery, category, read_only, (delivery = 'unknown' AND resolved_at IS NULL) AS unresolved,
         count(*) FILTER (WHERE occurred_at >= now() - interval '24 hours') AS d1,
         count(*) AS d7
  FROM outcome_records
  WHERE occurred_at >= now() - interval '7 days' AND occurred_at <= now() + interval '1 hour'
  GROUP BY 1, 2, 3, 4`;

/** Per bucket of `hours` and delivery: the records of the last 7 days. */
export const selectOverviewBuckets = (hours: number) => sql<Pick<Classified, 'delivery'> & { bucket: Date; n: string }>`
  SELECT date_bin(make_interval(hours => ${hours}), occurred_at, timestamptz '2000-01-01 00:00:00+00') AS bucket, delivery, count(*) AS n
  FROM outcome_records
  WHERE occurred_at >= now() - interval '7 days' AND occurred_at <= now() + interval '1 hour'
  GROUP BY 1, 2`;
