// How outcome_records is partitioned by time (docs/configuration.md). Pure: the caller passes
// the environment's value, so start-up, the schedule and the tests read it alike.

export const PARTITION_INTERVAL_ENV = 'OUTCOME_PARTITION_INTERVAL';
export const PARTITION_UNITS = ['day', 'week', 'month', 'quarter', 'year'] as const;
export type PartitionUnit = (typeof PARTITION_UNITS)[number];
export const DEFAULT_PARTITION_UNIT: PartitionUnit = 'month';

/** Unset or empty: monthly. Otherwise one of PARTITION_UNITS (UTC boundaries). */
export function parsePartitionInterval(raw: string | undefined): PartitionUnit {
  const value = raw?.trim().toLowerCase() ?? '';
  if (value === '') return DEFAULT_PARTITION_UNIT;
  if ((PARTITION_UNITS as readonly string[]).includes(value)) return value as PartitionUnit;
  throw new PartitionConfigError(
    `${PARTITION_INTERVAL_ENV} must be one of ${PARTITION_UNITS.join(', ')} (it is ${JSON.stringify(raw)}; unset means ${DEFAULT_PARTITION_UNIT})`,
  );
}

export class PartitionConfigError extends Error {
  override name = 'PartitionConfigError';
}

/** How far ahead partitions exist: about three intervals, never less than 31 days. */
export function aheadMs(unit: PartitionUnit): number {
  const DAY = 86_400_000;
  const len = { day: 1, week: 7, month: 31, quarter: 92, year: 366 }[unit] * DAY;
  return Math.max(3 * len, 31 * DAY);
}
