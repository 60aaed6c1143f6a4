// `next build` only when the sources changed since the last one: a restart should take a second, not a minute.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

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
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' },
  });
  if (res.status !== 0) throw new Error(`next build failed (exit ${res.status ?? res.signal})`);
  console.log(`[build] done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
