// Keeps files' pages in memory for a measured phase, by holding them mapped in a helper process
// (hold-pages.py): these machines' kernel pages out file cache that no process maps once it has
// gone untouched for about a minute (bench/lib/io.ts, damonPagedOut), so a table read into the
// page cache before a phase is partly back on disk by the time the phase reads it, and more so
// the larger the table. Mapped pages stay as on a kernel without that scheme.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'hold-pages.py');

export type Held = { bytes: number; files: number; pid: number; release: () => Promise<void> };

/** Maps `files` (whole, read-only) in a helper until `release`; paths that do not exist are skipped. */
export async function holdPages(files: string[]): Promise<Held> {
  if (files.some((f) => f.includes('\n') || !f)) throw new Error('holdPages: a path is empty or holds a line break');
  const child = spawn('python3', [script], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = once(child, 'exit');
  child.stdin.on('error', () => {}); // python3 missing or gone: told by 'error' or 'exit' below
  child.stdin.write(files.map((f) => `${f}\n`).join('') + '\n');
  let out = '';
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(out.split('\n')[0]);
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`hold-pages.py exited (${code}) before holding: ${out}`)));
  });
  const m = /^held (\d+) (\d+)$/.exec(line);
  if (!m) throw new Error(`hold-pages.py said: ${line}`);
  return {
    bytes: Number(m[1]),
    files: Number(m[2]),
    pid: child.pid!,
    release: async () => {
      child.stdin.end();
      await exited;
    },
  };
}
