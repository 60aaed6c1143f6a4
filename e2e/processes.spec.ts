import { readdirSync, readFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { cli, secretFrom } from '../testing/e2e';
import { startConsole, type ConsoleProcess } from '../scripts/lib/console-process';
import { get } from '../testing/http-get';

// COUNTERSIGN_PROCESSES (scripts/lib/serve.mjs): several console processes behind one port. Each
// request here is on a fresh connection, and the primary hands connections to the processes in
// turn, so consecutive requests reach both. One API key's limit (burst 3, then a token every 5 s)
// holds across them with REDIS_URL; without it each process allows its own 3 (the control that
// shows two processes answered).
const LIMITS = { RATE_LIMIT_API_KEY_PER_SECOND: '0.2', RATE_LIMIT_API_KEY_BURST: '3' };
const stamp = Date.now().toString(36);
const servers: ConsoleProcess[] = [];

test.afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

async function twoProcesses(env: Record<string, string>): Promise<ConsoleProcess> {
  const server = await startConsole(process.cwd(), { ...LIMITS, ...env, COUNTERSIGN_PROCESSES: '2' });
  servers.push(server);
  await expect.poll(() => children(server.pid).length, { timeout: 30_000 }).toBe(2);
  return server;
}

/** The pids whose parent is `pid` (the primary's console processes). */
function children(pid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]); // after the state
      if (ppid === pid) found.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

const newKey = (name: string) =>
  secretFrom(cli('apikeys:create', '--name', `e2e-proc-${name}-${stamp}`, '--scopes', 'outcomes:read'), 'cs_live_');

async function statuses(origin: string, secret: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++)
    out.push((await get(`${origin}/api/v1/me`, { authorization: `Bearer ${secret}` })).status);
  return out;
}

test.describe('several console processes on one port', () => {
  test('with REDIS_URL one API key gets its burst of 3 across both; without it, 3 from each', async () => {
    test.setTimeout(120_000);
    const shared = await twoProcesses({ REDIS_URL: 'redis://127.0.0.1:6379', REDIS_KEY_PREFIX: `e2e-proc-${stamp}:` });
    expect(await statuses(shared.origin, newKey('shared'), 6)).toEqual([200, 200, 200, 429, 429, 429]);

    const apart = await twoProcesses({ REDIS_URL: '' });
    const seen = await statuses(apart.origin, newKey('apart'), 8);
    expect(seen.filter((s) => s === 200)).toHaveLength(6);
    expect(seen.slice(6)).toEqual([429, 429]);
  });

  test('a process that dies is replaced, and the other answers meanwhile', async () => {
    test.setTimeout(120_000);
    const server = await twoProcesses({});
    const [victim, survivor] = children(server.pid);
    process.kill(victim, 'SIGKILL');
    // Once the primary has seen it go (a connection handed over just before is lost with it).
    await expect
      .poll(() => server.output(), { timeout: 10_000 })
      .toContain(`[serve] console process ${victim} exited (signal SIGKILL); starting another`);
    for (let i = 0; i < 4; i++) expect((await get(`${server.origin}/api/v1/me`)).status).toBe(401);
    await expect.poll(() => children(server.pid).length, { timeout: 30_000 }).toBe(2);
    expect(children(server.pid)).toContain(survivor);
    expect(children(server.pid)).not.toContain(victim);
    for (let i = 0; i < 4; i++) expect((await get(`${server.origin}/api/v1/me`)).status).toBe(401);
  });
});
