// One database's side of bench:scale's measured phase, in a process of its own so that the console
// code it calls (whose database is DATABASE_URL, fixed per process) reads that database: the
// incident look-up and the outcome list's first page with filters, timed, and batches of ingest.
// Driven by bench/scale.ts over the IPC channel (fork): one request at a time, each answered with
// its figures, so the two sizes' work can be measured in turns.
import pg from 'pg';
import { listOutcomes } from '../../lib/server/outcomes';
import { rows as rowsOf } from '../../lib/server/db/kysely';
import { insertOutcomeRows, selectIncidentOutcomes } from '../../lib/server/outcomes/sql';
import { lockOperations } from '../../lib/server/outcomes/resolution-sql';
import { prng } from './report';

export type WorkerRequest =
  { op: 'lookUps'; records: number; samples: number; seed: number } | { op: 'ingest'; label: string; batches: number };
export type WorkerReply = { inc: number[]; lst: number[] } | { stored: number; ms: number } | { error: string };

/** The API key the loaded records carry (set by bench/scale.ts). */
const SCALE_KEY = process.env.BENCH_SCALE_KEY!;

// A key reading every organization, as support's tools do.
const reader = {
  kind: 'apiKey' as const,
  keyId: SCALE_KEY,
  name: 'bench',
  scopes: ['outcomes:read' as const],
  organization: null,
};

const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
c.on('error', () => {}); // the database dropped at the end ends the connection

/** `samples` incident look-ups of stored references and filtered first pages of the list, timed. */
async function lookUps(records: number, samples: number, seed: number) {
  const rnd = prng(seed);
  const inc: number[] = [];
  const lst: number[] = [];
  for (let i = 0; i < samples; i++) {
    const ref = `s-req-${Math.floor(rnd() * (records / 4))}`;
    const t0 = performance.now();
    await rowsOf(selectIncidentOutcomes([ref], 'org-' + (i % 10), 500), c);
    inc.push(performance.now() - t0);
    const t1 = performance.now();
    const page = await listOutcomes(reader, {
      organization: `org-${i % 10}`,
      delivery: i % 2 ? 'rejected' : 'completed',
      limit: 50,
    });
    lst.push(performance.now() - t1);
    if (!page.ok) throw new Error('listOutcomes failed');
  }
  return { inc, lst };
}

/**
 * `batches` batches of 100 new records through the real insert statement, each a transaction.
 * Their organizations and deliveries are spread as the loaded records' are: all in one
 * organization and delivery, the newest records of the large database would be many thousands
 * of one kind, which a filtered list of that organization and the other delivery must scan past
 * (auto_explain, fifteenth session: 240,215 rows filtered, 58-66 ms).
 */
async function ingest(label: string, batches: number) {
  let stored = 0;
  const t0 = performance.now();
  for (let b = 0; b < batches; b++) {
    const batch = Array.from({ length: 100 }, (_, k) => ({
      event_id: `${label}-ing-${b}-${k}`,
      occurred_at: new Date().toISOString(),
      request_ref: `${label}-ing-${b}`,
      organization: `org-${k % 10}`,
      principal: 'user_1',
      server: 'mcp-1',
      tool_name: 'tool_1',
      observed: { sent: true },
      boundary: 'none',
      delivery: k % 7 === 0 ? 'rejected' : 'completed',
      category: k % 7 === 0 ? 'forbidden' : 'ok',
      retry: 'no',
      read_only: true,
      what_happened: 'The tool answered.',
      next_step: 'Nothing to do.',
      classifier_version: 1,
      annotations_trusted: true,
      content_hash: `h-${label}-${b}-${k}`,
      ord: k,
    }));
    await c.query('BEGIN');
    stored += (await rowsOf(insertOutcomeRows(SCALE_KEY, batch, lockOperations([])), c)).length;
    await c.query('COMMIT');
  }
  return { stored, ms: performance.now() - t0 };
}

async function answer(req: WorkerRequest): Promise<WorkerReply> {
  try {
    return req.op === 'lookUps'
      ? await lookUps(req.records, req.samples, req.seed)
      : await ingest(req.label, req.batches);
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  }
}

if (process.send) {
  await c.connect();
  let queue = Promise.resolve();
  process.on('message', (req: WorkerRequest) => {
    queue = queue.then(async () => void process.send!(await answer(req)));
  });
  process.on('disconnect', () => process.exit(0));
  process.send({ ready: true });
}
