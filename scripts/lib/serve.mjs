// The console's server: `next start` in COUNTERSIGN_PROCESSES processes that share one port
// (node:cluster; the primary hands each new connection to the next process in turn). Every
// launcher runs it: `npm start`, the test and benchmark harnesses (console-process.ts) and
// Playwright's web server. Plain JavaScript, so the processes run without a TypeScript loader: the
// count comes from lib/config/processes.mjs, the one piece of the configuration module it can load.
//   node scripts/lib/serve.mjs -p <port> [-H <host>]      (the arguments go to `next start`)
// One process (the default) runs `next start` right here, with no primary in front. With more,
// the instances are as stateless as any behind a load balancer (docs/design.md "Architecture"): the
// background jobs are safe with any number of them, and rate limits are shared through Redis when
// REDIS_URL is set. A process that dies after it served is replaced (at most MAX_REPLACEMENTS a
// minute); one that dies before it listened stops the server with its exit code, as one would.
import cluster from 'node:cluster';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { processesFromEnvironment } from '../../lib/config/processes.mjs';

export { parseProcesses, PROCESSES_ENV, sharedLimitsWarning } from '../../lib/config/processes.mjs';

const MAX_REPLACEMENTS = 10;
const REPLACEMENT_WINDOW_MS = 60_000;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const nextBin = path.join(root, 'node_modules/next/dist/bin/next');

async function serve(args) {
  const processes = processesFromEnvironment();
  if (processes === 1) {
    process.argv = [process.argv[0], nextBin, 'start', ...args];
    await import(nextBin);
    return;
  }
  cluster.setupPrimary({ exec: nextBin, args: ['start', ...args] });
  const listened = new Set();
  const replacedAt = [];
  let stopping = false;
  let exitCode = 0;

  const stop = (signal, code = 0) => {
    if (stopping) return;
    stopping = true;
    exitCode = code;
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal);
  };
  cluster.on('listening', (worker) => listened.add(worker.id));
  cluster.on('exit', (worker, code, signal) => {
    const served = listened.delete(worker.id);
    if (!stopping) {
      const how = signal ? `signal ${signal}` : `code ${code}`;
      const now = Date.now();
      while (replacedAt.length && now - replacedAt[0] > REPLACEMENT_WINDOW_MS) replacedAt.shift();
      if (!served) {
        console.error(`[serve] a console process exited before it listened (${how}); stopping`);
        stop('SIGTERM', code || 1);
      } else if (replacedAt.length >= MAX_REPLACEMENTS) {
        console.error(`[serve] ${MAX_REPLACEMENTS} console processes exited within a minute (last: ${how}); stopping`);
        stop('SIGTERM', 1);
      } else {
        replacedAt.push(now);
        console.error(`[serve] console process ${worker.process.pid} exited (${how}); starting another`);
        cluster.fork();
      }
    }
    if (stopping && Object.keys(cluster.workers ?? {}).length === 0) process.exit(exitCode);
  });
  for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => stop(signal));
  for (let i = 0; i < processes; i++) cluster.fork();
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  serve(process.argv.slice(2)).catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
