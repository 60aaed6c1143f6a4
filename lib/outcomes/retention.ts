// How long outcome records are kept (docs/configuration.md). Pure: the caller passes the
// environment's value, so start-up, the CLI, the scheduler and the admin page read it alike.

export const RETENTION_ENV = 'OUTCOME_RETENTION_DAYS';
export const DEFAULT_RETENTION_DAYS = 90;
/** A hundred years: anything longer is a typo, not a policy. */
export const MAX_RETENTION_DAYS = 36_500;

export type RetentionSetting = { enabled: true; days: number } | { enabled: false };

/**
 * Unset or empty: the default. `off` keeps records forever. Otherwise a whole number of days
 * from 1. Zero is refused rather than read as "off" or as "delete everything at once": either
 * reading would surprise half the people who typed it.
 */
export function parseRetentionSetting(raw: string | undefined): RetentionSetting {
  const value = raw?.trim() ?? '';
  if (value === '') return { enabled: true, days: DEFAULT_RETENTION_DAYS };
  if (value.toLowerCase() === 'off') return { enabled: false };
  const days = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(days) || days < 1 || days > MAX_RETENTION_DAYS) {
    throw new RetentionConfigError(
      `${RETENTION_ENV} must be a whole number of days from 1 to ${MAX_RETENTION_DAYS}, or "off" to keep outcome records forever` +
        ` (it is ${JSON.stringify(raw)}; unset means ${DEFAULT_RETENTION_DAYS})`,
    );
  }
  return { enabled: true, days };
}

/** A bad OUTCOME_RETENTION_DAYS: a configuration mistake, reported at start-up and by every purge. */
export class RetentionConfigError extends Error {
  override name = 'RetentionConfigError';
}

/** The sentence admins read, e.g. "Outcome records are kept 90 days". */
export function describeRetention(setting: RetentionSetting): string {
  if (!setting.enabled) return `Outcome records are kept forever (${RETENTION_ENV}=off)`;
  return `Outcome records are kept ${setting.days} ${setting.days === 1 ? 'day' : 'days'} after they arrive`;
}
