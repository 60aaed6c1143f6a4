// The official MCP conformance suite as a differential harness (test support, never imported by
// the app): runs one suite version's server scenarios against a URL (`conformance server --url
// URL --suite all [--spec-version V] -o DIR`) and reads each scenario's verdict from the checks
// it saved in DIR. Both suite versions are installed side by side under npm aliases
// (conformance-2025 = 0.1.16, conformance-2026 = 0.2.0-alpha.12), so they are run by their bin
// files, with a Node that is at least 22 as they need. Also starts server-everything over
// Streamable HTTP, the upstream the differential runs against besides testing/mcp-v2-server.ts.
//   npx tsx testing/conformance.ts 2025 URL [URL2]                       one run, or two compared
//   npx tsx testing/conformance.ts 2026 URL [URL2] --spec-version 2026-07-28
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = path.resolve(import.meta.dirname, '..');
export const SUITES = { '2025': 'conformance-2025', '2026': 'conformance-2026' } as const;
export type Suite = keyof typeof SUITES;
/** A scenario's verdict: any FAILURE check fails it, else any WARNING warns; SUCCESS, SKIPPED and INFO pass. */
export type Verdict = 'pass' | 'warning' | 'fail';

export interface SuiteRun {
  verdicts: Record<string, Verdict>;
  /** Per scenario, the checks that did not pass, as `id: message`. */
  problems: Record<string, string[]>;
  ms: number;
  output: string;
}

/** The project's Node when this one is older than the suites need (22). */
export function suiteNode(): string {
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
  const local = path.join(ROOT, 'node_modules/node/bin/node');
  if (existsSync(local)) return local;
  throw new Error(`the conformance suites need Node 22 or later; this is ${process.version}`);
}

async function suiteBin(suite: Suite): Promise<string> {
  const dir = path.join(ROOT, 'node_modules', SUITES[suite]);
  const pkg = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as { bin: Record<string, string> };
  return path.join(dir, pkg.bin.conformance);
}

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

/** Verdicts from the directory `-o` wrote: one `server-<scenario>-<timestamp>/checks.json` per scenario. */
export async function readVerdicts(dir: string): Promise<Pick<SuiteRun, 'verdicts' | 'problems'>> {
  const verdicts: Record<string, Verdict> = {};
  const problems: Record<string, string[]> = {};
  for (const entry of (await readdir(dir)).sort()) {
    const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/.exec(entry);
    if (!m) continue;
    const checks = JSON.parse(await readFile(path.join(dir, entry, 'checks.json'), 'utf8')) as Check[];
    const bad = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
    verdicts[m[1]] = bad.some((c) => c.status === 'FAILURE') ? 'fail' : bad.length ? 'warning' : 'pass';
    if (bad.length) problems[m[1]] = bad.map((c) => `${c.id}: ${c.errorMessage ?? c.status}`);
  }
  return { verdicts, problems };
}

/**
 * Every server scenario of `suite` (`--suite all`) against `url`, or only `options.scenario`;
 * throws when the suite ran none.
 */
export async function runSuite(
  suite: Suite,
  url: string,
  options: { specVersion?: string; timeoutMs?: number; scenario?: string } = {},
): Promise<SuiteRun> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `conformance-${suite}-`));
  const which = options.scenario ? ['--scenario', options.scenario] : ['--suite', 'all'];
  const args = [await suiteBin(suite), 'server', '--url', url, ...which, '-o', dir];
  if (options.specVersion) args.push('--spec-version', options.specVersion);
  const started = performance.now();
  const child = spawn(suiteNode(), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 180_000);
  // The suite exits non-zero when a scenario fails: the verdicts, not the exit code, are the result.
  await new Promise<void>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', () => resolve());
  });
  clearTimeout(timer);
  const ms = performance.now() - started;
  try {
    const read = await readVerdicts(dir);
    if (Object.keys(read.verdicts).length === 0) throw new Error(`conformance ${suite} ran no scenario:\n${output}`);
    return { ...read, ms, output };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The scenarios whose verdicts differ, with both verdicts (a scenario only one run has counts as missing). */
export function differences(a: Record<string, Verdict>, b: Record<string, Verdict>) {
  const names = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return Object.fromEntries(
    names.filter((n) => a[n] !== b[n]).map((n) => [n, `${a[n] ?? 'missing'} → ${b[n] ?? 'missing'}`]),
  );
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** server-everything's Streamable HTTP entry as a child process (it reads its port from PORT). */
export async function startEverythingHttp(): Promise<{ url: string; close(): Promise<void> }> {
  const port = await freePort();
  const entry = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
  const child = spawn(suiteNode(), [entry, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server-everything did not start:\n${log}`)), 20_000);
    child.stderr.on('data', (d: Buffer) => {
      log += d.toString();
      if (/listening on port/i.test(log)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code) => reject(new Error(`server-everything exited (${code}):\n${log}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.on('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function main(args: string[]) {
  const at = args.indexOf('--spec-version');
  const specVersion = at >= 0 ? args.splice(at, 2)[1] : undefined;
  const [suite, url, other] = args;
  if (!(suite in SUITES) || !url) {
    console.error('usage: tsx testing/conformance.ts 2025|2026 URL [URL2] [--spec-version V]');
    process.exit(2);
  }
  const first = await runSuite(suite as Suite, url, { specVersion });
  if (!other) {
    for (const [name, verdict] of Object.entries(first.verdicts)) console.log(`${verdict.padEnd(8)}${name}`);
    return;
  }
  const second = await runSuite(suite as Suite, other, { specVersion });
  const differ = differences(first.verdicts, second.verdicts);
  console.log(JSON.stringify({ scenarios: Object.keys(first.verdicts).length, differ }, null, 2));
  process.exitCode = Object.keys(differ).length ? 1 : 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) void main(process.argv.slice(2));
