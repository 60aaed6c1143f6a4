// Per-statement timings of traced calls, and their plans (EXPLAIN ANALYZE, rolled back).
import pg from 'pg';
import { queryLabel, type TracedQuery } from './pgtrace';
import { stats } from './report';

/** Per statement label: p50 of its time per call, and how often it runs per traced call. */
export function breakdown(runs: TracedQuery[][]): { label: string; perCall: number; p50: number; p95: number }[] {
  const by = new Map<string, number[]>();
  for (const run of runs) for (const q of run) by.set(queryLabel(q.sql), [...(by.get(queryLabel(q.sql)) ?? []), q.ms]);
  return [...by].map(([label, xs]) => ({
    label,
    perCall: xs.length / runs.length,
    p50: stats(xs).p50,
    p95: stats(xs).p95,
  }));
}

export async function explainAll(client: pg.Client, queries: TracedQuery[]): Promise<string[]> {
  const out: string[] = [];
  await client.query('BEGIN');
  try {
    for (const q of queries) {
      const label = queryLabel(q.sql);
      if (['BEGIN', 'COMMIT', 'ROLLBACK'].includes(label)) continue;
      // Replayed after the fact: a statement whose effect is already there (the audit entry's
      // sequence number) cannot run again; it is named, not explained.
      await client.query('SAVEPOINT explain');
      const res = await client
        .query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${q.sql}`, q.values)
        .catch((err: Error) => err);
      if (res instanceof Error) {
        await client.query('ROLLBACK TO SAVEPOINT explain');
        out.push(`  ${label.padEnd(40)} ${'–'.padStart(10)}   (not replayable afterwards: ${res.message})`);
        continue;
      }
      const plan = res.rows.map((r) => r['QUERY PLAN']);
      const exec = plan.find((l) => l.startsWith('Execution Time'))?.replace('Execution Time: ', '') ?? '?';
      const top = plan[0].replace(/\s*\(cost=[^)]*\)/, '').trim();
      out.push(`  ${label.padEnd(40)} ${exec.padStart(10)}   ${top}`);
    }
  } finally {
    await client.query('ROLLBACK');
  }
  return out;
}
