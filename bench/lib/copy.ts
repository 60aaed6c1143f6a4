// Ingest's ceiling: what the database alone takes of the same rows, `COPY outcome_records FROM
// STDIN` on one connection into the same table, classified by the shared classifier. The rows are
// built and encoded before the clock starts: what is timed is the load alone, which is what the
// HTTP path would approach if it cost nothing.
import { createHash, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { classifyRecord, CLASSIFIER_VERSION } from '@/lib/outcomes/classify';
import type { Outcome } from '@/lib/outcomes/schemas';
import { DEMO_TRUSTED_SERVERS } from '../../scripts/demo-outcomes';

// COPY's text format: tab-separated, \N for NULL, backslash escapes for the separators.
function copyValue(v: unknown): string {
  if (v === null || v === undefined) return '\\N';
  const text =
    v instanceof Date
      ? v.toISOString()
      : typeof v === 'object'
        ? JSON.stringify(v)
        : typeof v === 'boolean'
          ? v
            ? 't'
            : 'f'
          : String(v);
  return text.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r');
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/** Each column of outcome_records, for record r numbered n. */
function columns(): Record<string, (r: Outcome, n: number) => unknown> {
  const trusted = (r: Outcome) => DEMO_TRUSTED_SERVERS.includes(r.server);
  const c = (r: Outcome) => classifyRecord(r, trusted(r));
  return {
    event_id: (_, n) => `ceil_${n}`,
    occurred_at: (r) => r.occurredAt,
    duration_ms: (r) => r.durationMs,
    request_ref: (r, n) => `${r.requestRef}_c${Math.floor(n / 500)}`,
    idempotency_key: (r) => r.idempotencyKey,
    attempt: (r) => r.attempt,
    organization: (r) => r.organization,
    principal: (r) => r.principal,
    agent: (r) => r.agent,
    server: (r) => r.server,
    server_version: (r) => r.serverVersion,
    protocol_version: (r) => r.protocolVersion,
    tool_name: (r) => r.tool.name,
    tool_annotations: (r) => r.tool.annotations,
    mcp_request_id: (r) => (r.mcpRequestId == null ? null : JSON.stringify(r.mcpRequestId)),
    session_hash: (r, n) => sha(`${r.sessionId}_${n}`),
    args_digest: (r) => r.argsDigest,
    summary: (r) => r.summary,
    observed: (r) => r.observed,
    boundary: (r) => c(r).boundary,
    delivery: (r) => c(r).delivery,
    category: (r) => c(r).category,
    retry: (r) => c(r).retry,
    read_only: (r) => c(r).readOnly,
    what_happened: (r) => c(r).whatHappened,
    next_step: (r) => c(r).nextStep,
    classifier_version: () => CLASSIFIER_VERSION,
    annotations_trusted: (r) => trusted(r),
    content_hash: (r, n) => sha(`${JSON.stringify(r)}_${n}`),
  };
}

/** Loads `rows` rows made from `pool` with COPY; answers rows per second. */
export async function copyCeiling(databaseUrl: string, pool: Outcome[], rows: number): Promise<number> {
  const cols = Object.entries(columns());
  const apiKeyId = randomUUID(); // no event id of the HTTP rows can conflict
  const chunks: string[] = [];
  for (let n = 0; n < rows; n += 1_000) {
    const lines: string[] = [];
    for (let k = n; k < Math.min(rows, n + 1_000); k++)
      lines.push([apiKeyId, ...cols.map(([, value]) => copyValue(value(pool[k % pool.length], k)))].join('\t') + '\n');
    chunks.push(lines.join(''));
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const sql = `COPY outcome_records (api_key_id, ${cols.map(([name]) => name).join(', ')}) FROM STDIN`;
    const t0 = performance.now();
    await pipeline(Readable.from(chunks), client.query(copyFrom(sql)));
    return rows / ((performance.now() - t0) / 1000);
  } finally {
    await client.end();
  }
}
