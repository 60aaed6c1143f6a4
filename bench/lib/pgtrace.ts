// What the data layer sends to PostgreSQL, timed per statement: wraps pg's Client#query (the
// driver under @prisma/adapter-pg) while a `traced` call runs in this process. For diagnosis
// only: the app under test runs in its own process and is never instrumented.
import pg from 'pg';

/** `start` is ms since the traced call began; `ms` from sending to the answer. */
export type TracedQuery = { sql: string; values: unknown[]; start: number; ms: number; rows: number | null };

let active: TracedQuery[] | null = null;
let origin = 0;
let installed = false;

type QueryConfig = { text?: string; values?: unknown[]; submit?: unknown };

function install(): void {
  if (installed) return;
  installed = true;
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const sink = active;
    const first = args[0] as QueryConfig | string | undefined;
    // Submittables (COPY streams, cursors) and untraced periods pass straight through.
    if (!sink || (typeof first === 'object' && first && typeof first.submit === 'function'))
      return original.apply(this, args);
    const sql = typeof first === 'string' ? first : (first?.text ?? '');
    const values =
      (typeof first === 'object' && first?.values) || (Array.isArray(args[1]) ? (args[1] as unknown[]) : []);
    const t0 = performance.now();
    const entry: TracedQuery = { sql, values, start: t0 - origin, ms: 0, rows: null };
    const done = (res?: unknown) => {
      entry.ms = performance.now() - t0;
      entry.rows = (res as { rowCount?: number | null } | undefined)?.rowCount ?? null;
      sink.push(entry);
    };
    const cb = args.findIndex((a) => typeof a === 'function');
    if (cb >= 0) {
      const callback = args[cb] as (err: unknown, res: unknown) => void;
      args[cb] = (err: unknown, res: unknown) => {
        done(res);
        callback(err, res);
      };
      return original.apply(this, args);
    }
    return (original.apply(this, args) as Promise<unknown>).then(
      (res) => {
        done(res);
        return res;
      },
      (err: unknown) => {
        done();
        throw err;
      },
    );
  };
}

/** Runs `fn` and returns what it sent to the database, one entry per statement, in order. */
export async function traced<T>(fn: () => Promise<T>): Promise<{ value: T; queries: TracedQuery[]; ms: number }> {
  install();
  if (active) throw new Error('traced() calls must not overlap');
  const queries: TracedQuery[] = [];
  active = queries;
  const t0 = performance.now();
  origin = t0;
  try {
    const value = await fn();
    return { value, queries, ms: performance.now() - t0 };
  } finally {
    active = null;
  }
}

/** A short name for a statement: its verb and first table, e.g. `SELECT outcome_records`. */
export function queryLabel(sql: string): string {
  let text = sql.trim().replace(/\s+/g, ' ');
  // Top level only: drop parenthesised sub-queries (a FROM inside one is not the statement's table).
  for (let prev = ''; prev !== text;) {
    prev = text;
    text = text.replace(/\([^()]*\)/g, '');
  }
  const verb = /^(\w+)/.exec(text)?.[1]?.toUpperCase() ?? '?';
  if (['BEGIN', 'COMMIT', 'ROLLBACK'].includes(verb)) return verb;
  const tableIn = (t: string) => /\b(?:FROM|INTO|UPDATE)\s+(?:"?public"?\.)?"?(\w+)"?/i.exec(t)?.[1];
  let table = tableIn(text);
  // FROM (sub-query) AS x: the table is inside.
  if (!table || /^AS$/i.test(table)) table = tableIn(sql.replace(/\s+/g, ' '));
  if (verb === 'SELECT' && /pg_advisory_xact_lock/i.test(text)) return 'SELECT pg_advisory_xact_lock';
  if (verb === 'SELECT' && /^SELECT COUNT\(/i.test(sql.trim()) && table) return `SELECT count(*) ${table}`;
  if (verb === 'SELECT' && !table) return `SELECT ${text.slice(7, 50)}`;
  return `${verb} ${table ?? text.slice(verb.length + 1, 40)}`;
}
