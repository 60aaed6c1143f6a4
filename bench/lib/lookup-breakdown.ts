// Where the incident look-up's time goes, for bench/lookup.ts: the same path in this process with
// every statement timed, and EXPLAIN ANALYZE of each statement it sends and of the raw query.
import type pg from 'pg';
import { refName, type LookupPlan } from './lookup-data';
import { queryLabel, traced, type TracedQuery } from './pgtrace';
import { log } from './report';
import { pointDataLayerAt, type BenchDatabase } from './setup';

// The same look-up as lib/server/outcomes/ listIncidentOutcomes: its columns, its order, its cap.
export const RAW_SQL = `
  SELECT id, event_id, occurred_at, duration_ms, request_ref, idempotency_key, attempt, organization, principal, agent,
         server, server_version, protocol_version, tool_name, tool_annotations, mcp_request_id, grant_id, args_digest,
         summary, observed, annotations_trusted, received_at, boundary, delivery, category, retry, read_only,
         what_happened, next_step, received_seq
  FROM outcome_records WHERE request_ref = $1
  ORDER BY occurred_at, received_seq
  LIMIT 5000`;

export async function breakDownIncidentPath(
  db: BenchDatabase,
  secret: string,
  sql: pg.Client,
  plan: LookupPlan,
  warmRefs: number[],
  sample: number[],
) {
  log('breaking the incident path down in this process (same references)…');
  await pointDataLayerAt(db.url, secret);
  const { openIncident, incidentApiBody } = await import('@/lib/server/incidents');
  const key = (
    await sql.query<{ id: string; name: string }>(`SELECT id, name FROM api_keys WHERE name = 'bench-lookup'`)
  ).rows[0];
  const reader = {
    kind: 'apiKey' as const,
    keyId: key.id,
    name: key.name,
    scopes: ['outcomes:read' as const],
    organization: null,
  };
  for (const i of warmRefs) await openIncident(reader, refName(i), 'json');

  const perLabel = new Map<string, { ms: number[]; calls: number; example: TracedQuery }>();
  const dataMs: number[] = [];
  const queryMs: number[] = [];
  const jsMs: number[] = [];
  const stringifyMs: number[] = [];
  const statements: number[] = [];
  for (const i of sample) {
    const t = await traced(() => openIncident(reader, refName(i), 'json'));
    if (!t.value.ok) throw new Error(`openIncident(${refName(i)}) failed: ${t.value.failure}`);
    const s0 = performance.now();
    JSON.stringify(incidentApiBody(t.value.value));
    stringifyMs.push(performance.now() - s0);
    const inQueries = t.queries.reduce((a, q) => a + q.ms, 0);
    dataMs.push(t.ms);
    queryMs.push(inQueries);
    jsMs.push(t.ms - inQueries);
    statements.push(t.queries.length);
    const seen = new Map<string, number>();
    for (const q of t.queries) {
      const label = queryLabel(q.sql);
      seen.set(label, (seen.get(label) ?? 0) + q.ms);
      const entry = perLabel.get(label) ?? { ms: [], calls: 0, example: q };
      entry.calls++;
      perLabel.set(label, entry);
    }
    for (const [label, total] of seen) perLabel.get(label)!.ms.push(total);
  }

  // EXPLAIN ANALYZE of each statement the path sent, for the reference with the median record count
  // (inside a rolled-back transaction: the access-log insert is not kept).
  const byCount = [...sample].sort((a, b) => plan.countOf(a) - plan.countOf(b));
  const median = byCount[Math.floor(byCount.length / 2)];
  const largest = byCount[byCount.length - 1];
  const medianTrace = await traced(() => openIncident(reader, refName(median), 'json'));
  const plans: { label: string; plan: string }[] = [];
  await sql.query('BEGIN');
  for (const q of medianTrace.queries) {
    const label = queryLabel(q.sql);
    if (['BEGIN', 'COMMIT', 'ROLLBACK'].includes(label)) continue;
    const res = await sql.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${q.sql}`, q.values as unknown[]);
    plans.push({ label, plan: res.rows.map((r) => r['QUERY PLAN']).join('\n') });
  }
  const rawPlan = (
    await sql.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${RAW_SQL}`, [refName(median)])
  ).rows
    .map((r) => r['QUERY PLAN'])
    .join('\n');
  const largestPlan = (
    await sql.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${RAW_SQL}`, [refName(largest)])
  ).rows
    .map((r) => r['QUERY PLAN'])
    .join('\n');
  await sql.query('ROLLBACK');
  return { perLabel, dataMs, queryMs, jsMs, stringifyMs, statements, median, largest, plans, rawPlan, largestPlan };
}
