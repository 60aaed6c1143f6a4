// A large, realistic outcome_records table for the incident look-up benchmark, loaded with COPY.
//
// Each request reference is one agent run: a demo story (bench/lib/records.ts, every row of the
// classification table) repeated as often as the reference has records, under one organization,
// principal and session, spread over the last 30 days. Classification comes from the shared
// classifier through ceiling.ts's column builders; a fifth of the references run against regional,
// untrusted copies of the servers (`billing-mcp-eu`…), which the classifier then treats as writes.
// Free text is masked as ingestion masks it. Rows are written in time order, so the records of one
// reference are interleaved with everyone else's and spread over many heap pages, as live ingestion
// leaves them.
//
// For load speed the secondary indexes (and the primary key) are dropped before COPY and
// rebuilt after it from their own definitions, which leaves the same schema (a freshly built
// B-tree is a little denser than a grown one). Then VACUUM ANALYZE and a CHECKPOINT, so neither
// autovacuum nor a checkpoint lands in the middle of the measurement.
import { createHash, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { maskText } from '@/lib/redaction/mask';
import type { Outcome } from '@/lib/outcomes/schemas';
import { columns, copyValue } from './ceiling';
import { recordPool } from './records';
import { prng } from './report';

const DAY = 86_400_000;
const SPAN_MS = 30 * DAY;
const MAX_PER_REF = 200;
const ORGS = 60;
const PRINCIPALS = 25_000;

// Written per row; every other column is fixed per (story step, trusted or regional server).
const VARYING = [
  'event_id',
  'occurred_at',
  'request_ref',
  'idempotency_key',
  'organization',
  'principal',
  'session_hash',
  'content_hash',
] as const;

type Step = { offsetMs: number; idempotencyKey: string | null; fixed: [string, string] };
type Template = { steps: Step[]; spanMs: number };

/** The reference name of reference number i: unique, not in time order, `req_` + hex like the API's examples. */
export function refName(i: number): string {
  let h = Math.imul(i ^ 0x5bd1e995, 0x9e3779b1) >>> 0;
  h = Math.imul(h ^ (h >>> 15), 0x85ebca6b) >>> 0;
  return `req_${h.toString(16).padStart(8, '0')}${i.toString(36)}`;
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const mask = (s: string | null | undefined) => (s ? maskText(s).text : undefined);

function templates(): { list: Template[]; fixedColumns: string[] } {
  const builders = columns();
  const fixedColumns = Object.keys(builders).filter((c) => !(VARYING as readonly string[]).includes(c));
  const fixedLine = (r: Outcome) => fixedColumns.map((c) => copyValue(builders[c](r, 0))).join('\t');
  const byRef = new Map<string, Outcome[]>();
  for (const r of recordPool()) byRef.set(r.requestRef, [...(byRef.get(r.requestRef) ?? []), r]);
  const list = [...byRef.values()].map((records): Template => {
    const first = Date.parse(records[0].occurredAt);
    const steps = records.map((raw): Step => {
      // As ingestion stores them: free text masked.
      const r: Outcome = { ...raw, summary: mask(raw.summary), agent: mask(raw.agent) };
      const regional: Outcome = { ...r, server: `${r.server}-eu` }; // untrusted: classified as such
      return {
        offsetMs: Date.parse(r.occurredAt) - first,
        idempotencyKey: r.idempotencyKey ?? null,
        fixed: [fixedLine(r), fixedLine(regional)],
      };
    });
    return { steps, spanMs: steps[steps.length - 1].offsetMs };
  });
  return { list, fixedColumns };
}

export type LookupPlan = { records: number; refs: number; countOf: (ref: number) => number };

export type LoadTimings = {
  generateAndCopy: number;
  indexes: number;
  approvals: number;
  vacuum: number;
  tableBytes: number;
  indexBytes: number;
  approvalRequests: number;
};

/**
 * Loads `records` outcome records over `refs` request references (numbered 0…refs-1, named by
 * refName) into the database, plus an approval request for one reference in fifty. Returns how
 * many records each reference got, and how long each step took.
 */
export async function loadLookupData(
  databaseUrl: string,
  opts: { records: number; refs: number; progress?: (s: string) => void },
): Promise<{ plan: LookupPlan; timings: LoadTimings }> {
  const { records: total, refs } = opts;
  if (refs < 1 || total < refs)
    throw new Error('BENCH_LOOKUP_RECORDS must be at least BENCH_LOOKUP_REFS (each reference gets one record or more)');
  if (total >= 2 ** 24) throw new Error('at most 16,777,215 records');
  const say = opts.progress ?? (() => {});
  const random = prng(20261130);
  const { list, fixedColumns } = templates();

  // Records per reference: long-tailed (most runs are short, a few retry storms are long), mean total/refs.
  const mean = total / refs;
  const count = new Uint16Array(refs);
  let sum = 0;
  for (let i = 0; i < refs; i++) {
    count[i] = Math.min(MAX_PER_REF, 1 + Math.floor(-Math.log(1 - random()) * (mean - 1)));
    sum += count[i];
  }
  while (sum !== total) {
    const i = Math.floor(random() * refs);
    if (sum < total && count[i] < MAX_PER_REF) {
      count[i]++;
      sum++;
    } else if (sum > total && count[i] > 1) {
      count[i]--;
      sum--;
    }
  }

  // Per reference: its story, start, gap between repeats, server variant, organization, principal.
  const now = Date.now();
  const start = new Float64Array(refs);
  const template = new Uint16Array(refs);
  const gapMs = new Uint32Array(refs);
  const regional = new Uint8Array(refs);
  const org = new Uint16Array(refs);
  const principal = new Uint16Array(refs);
  for (let i = 0; i < refs; i++) {
    start[i] = now - SPAN_MS - 2 * 3_600_000 + random() * SPAN_MS;
    template[i] = Math.floor(random() * list.length);
    gapMs[i] = 5_000 + Math.floor(random() * 115_000);
    regional[i] = random() < 0.2 ? 1 : 0;
    org[i] = Math.floor(random() ** 2 * ORGS); // a few big organizations
    principal[i] = Math.floor(random() * PRINCIPALS);
  }
  const atOf = (i: number, step: number) => {
    const t = list[template[i]];
    return (
      start[i] + Math.floor(step / t.steps.length) * (t.spanMs + gapMs[i]) + t.steps[step % t.steps.length].offsetMs
    );
  };
  // A long run ends before now: nothing is recorded in the future.
  for (let i = 0; i < refs; i++) {
    const overshoot = atOf(i, count[i] - 1) - (now - 60_000);
    if (overshoot > 0) start[i] -= overshoot;
  }

  // Time order: sort (second since the oldest start, record number) packed into one double.
  const refOf = new Uint32Array(total);
  const stepOf = new Uint16Array(total);
  const keys = new Float64Array(total);
  let base = Infinity;
  for (let i = 0; i < refs; i++) base = Math.min(base, start[i]);
  for (let i = 0, n = 0; i < refs; i++) {
    for (let s = 0; s < count[i]; s++, n++) {
      refOf[n] = i;
      stepOf[n] = s;
      keys[n] = Math.floor((atOf(i, s) - base) / 1000) * 2 ** 24 + n;
    }
  }
  keys.sort();

  const apiKeyId = randomUUID();
  const columnList = ['api_key_id', ...VARYING, ...fixedColumns].join(', ');
  function* lines(): Generator<string> {
    const chunk: string[] = [];
    for (let k = 0; k < total; k++) {
      const n = keys[k] % 2 ** 24;
      const i = refOf[n];
      const s = stepOf[n];
      const t = list[template[i]];
      const step = t.steps[s % t.steps.length];
      const ref = refName(i);
      const key = step.idempotencyKey ? `${step.idempotencyKey}_${ref}_${Math.floor(s / t.steps.length)}` : '\\N';
      chunk.push(
        `${apiKeyId}\tlk_${k}\t${new Date(atOf(i, s)).toISOString()}\t${ref}\t${key}\torg-${org[i]}\tuser_${principal[i]}\t${sha(`sess_${ref}`)}\t${sha(`lk_${k}`)}\t${step.fixed[regional[i]]}\n`,
      );
      if (chunk.length === 2_000) {
        yield chunk.join('');
        chunk.length = 0;
        if (k % 500_000 < 2_000) say(`  COPY ${Math.round((k / total) * 100)}%`);
      }
    }
    if (chunk.length) yield chunk.join('');
  }

  const client = new pg.Client({ connectionString: databaseUrl });
  client.on('error', () => {}); // an interrupted run drops the database under it
  await client.connect();
  const timings: LoadTimings = {
    generateAndCopy: 0,
    indexes: 0,
    approvals: 0,
    vacuum: 0,
    tableBytes: 0,
    indexBytes: 0,
    approvalRequests: 0,
  };
  try {
    const idx = await client.query<{ name: string; def: string }>(
      `SELECT indexname AS name, indexdef AS def FROM pg_indexes
       WHERE schemaname = current_schema() AND tablename = 'outcome_records' AND indexname <> 'outcome_records_pkey'`,
    );
    const pk = await client.query<{ name: string; def: string }>(
      `SELECT conname AS name, pg_get_constraintdef(oid) AS def FROM pg_constraint
       WHERE conrelid = 'outcome_records'::regclass AND contype = 'p'`,
    );
    for (const i of idx.rows) await client.query(`DROP INDEX "${i.name}"`);
    for (const c of pk.rows) await client.query(`ALTER TABLE outcome_records DROP CONSTRAINT "${c.name}"`);

    let t0 = performance.now();
    await pipeline(Readable.from(lines()), client.query(copyFrom(`COPY outcome_records (${columnList}) FROM STDIN`)));
    timings.generateAndCopy = (performance.now() - t0) / 1000;

    say(`  rebuilding ${pk.rows.length + idx.rows.length} indexes…`);
    t0 = performance.now();
    await client.query(`SET maintenance_work_mem = '512MB'`);
    for (const c of pk.rows) await client.query(`ALTER TABLE outcome_records ADD CONSTRAINT "${c.name}" ${c.def}`);
    // On the partitioned table pg_indexes says `ON ONLY` (the parent alone): build them on every partition.
    for (const i of idx.rows) await client.query(i.def.replace(' ON ONLY ', ' ON '));
    timings.indexes = (performance.now() - t0) / 1000;

    t0 = performance.now();
    timings.approvalRequests = await loadApprovals(client, refs, (i) => start[i]);
    timings.approvals = (performance.now() - t0) / 1000;

    say('  VACUUM ANALYZE, CHECKPOINT…');
    t0 = performance.now();
    await client.query('VACUUM (ANALYZE) outcome_records');
    await client.query('VACUUM (ANALYZE) approval_requests');
    await client.query('VACUUM (ANALYZE) grants');
    await client.query('CHECKPOINT').catch(() => {}); // needs superuser or pg_checkpoint: best effort
    timings.vacuum = (performance.now() - t0) / 1000;
    const size = await client.query<{ t: string; i: string }>(
      `SELECT sum(pg_table_size(relid))::bigint AS t, sum(pg_indexes_size(relid))::bigint AS i
       FROM pg_partition_tree('outcome_records')`,
    );
    timings.tableBytes = Number(size.rows[0].t);
    timings.indexBytes = Number(size.rows[0].i);
  } finally {
    await client.end();
  }
  return { plan: { records: total, refs, countOf: (i) => count[i] }, timings };
}

/**
 * One reference in fifty also staged a write for approval when it started: alternately approved
 * at once (no approval required) with a grant that lapsed unused, and one that waited and expired.
 * Valid under the approval triggers: born pending or approved-with-zero-required, then moved.
 */
async function loadApprovals(client: pg.Client, refs: number, startOf: (i: number) => number): Promise<number> {
  const chosen: string[] = [];
  const created: string[] = [];
  for (let i = 0; i < refs; i += 50) {
    chosen.push(refName(i));
    created.push(new Date(startOf(i)).toISOString());
  }
  if (!chosen.length) return 0;
  const keyId = randomUUID();
  await client.query('BEGIN');
  await client.query(
    `INSERT INTO approval_requests (request_ref, organization, principal, agent, server, tool_name, tool_annotations,
       annotations_trusted, args_digest, summary, resource_type, resource_id, required_approvals, status, expires_at,
       grant_ttl_seconds, requested_by_key_id, idempotency_key, request_hash, created_at, decided_at)
     SELECT ref, 'org-' || (n % 60), 'user_' || (n * 7 % 25000), 'support-bot', 'billing-mcp', 'refund_payment',
       '{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":false,"openWorldHint":true}'::jsonb, true,
       'sha256:' || encode(sha256(convert_to(ref, 'UTF8')), 'hex'), 'Refund ' || (n % 500) || '.00 EUR on order ' || n,
       'order', n::text, CASE WHEN n % 2 = 0 THEN 0 ELSE 1 END, CASE WHEN n % 2 = 0 THEN 'approved' ELSE 'pending' END::approval_status,
       at + interval '1 hour', 900, $3::uuid, 'lookup-' || n, encode(sha256(convert_to('h' || ref, 'UTF8')), 'hex'),
       at, CASE WHEN n % 2 = 0 THEN at END
     FROM unnest($1::text[], $2::timestamptz[]) WITH ORDINALITY AS u(ref, at, n)`,
    [chosen, created, keyId],
  );
  await client.query(
    `INSERT INTO grants (approval_id, server, tool_name, args_digest, issued_at, expires_at)
     SELECT id, server, tool_name, args_digest, created_at, created_at + make_interval(secs => grant_ttl_seconds)
     FROM approval_requests WHERE requested_by_key_id = $1::uuid AND status = 'approved'`,
    [keyId],
  );
  await client.query(
    `UPDATE approval_requests SET status = 'expired', version = version + 1
     WHERE requested_by_key_id = $1::uuid AND status = 'pending' AND expires_at <= now()`,
    [keyId],
  );
  await client.query('COMMIT');
  return chosen.length;
}
