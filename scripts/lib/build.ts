// `next build` only when the sources changed since the last one: a restart should take a second, not a minute.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { childEnvironment } from '@/lib/config';

const sources = [
  'app',
  'components',
  'lib',
  'public',
  'proxy.ts',
  'next.config.js',
  'package-lock.json',
  'postcss.config.mjs',
  'tsconfig.json',
];

function newestMtime(p: string): number {
  if (!existsSync(p)) return 0;
  const st = statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const entry of readdirSync(p)) newest = Math.max(newest, newestMtime(path.join(p, entry)));
  return newest;
}

export function buildIsCurrent(root = process.cwd()): boolean {
  const buildId = path.join(root, '.next', 'BUILD_ID');
  if (!existsSync(buildId)) return false;
  const built = statSync(buildId).mtimeMs;
  return sources.every((s) => newestMtime(path.join(root, s)) <= built);
}

export function ensureBuild(root = process.cwd()): void {
  if (buildIsCurrent(root)) return;
  console.log('[build] building the console (about a minute on 2 cores)…');
  const started = Date.now();
  const res = spawnSync(path.join(root, 'node_modules', '.bin', 'next'), ['build'], {
    cwd: root,
    stdio: 'inherit',
    env: childEnvironment({ NEXT_TELEMETRY_DISABLED: '1' }),
  });
  if (res.status !== 0) throw new Error(`next build failed (exit ${res.status ?? res.signal})`);
  console.log(`[build] done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/**
 * The same as ensureBuild, in the background and quietly: `npm start` builds while the database
 * starts, migrates and seeds, and shows the build's own output only when it fails (the log file
 * keeps it either way). Resolves false when the build was already current.
 */
export async function buildInBackground(root = process.cwd(), logFile: string): Promise<boolean> {
  if (buildIsCurrent(root)) return false;
  const { spawn } = await import('node:child_process');
  const { createWriteStream, mkdirSync, readFileSync } = await import('node:fs');
  mkdirSync(path.dirname(logFile), { recursive: true });
  const log = createWriteStream(logFile);
  const child = spawn(path.join(root, 'node_modules', '.bin', 'next'), ['build'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: childEnvironment({ NEXT_TELEMETRY_DISABLED: '1' }),
  });
  child.stdout.pipe(log, { end: false });
  child.stderr.pipe(log, { end: false });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  await new Promise<void>((resolve) => log.end(resolve));
  if (code !== 0) {
    const tail = readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-40).join('\n');
    throw new Error(`next build failed (exit ${code}); its output is in ${logFile}. The end of it:\n${tail}`);
  }
  return true;
}
