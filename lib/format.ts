const dateTime = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'medium', timeZone: 'UTC' });

/** Dates are shown in UTC everywhere, so people comparing notes across time zones agree. */
export function formatDate(d: Date | string | null | undefined): string {
  return d ? `${dateTime.format(new Date(d))} UTC` : '—';
}
