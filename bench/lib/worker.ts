// The console's data layer, called in a process of its own: it takes its database and secrets
// from its process's environment, so a benchmark that times its calls directly (no HTTP) forks
// itself with --worker and an explicit environment, and asks it to run one function at a time.
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { childEnvironment } from '@/lib/config';
import { onCleanup } from './setup';

type Fns = Record<string, (...args: never[]) => Promise<unknown>>;
type Reply = { ok?: unknown; error?: string };

/** In the child: answers each request in turn with its function's result. */
export function serveWorker(fns: Fns): void {
  let queue = Promise.resolve();
  process.on('message', ({ fn, args }: { fn: string; args: never[] }) => {
    queue = queue.then(async () => {
      try {
        process.send!({ ok: await fns[fn](...args) });
      } catch (err) {
        process.send!({ error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
      }
    });
  });
  process.on('disconnect', () => process.exit(0));
  process.send!({ ready: true });
}

export type Worker<F extends Fns> = {
  call: <K extends keyof F>(fn: K, ...args: Parameters<F[K]>) => Promise<Awaited<ReturnType<F[K]>>>;
};

/** `file --worker` with `env` as its whole environment; stopped by `cleanup`. */
export async function startWorker<F extends Fns>(file: string, env: Record<string, string>): Promise<Worker<F>> {
  const child = fork(file, ['--worker'], {
    env: childEnvironment(env),
    execArgv: ['--conditions=react-server', '--import', 'tsx'],
  });
  onCleanup('stop a worker', async () => {
    if (child.exitCode !== null) return;
    const exited = once(child, 'exit');
    child.disconnect();
    await exited;
  });
  await once(child, 'message');
  const waiting: ((r: Reply) => void)[] = [];
  child.on('message', (r: Reply) => waiting.shift()?.(r));
  return {
    call: (fn, ...args) =>
      new Promise((resolve, reject) => {
        waiting.push((r) =>
          r.error === undefined ? resolve(r.ok as never) : reject(new Error(`worker ${String(fn)}: ${r.error}`)),
        );
        child.send({ fn, args });
      }),
  };
}
