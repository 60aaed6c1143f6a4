// stdio in front of a 2025 server that exits on the era probe (issue 42): some 2025 servers end on
// any request before `initialize`, and the 2026-07-28 probe (`server/discover`) is one. The child
// is testing/mcp-probe-exits.ts (SDK v1 over stdio: exits with status 1 on a request before
// `initialize`, serves `echo` otherwise), run by the gateway in process, with SDK v2's client in
// legacy, auto and pinned 2026-07-28 modes as the host, and the real console deciding and
// recording. Each host is served in its own era: the gateway starts the child once more and
// speaks 2025 to it, says so on its log, and the call works and is recorded once. A child that
// dies on its 2025 `initialize` too (`--always`) is started twice and never a third time: the
// host's first request gets a JSON-RPC error naming the cause, and the gateway stops by itself.
// Either way, once the host or the gateway closed, no child process is left. And as a process
// (scripts/gateway.ts under tsx, as `npm run -s gateway` runs it, without npm): the same, its
// lines on stderr, and the gateway itself gone as well.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Client, type InMemoryTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { childEnvironment } from '@/lib/config';
import { stdioGateway, tsxCommand } from '@/testing/stdio-gateway';
import { closedAfterEach, consoleActors, recordsOf, type ConsoleActors } from '@/testing/gateway-fixtures';
import { CHILD_GRACE_MS } from './stdio';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

let actors: ConsoleActors;
beforeAll(async () => {
  actors = await consoleActors();
});
const open = closedAfterEach();
const work = mkdtempSync(path.join(tmpdir(), 'cs-gateway-probe-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** What the gateway logs when it starts the child again (hand-written from the contract: docs/gateway.md). */
const RESTARTED = 'the server exited on the 2026-07-28 probe (server/discover): starting it again, in the 2025 era';
const DIED_TWICE = 'the server exited on the 2026-07-28 probe (server/discover), and again on its 2025 initialize';

type Mode = 'legacy' | 'auto' | { pin: '2026-07-28' };

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The ids of `pids` still running after `ms` (polled). */
async function survivors(pids: number[], ms: number): Promise<number[]> {
  const deadline = performance.now() + ms;
  for (;;) {
    const left = pids.filter(alive);
    if (left.length === 0 || performance.now() > deadline) return left;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The gateway in process in front of the probe-exiting server; `starts()`: the id of each child started. */
async function gateway(...flags: string[]) {
  const starts = path.join(work, `starts-${randomUUID()}`);
  const s = await stdioGateway(actors, tsxCommand('mcp-probe-exits.ts', '--starts', starts, ...flags), open);
  const closed = new Promise<void>((resolve) => (s.g.onclose = resolve));
  const pids = () =>
    readFileSync(starts, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => Number(line));
  return { ...s, closed, pids };
}

/** Every message the host receives, kept as it arrives (whoever listens on the host's side). */
function heard(hostSide: InMemoryTransport): Record<string, unknown>[] {
  const messages: Record<string, unknown>[] = [];
  let handler: InMemoryTransport['onmessage'];
  Object.defineProperty(hostSide, 'onmessage', {
    configurable: true,
    get: () => handler,
    set: (h: InMemoryTransport['onmessage']) =>
      (handler = h && ((message, extra) => (messages.push(message as Record<string, unknown>), h(message, extra)))),
  });
  return messages;
}

const hostOf = (mode: Mode) =>
  new Client({ name: 'stdio-probe-test', version: '1.0.0' }, { versionNegotiation: { mode } });

const modes = [
  { mode: 'legacy' as const, era: 'legacy' },
  { mode: 'auto' as const, era: 'modern' },
  { mode: { pin: '2026-07-28' as const }, era: 'modern' },
];

describe.each(modes)('a host in $mode mode, in front of a 2025 server that exits on the probe', ({ mode, era }) => {
  it(`speaks the ${era} era; the child is started once more and spoken to in 2025; echo works, recorded once; after the host closes, no child is left`, async () => {
    const s = await gateway();
    const host = hostOf(mode);
    open.push(() => host.close());
    await host.connect(s.hostSide);
    expect(host.getProtocolEra()).toBe(era);
    expect(host.getServerVersion()?.name).toBe('probe-exits');
    expect((await host.listTools()).tools.map((t) => t.name)).toEqual(['echo']);
    const ref = `ref-${randomUUID()}`;
    const echo = await host.callTool({
      name: 'echo',
      arguments: { text: 'through the gateway' },
      _meta: { 'countersign/requestRef': ref },
    });
    expect(echo.content).toEqual([{ type: 'text', text: 'echo: through the gateway' }]);
    const records = await recordsOf(ref, s.ctx.reporter);
    expect(records.map((r) => [r.toolName, r.delivery])).toEqual([['echo', 'completed']]);
    // Two starts: the one the probe ended, and the one spoken to in 2025.
    const pids = s.pids();
    expect(pids).toHaveLength(2);
    expect(alive(pids[0])).toBe(false);
    expect(s.logs).toContain(RESTARTED);
    expect(s.logs).toContain('server speaks the 2025 era');
    // Nothing of the server's command on the log (its arguments may hold secrets).
    expect(s.logs.join('\n')).not.toContain('mcp-probe-exits');
    await host.close();
    await s.closed;
    expect(await survivors(pids, 2 * CHILD_GRACE_MS)).toEqual([]);
  }, 60_000);

  it('a server that dies on its 2025 initialize too: started twice, never a third time; the host gets a JSON-RPC error naming the cause, and the gateway stops by itself with no child left', async () => {
    const s = await gateway('--always');
    const messages = heard(s.hostSide);
    const host = hostOf(mode);
    open.push(() => host.close());
    await expect(host.connect(s.hostSide)).rejects.toThrow();
    await s.closed;
    // The host's first request (initialize, or its own server/discover probe) is answered so.
    expect(messages).toEqual([
      {
        jsonrpc: '2.0',
        id: expect.anything(),
        error: { code: -32603, message: `Internal server error: ${DIED_TWICE}` },
      },
    ]);
    expect(s.logs).toEqual(expect.arrayContaining([RESTARTED, `${DIED_TWICE}: stopping`]));
    const pids = s.pids();
    expect(pids).toHaveLength(2);
    expect(await survivors(pids, 2 * CHILD_GRACE_MS)).toEqual([]);
    // Bounded: no third start comes later either.
    await new Promise((r) => setTimeout(r, 500));
    expect(s.pids()).toEqual(pids);
  }, 60_000);
});

describe('the gateway as a process, in front of a 2025 server that exits on the probe', () => {
  // No console: a listing needs none, and the processes are what is watched.
  const env = childEnvironment({ COUNTERSIGN_URL: 'http://127.0.0.1:9', COUNTERSIGN_API_KEY: 'cs_live_probe' });
  /** The SDK client's wait between closing stdin and SIGTERM (StdioClientTransport.close), and the gateway's flush. */
  const CLOSING_MS = 2000;
  // A subclass probes in place: no sibling gateway (with children of its own) is started.
  class InPlace extends StdioClientTransport {
    /** The gateway's process id, kept once started (the transport forgets it when the process ends). */
    gateway?: number;
    override async start(): Promise<void> {
      await super.start();
      this.gateway = this.pid ?? undefined;
    }
  }

  /** A host pinned to 2026-07-28 starting the gateway in front of the server with `flags`. */
  function launch(...flags: string[]) {
    const starts = path.join(work, `starts-${randomUUID()}`);
    const transport = new InPlace({
      command: process.execPath,
      args: [
        '--import',
        'tsx',
        path.join(process.cwd(), 'scripts/gateway.ts'),
        ...['--server', 'probe-exits', '--principal', 'p', '--organization', 'o', '--'],
        ...tsxCommand('mcp-probe-exits.ts', '--starts', starts, ...flags),
      ],
      env,
      cwd: process.cwd(),
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    const host = hostOf({ pin: '2026-07-28' });
    open.push(() => host.close());
    const pids = () =>
      readFileSync(starts, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => Number(line));
    // After a failed test, what it left running is ended.
    open.push(async () => {
      const left = [transport.gateway, ...pids()].filter((p): p is number => typeof p === 'number' && alive(p));
      for (const p of left) process.kill(p, 'SIGKILL');
    });
    return { transport, host, pids, stderr: () => stderr };
  }

  it('a 2026-07-28 host lists the tools; the restart is said on stderr; after the host closes, the gateway and both children are gone', async () => {
    const h = launch();
    await h.host.connect(h.transport);
    expect(h.host.getProtocolEra()).toBe('modern');
    expect((await h.host.listTools()).tools.map((t) => t.name)).toEqual(['echo']);
    const gateway = h.transport.gateway!;
    const pids = h.pids();
    expect(pids).toHaveLength(2);
    await h.host.close();
    expect(await survivors([gateway, ...pids], 2 * CLOSING_MS)).toEqual([]);
    expect(h.stderr()).toContain(`countersign-gateway: ${RESTARTED}`);
    expect(h.stderr()).not.toContain('mcp-probe-exits.ts');
  }, 60_000);

  it('a server that always dies: the host is refused, the gateway exits, saying why, with both children gone', async () => {
    const h = launch('--always');
    await expect(h.host.connect(h.transport)).rejects.toThrow();
    const gateway = h.transport.gateway;
    expect(gateway).toBeGreaterThan(0);
    expect(await survivors([gateway!, ...h.pids()], 2 * CLOSING_MS)).toEqual([]);
    expect(h.pids()).toHaveLength(2);
    expect(h.stderr()).toContain(`countersign-gateway: ${DIED_TWICE}: stopping`);
  }, 60_000);
});
