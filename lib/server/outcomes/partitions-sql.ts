import 'server-only';
import { sql } from '../db/kysely';

// outcome_records' time partitions (migration 20261201160000_outcome_records_partitioned holds
// the function: one implementation for the migration and the console).

/** Creates the partitions covering [from, upto) that are missing; answers their names. */
export const ensureOutcomePartitions = (from: Date, upto: Date, unit: string) => sql<{ name: string }>`
  SELECT outcome_records_ensure_partitions(${from}::timestamptz, ${upto}::timestamptz, ${unit}) AS name`;
