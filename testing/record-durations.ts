// The durations of the records of a request reference, as the console stored them (never imported
// by the app): for the gateway's tests, which may not read the database themselves.
import { db } from '@/lib/server/db/db';
import type { OutcomeReporter } from '@/lib/mcp/reporter';

/** The `durationMs` of each record of `requestRef`, oldest first (after the reporter's flush). */
export async function durationsOf(requestRef: string, reporter?: OutcomeReporter): Promise<number[]> {
  await reporter?.flush();
  const rows = await db.outcomeRecord.findMany({
    where: { requestRef },
    orderBy: { occurredAt: 'asc' },
    select: { durationMs: true },
  });
  return rows.map((r) => Number(r.durationMs));
}
