// Formatting shared by the benchmark reports: aligned tables, milliseconds, counts, percentiles.
import os from 'node:os';
import { percentile } from './load';

export const log = (s: string) => console.log(`[bench] ${s}`);

/** A positive whole number from the environment, or the default. */
export function envNumber(name: string, fallback: number): number {
  const v = Math.floor(Number(process.env[name] || fallback));
  if (!(v > 0)) throw new Error(`${name} must be a positive number`);
  return v;
}
export const int = (n: number) => Math.round(n).toLocaleString('en-US');
export const ms = (n: number) => (Number.isNaN(n) ? '–' : `${n.toFixed(n < 10 ? 2 : n < 100 ? 1 : 0)} ms`);
export const load1 = () => os.loadavg()[0].toFixed(2);
export const verdict = (ok: boolean) => (ok ? 'PASS' : 'MISS');

export function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map(
      (r) =>
        '  ' +
        r
          .map((cell, i) => cell.padEnd(widths[i]))
          .join('   ')
          .trimEnd(),
    )
    .join('\n');
}

export type Stats = { n: number; p50: number; p95: number; p99: number; mean: number; max: number };

export function stats(values: number[]): Stats {
  return {
    n: values.length,
    p50: percentile(values, 50),
    p95: percentile(values, 95),
    p99: percentile(values, 99),
    mean: values.length ? values.reduce((a, b) => a + b, 0) / values.length : NaN,
    max: values.length ? Math.max(...values) : NaN,
  };
}

export function machine(pgVersion: string): string {
  return `${os.availableParallelism()} CPUs (${os.cpus()[0]?.model.trim() ?? '?'}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, PostgreSQL ${pgVersion}`;
}

/** Parses a Server-Timing header into its total duration in ms (sum of `dur=`), or null when absent. */
export function serverTimingMs(header: string | null): number | null {
  if (!header) return null;
  const durations = [...header.matchAll(/dur=([\d.]+)/g)].map((m) => Number(m[1]));
  return durations.length ? durations.reduce((a, b) => a + b, 0) : null;
}

/** A small deterministic generator (same data on every run and machine). */
export function prng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    // xorshift32
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 0x1_0000_0000;
  };
}

/** Runs `fn` after installing signal handlers that run `cleanup` and exit; exits with its code. */
export function runMain(main: () => Promise<number>, cleanup: () => Promise<void>): void {
  let interrupted = false;
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      if (interrupted) return;
      interrupted = true;
      console.error(`\n[bench] ${sig}: cleaning up…`);
      void cleanup().finally(() => process.exit(130));
    });
  }
  main().then(
    async (code) => {
      await cleanup();
      process.exit(code);
    },
    async (err) => {
      console.error('[bench]', err instanceof Error ? (err.stack ?? err.message) : err);
      await cleanup();
      process.exit(1);
    },
  );
}
