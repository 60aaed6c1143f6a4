// What every benchmark shares: its options (command-line flags, with a --short mode), the
// statistics, and the report: each figure beside its ceiling from the same run, PASS or MISS
// against its target, printed and written as JSON to bench/results/<name>.json (git-ignored).
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const log = (s: string) => console.log(`[bench] ${s}`);

/**
 * The benchmark's flags: each number as `--name N` (its full-run default, or its short-run one
 * under --short), each string as `--name value`; --worker marks a child process (bench/lib/worker.ts).
 */
export function readFlags<N extends Record<string, [full: number, short: number]>, S extends string = never>(
  numbers: N,
  strings: readonly S[] = [],
) {
  const names = [...Object.keys(numbers), ...strings, 'database-url'];
  const { values } = parseArgs({
    options: {
      short: { type: 'boolean' },
      worker: { type: 'boolean' },
      ...Object.fromEntries(names.map((n) => [n, { type: 'string' as const }])),
    },
  });
  const read = (k: string) => values[k as keyof typeof values] as string | undefined;
  const out = {} as { [K in keyof N]: number };
  for (const [k, [full, short]] of Object.entries(numbers)) {
    const v = Number(read(k) ?? (values.short ? short : full));
    if (!(v > 0)) throw new Error(`--${k} must be a positive number`);
    out[k as keyof N] = v;
  }
  const text = Object.fromEntries(strings.map((s) => [s, read(s)])) as { [K in S]: string | undefined };
  return { ...out, ...text, short: !!values.short, worker: !!values.worker, databaseUrl: read('database-url') };
}

/** Nearest-rank percentile; NaN when there are no values. */
export function percentile(values: number[], p: number): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
export const p = (values: number[]) => ({
  p50: percentile(values, 50),
  p95: percentile(values, 95),
  p99: percentile(values, 99),
  n: values.length,
});

/** A small deterministic generator: the same samples on every run. */
export function prng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 0x1_0000_0000;
  };
}

export const int = (n: number) => Math.round(n).toLocaleString('en-US');
export function fmt(value: number, unit: string): string {
  if (Number.isNaN(value)) return '–';
  if (unit === 'ms') return `${Math.abs(value) < 100 ? value.toFixed(Math.abs(value) < 10 ? 2 : 1) : int(value)} ms`;
  if (unit === '×') return `${value.toFixed(2)}×`;
  if (unit === 'MB') return `${value.toFixed(1)} MB`;
  return `${int(value)}${unit ? ` ${unit}` : ''}`;
}

export type Figure = {
  name: string;
  value: number;
  unit: string;
  /** Printed beside the value: what it was computed from. */
  note?: string;
  /** What the same work costs without the product in the way, measured in the same run. */
  ceiling?: { name: string; value: number; unit: string };
  target?: { op: '≤' | '≥'; value: number; unit: string };
};

const passes = (f: Figure) =>
  !f.target || (f.target.op === '≤' ? f.value <= f.target.value : f.value >= f.target.value);
export const verdict = (f: Figure) => (f.target ? (passes(f) ? 'PASS' : 'MISS') : '');

export function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map(
      (r) =>
        '  ' +
        r
          .map((c, i) => c.padEnd(widths[i]))
          .join('   ')
          .trimEnd(),
    )
    .join('\n');
}

export const machine = (pgVersion?: string) =>
  `${os.availableParallelism()} CPUs, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}` +
  (pgVersion ? `, PostgreSQL ${pgVersion}` : '');

/** Prints the figures and writes bench/results/<name>.json; `setting` says what was run. */
export function report(
  name: string,
  pgVersion: string | undefined,
  options: Record<string, unknown>,
  figures: Figure[],
): void {
  const { worker: _worker, databaseUrl: _databaseUrl, ...setting } = options;
  const rows = figures.map((f) => [
    f.name,
    fmt(f.value, f.unit) + (f.note ? ` (${f.note})` : ''),
    f.ceiling ? `${f.ceiling.name}: ${fmt(f.ceiling.value, f.ceiling.unit)}` : '',
    f.target ? `${f.target.op} ${fmt(f.target.value, f.target.unit)}` : '',
    verdict(f),
  ]);
  console.log(`\nbench:${name} — ${machine(pgVersion)}\n  ${JSON.stringify(setting)}\n`);
  console.log(table([['figure', 'measured', 'ceiling (same run)', 'target', ''], ...rows]));
  const dir = path.join(root, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.json`);
  const out = figures.map((f) => ({ ...f, verdict: verdict(f) || null }));
  const json = {
    bench: name,
    measuredAt: new Date().toISOString(),
    machine: machine(pgVersion),
    setting,
    figures: out,
  };
  writeFileSync(file, JSON.stringify(json, null, 2) + '\n');
  log(`written to ${path.relative(root, file)}`);
}
