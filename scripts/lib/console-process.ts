// The built console and the project's CLI as child processes, for harnesses that bring their own
// database (the benchmarks, the fault-injection spec): `next start` on a free port, and the CLI
// commands that make the credentials they need.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { freePort } from './embedded-postgres';
import { childEnvironment } from '@/lib/config';

/** `pid` leads the console's process group (for CPU accounting); `output` is its recent stdout and stderr. */
export type ConsoleProcess = { origin: string; pid: number; stop: () => Promise<void>; output: () => string };

/**
 * `next start` through scripts/lib/serve.mjs (a build must exist; COUNTERSIGN_PROCESSES in `env`
 * for several processes) on a free loopback port, in its own process group so that stopping it
 * stops all of it. `nodeFlags` (e.g. --cpu-prof, which NODE_OPTIONS refuses) go to `node`, and to
 * every process. `port`: a free one unless given (a caller whose `env` names the console's own address
 * picks it first). Resolves once it answers HTTP; the caller must `stop` it.
 */
export async function startConsole(
  root: string,
  env: Record<string, string>,
  nodeFlags: string[] = [],
  port?: number,
): Promise<ConsoleProcess> {
  port ??= await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const serve = [path.join(root, 'scripts/lib/serve.mjs'), '-p', String(port), '-H', '127.0.0.1'];
  const child: ChildProcess = spawn(process.execPath, [...nodeFlags, ...serve], {
    cwd: root,
    env: childEnvironment({ ...env, NEXT_TELEMETRY_DISABLED: '1' }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-16_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let alive = true;
  void exited.then(() => (alive = false));

  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, sig);
    } catch {
      // Already gone.
    }
  };
  // Last resort if this process exits without stopping it (an uncaught throw, process.exit).
  const onExit = () => alive && signal('SIGKILL');
  process.once('exit', onExit);
  const stop = async () => {
    process.removeListener('exit', onExit);
    if (!alive) return;
    signal('SIGTERM');
    const timer = setTimeout(() => signal('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };

  const deadline = Date.now() + 60_000;
  try {
    for (;;) {
      if (!alive) throw new Error(`next start exited before answering:\n${output.trim()}`);
      try {
        const res = await fetch(`${origin}/api/v1/me`);
        await res.arrayBuffer();
        return { origin, pid: child.pid!, stop, output: () => output };
      } catch {
        if (Date.now() > deadline) throw new Error(`next start did not answer within 60 s:\n${output.trim()}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Runs the project's own CLI against a database; its stdout, or a thrown error naming the command. */
export function runCli(root: string, databaseUrl: string, args: string[]): string {
  const res = spawnSync(
    path.join(root, 'node_modules/.bin/tsx'),
    ['--conditions=react-server', 'scripts/cli.ts', ...args],
    { cwd: root, env: childEnvironment({ DATABASE_URL: databaseUrl }), encoding: 'utf8' },
  );
  if (res.status !== 0) {
    throw new Error(
      `${args[0]} failed (exit ${res.status ?? res.signal}): ${(res.stderr || res.stdout || String(res.error)).trim()}`,
    );
  }
  return res.stdout ?? '';
}

/** An API key (by default with scope outcomes:write), made by the project's own CLI. */
export function createApiKey(
  root: string,
  databaseUrl: string,
  scopes: string[] = ['outcomes:write'],
  name = 'bench',
): string {
  const out = runCli(root, databaseUrl, ['apikeys:create', '--name', name, '--scopes', scopes.join(',')]);
  const secret = /\b(cs_live_[\w-]+)/.exec(out)?.[1];
  if (!secret) throw new Error(`apikeys:create printed no key: ${out.trim()}`);
  return secret;
}

/** A console user with a known password, made by the project's own CLI. */
export function createUser(
  root: string,
  databaseUrl: string,
  user: { email: string; role: 'reviewer' | 'support' | 'admin'; password: string; principal?: string },
): void {
  runCli(root, databaseUrl, [
    'users:create',
    '--email',
    user.email,
    '--role',
    user.role,
    // One argument: a generated password may begin with "-", which would read as an option.
    `--password=${user.password}`,
    ...(user.principal ? ['--principal', user.principal] : []),
  ]);
}
