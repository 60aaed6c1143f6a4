// The database's own ceiling for the same rows: `COPY outcome_records FROM STDIN` on one
// connection, into the same table. Rows are built and encoded as COPY text before the clock
// starts: what is timed is the load alone, which is what the HTTP path would approach if it
// cost nothing.
import { createHash, randomUUID } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { DEMO_TRUSTED_SERVERS } from '../../scripts/demo-outcomes';
import { classifyRecord, CLASSIFIER_VERSION } from '@/lib/outcomes/classify';
import type { Outcome } from '@/lib/outcomes/schemas';

export const CEILING_METHOD = 'COPY … FROM STDIN (text format)';

// COPY's text format: tab-separated, \N for NULL, backslash escapes for the separators.
export function copyValue(v: unknown): string {
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

// column → its value for record r numbered n
export type Column = (r: Outcome, n: number) => unknown;
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

export function columns(): Record<string, Column> {
  const trusted = (r: Outcome) => DEMO_TRUSTED_SERVERS.includes(r.server);
  const c = (r: Outcome) => classifyRecord(r, trusted(r));
  return {
    event_id: (_, n) => `ceil_${n}`,
    occurred_at: (r) => r.occurredAt,
    duration_ms: (r) => r.durationMs ?? null,
    request_ref: (r, n) => `${r.requestRef}_c${Math.floor(n / 500)}`,
    idempotency_key: (r) => r.idempotencyKey ?? null,
    attempt: (r) => r.attempt ?? null,
    organization: (r) => r.organization,
    principal: (r) => r.principal,
    agent: (r) => r.agent ?? null,
    server: (r) => r.server,
    server_version: (r) => r.serverVersion ?? null,
    protocol_version: (r) => r.protocolVersion ?? null,
    tool_name: (r) => r.tool.name,
    tool_annotations: (r) => r.tool.annotations ?? null,
    mcp_request_id: (r) => (r.mcpRequestId == null ? null : JSON.stringify(r.mcpRequestId)),
    session_hash: (r, n) => sha(`${r.sessionId}_${n}`),
    args_digest: (r) => r.argsDigest ?? null,
    summary: (r) => r.summary ?? null,
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

export type CeilingResult = { rows: number; seconds: number };

export async function runCeiling(databaseUrl: string, pool: Outcome[], rows: number): Promise<CeilingResult> {
  const cols = Object.entries(columns());
  const apiKeyId = randomUUID(); // not the bench key's: no event id can conflict with the HTTP rows
  const lines: string[] = [];
  for (let n = 0; n < rows; n++) {
    const r = pool[n % pool.length];
    lines.push([apiKeyId, ...cols.map(([, value]) => copyValue(value(r, n)))].join('\t') + '\n');
  }
  const sql = `COPY outcome_records (api_key_id, ${cols.map(([name]) => name).join(', ')}) FROM STDIN`;

  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const t0 = performance.now();
    await pipeline(Readable.from(chunked(lines, 1_000)), client.query(copyFrom(sql)));
    return { rows, seconds: (performance.now() - t0) / 1000 };
  } finally {
    await client.end();
  }
}

function* chunked(lines: string[], size: number): Generator<string> {
  for (let i = 0; i < lines.length; i += size) yield lines.slice(i, i + size).join('');
}
