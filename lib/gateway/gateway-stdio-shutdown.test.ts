// The gateway in stdio mode as hosts run it, as a process in front of a real stdio server, with the
// SDK's StdioClientTransport as the host (its close: stdin closed, a wait, then SIGTERM, then
// SIGKILL, as MCP's stdio shutdown says). After the client closes, the gateway and its server are
// gone within a few seconds, however the gateway was started: its bin (bundled and launched by
// its #! line, as scripts/pack-mcp.ts packs it) or `npm run -s gateway`, where npm's signals end
// only npm's shell and the end of stdin is what reaches the gateway. A signal stops it too.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { build } from 'esbuild';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client as V2Client } from '@modelcontextprotocol/client';
import { StdioClientTransport as V2StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { childEnvironment } from '../config';
import { GATEWAY_NODE_FLAGS } from './node-flags';
import { PACKAGE_EXTERNALS } from '../../scripts/lib/package-externals';
import { CHILD_GRACE_MS, ChildServer } from './stdio';

const root = process.cwd();
const EVERYTHING = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');
const BASE = ['--server', 'everything', '--principal', 'p', '--organization', 'o'];
// No console: a listing needs none, and the gateway's exit is what is watched.
const env = childEnvironment({ COUNTERSIGN_URL: 'http://127.0.0.1:9', COUNTERSIGN_API_KEY: 'cs_live_shutdown' });
// The #! line and `npm run` find `node` on PATH: this Node.js first.
env.PATH = `${path.dirname(process.execPath)}${path.delimiter}${env.PATH ?? ''}`;
/** The SDK client's wait between closing stdin and SIGTERM (StdioClientTransport.close). */
const CLIENT_WAIT_MS = 2000;

// Beside node_modules, so that the bundle finds its externals as the package does.
const cache = path.join(root, 'node_modules/.cache');
mkdirSync(cache, { recursive: true });
const work = mkdtempSync(path.join(cache, 'cs-gateway-shutdown-'));
const bin = path.join(work, 'gateway.js');
const stubborn = path.join(work, 'stubborn-server.mjs');
const polite = path.join(work, 'polite-server.mjs');

beforeAll(async () => {
  await build({
    entryPoints: [path.join(root, 'scripts/gateway.ts')],
    outfile: bin,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // As scripts/pack-mcp.ts packs it: its externals are the package's dependencies.
    external: PACKAGE_EXTERNALS.flatMap((e) => [e, `${e}/*`]),
    banner: { js: `#!/usr/bin/env -S node ${GATEWAY_NODE_FLAGS.join(' ')}` },
    logLevel: 'warning',
  });
  chmodSync(bin, 0o755);
  // A process that leaves shortly after the end of its stdin (as a server finishing its work), writes
  // down a SIGTERM in the file it is given, and says when it is ready.
  writeFileSync(
    polite,
    [
      "import { writeFileSync } from 'node:fs';",
      "process.on('SIGTERM', () => { writeFileSync(process.argv[2], 'SIGTERM'); process.exit(1); });",
      "process.stdin.on('end', () => setTimeout(() => process.exit(0), 200)).resume();",
      "process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'ready' }) + '\\n');",
    ].join('\n'),
  );
  // A stdio server that outlives the end of its stdin and ignores SIGTERM: only SIGKILL ends it.
  writeFileSync(
    stubborn,
    [
      "import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';",
      "import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';",
      "process.on('SIGTERM', () => process.stderr.write('stubborn: SIGTERM ignored\\n'));",
      'setInterval(() => {}, 60_000);',
      "const server = new McpServer({ name: 'stubborn', version: '1.0.0' });",
      "server.registerTool('stay', {}, async () => ({ content: [{ type: 'text', text: 'staying' }] }));",
      'await server.connect(new StdioServerTransport());',
    ].join('\n'),
  );
}, 60_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));
// Whatever a failed test left open is closed (closing twice is harmless).
const open: (() => Promise<unknown>)[] = [];
afterEach(async () => void (await Promise.allSettled(open.splice(0).map((close) => close()))));

/** The process ids under `pid`, depth first. */
function descendants(pid: number): number[] {
  let children: number[];
  try {
    children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .map((l) => Number(l.trim()))
      .filter((n) => n > 0);
  } catch {
    children = []; // ps exits 1 when there are none
  }
  return children.flatMap((c) => [c, ...descendants(c)]);
}

const commandLine = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return null;
  }
};

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

/** The host: the SDK's client over stdio, started with `command`; what the processes say on stderr. */
async function host(command: string, args: string[]) {
  const transport = new StdioClientTransport({ command, args, env, cwd: root, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const client = new Client({ name: 'shutdown-test', version: '1.0.0' });
  open.push(() => client.close());
  await client.connect(transport);
  const { tools } = await client.listTools();
  const pid = transport.pid!;
  const tree = [pid, ...descendants(pid)];
  // After a failed test, what it left running is ended (each checked to be the process it was).
  const started = new Map(tree.map((p) => [p, commandLine(p)]));
  open.push(async () => {
    for (const [p, line] of started) if (alive(p) && commandLine(p) === line) process.kill(p, 'SIGKILL');
  });
  return { client, tools, pid, tree, stderr: () => stderr };
}

const withServer = (server: string[]) => [...BASE, '--', ...server];
const everything = [process.execPath, EVERYTHING, 'stdio'];

describe('the client closes the gateway (stdio)', () => {
  it.each([
    ['its bin', () => [bin, withServer(everything)] as const],
    ['npm run -s gateway', () => ['npm', ['run', '-s', 'gateway', '--', ...withServer(everything)]] as const],
  ])(
    'started as %s: the gateway leaves on the end of its stdin, with its server, before the client would SIGKILL',
    async (_how, launch) => {
      const [command, args] = launch();
      const h = await host(command, [...args]);
      expect(h.tools.map((t) => t.name)).toContain('echo');
      // The host's process, the gateway (under npm: npm, its shell, the gateway), and the server.
      const server = h.tree.find((p) => commandLine(p)?.includes(EVERYTHING));
      expect(server).toBeDefined();
      const closing = h.client.close();
      // Counted from the end of stdin: the client's SIGKILL comes after two of its waits, and ends
      // only the process it started (under npm, npm), never what runs under it.
      expect(await survivors(h.tree, 2 * CLIENT_WAIT_MS)).toEqual([]);
      await closing;
      expect(h.stderr()).toContain('countersign-gateway: stdin closed: stopping');
    },
    60_000,
  );

  it('its server ignoring the end of stdin and SIGTERM: the gateway kills it, and both are gone before the client would SIGKILL', async () => {
    const h = await host(bin, withServer([process.execPath, stubborn]));
    expect(h.tree).toHaveLength(2);
    await h.client.close();
    expect(await survivors(h.tree, 2 * CLIENT_WAIT_MS)).toEqual([]);
    expect(h.stderr()).toContain('stubborn: SIGTERM ignored');
  }, 60_000);

  it('a 2026-07-28 host (SDK v2, pinned) in front of that server: the same, both gone before the client would SIGKILL', async () => {
    // A subclass probes in place: no sibling gateway (with a stubborn server of its own) is started.
    class InPlace extends V2StdioClientTransport {}
    const transport = new InPlace({ command: bin, args: withServer([process.execPath, stubborn]), env, cwd: root });
    const client = new V2Client(
      { name: 'shutdown-test', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    open.push(() => client.close());
    await client.connect(transport);
    expect(client.getProtocolEra()).toBe('modern');
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['stay']);
    const tree = [transport.pid!, ...descendants(transport.pid!)];
    const started = new Map(tree.map((p) => [p, commandLine(p)]));
    open.push(async () => {
      for (const [p, line] of started) if (alive(p) && commandLine(p) === line) process.kill(p, 'SIGKILL');
    });
    expect(tree).toHaveLength(2);
    await client.close();
    expect(await survivors(tree, 2 * CLIENT_WAIT_MS)).toEqual([]);
  }, 60_000);

  it.each(['SIGTERM', 'SIGINT', 'SIGHUP'] as const)(
    '%s to the gateway stops it and its server, stdin still open',
    async (signal) => {
      const h = await host(bin, withServer(everything));
      expect(h.tree).toHaveLength(2);
      process.kill(h.pid, signal);
      expect(await survivors(h.tree, 3000)).toEqual([]);
      expect(h.stderr()).toContain(`countersign-gateway: ${signal}: stopping`);
      await h.client.close();
    },
    60_000,
  );
});

describe('ChildServer.close', () => {
  it('closes stdin, then after the grace SIGTERM, then SIGKILL: a server that ignores both is gone', async () => {
    const child = new ChildServer([process.execPath, stubborn]);
    await child.start();
    const pid = child.pid!;
    // Its answer shows it running, its SIGTERM handler in place (a busy machine starts it slowly).
    const answered = new Promise((resolve) => (child.onmessage = resolve));
    await child.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
    });
    expect(await answered).toMatchObject({ id: 1, result: { serverInfo: { name: 'stubborn' } } });
    const started = performance.now();
    await child.close();
    const took = performance.now() - started;
    expect(alive(pid)).toBe(false);
    expect(child.pid).toBeNull();
    // Both waits ran out (the server outlived each step), and no more than that and a little.
    expect(took).toBeGreaterThanOrEqual(2 * CHILD_GRACE_MS - 50);
    expect(took).toBeLessThan(2 * CHILD_GRACE_MS + 1500);
  }, 30_000);

  it('a server that leaves when its stdin closes is not signalled', async () => {
    const marker = path.join(work, `signalled-${process.hrtime.bigint()}`);
    const child = new ChildServer([process.execPath, polite, marker]);
    const ready = new Promise((resolve) => (child.onmessage = resolve));
    await child.start();
    const pid = child.pid!;
    expect(await ready).toEqual({ jsonrpc: '2.0', method: 'ready' });
    await child.close();
    expect(alive(pid)).toBe(false);
    expect(existsSync(marker)).toBe(false);
  }, 30_000);
});
