// A second `next start` of the same build and database, with its own environment (e.g. low rate
// limits), on a free port; in its own process group so that stopping it stops all of it.
import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';

export type SecondServer = { origin: string; output: () => string; stop: () => Promise<void> };

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

export async function startSecondServer(env: Record<string, string>): Promise<SecondServer> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const child = spawn('node_modules/.bin/next', ['start', '-p', String(port), '-H', '127.0.0.1'], {
    env: { ...process.env, ...env, NEXT_TELEMETRY_DISABLED: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let alive = true;
  const exited = new Promise<void>((resolve) => child.once('exit', () => { alive = false; resolve(); }));
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, sig);
    } catch {
      // already gone
    }
  };
  const stop = async () => {
    if (!alive) return;
    signal('SIGTERM');
    const timer = setTimeout(() => signal('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };
  process.once('exit', () => alive && signal('SIGKILL'));

  const deadline = Date.now() + 60_000;
  for (;;) {
    if (!alive) throw new Error(`the second next start exited:\n${output}`);
    try {
      if ((await get(`${origin}/sign-in`)).status === 200) return { origin, output: () => output, stop };
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the second next start did not answer within 60 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

export type Answer = { status: number; headers: Record<string, string | string[] | undefined>; body: string; json: () => unknown };

/**
 * One GET on a fresh connection. Not fetch: its pooled keep-alive connection may be one the
 * server is just closing after a few idle seconds (a slow CLI call in between), which fails the
 * request with "other side closed".
 */
export function get(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
