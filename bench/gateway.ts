// `npm run bench:gateway`: the same read tool call (the demo server's get_order) direct and through
// the gateway, alternated in one run, Streamable HTTP on loopback, 1 and 16 concurrent clients
// (official SDK clients, each calling in sequence). The gateway runs as its own process, as it
// ships: scripts/gateway.ts bundled by esbuild with scripts/pack-mcp.ts's options (the package's
// `countersign-gateway`), run by node --upstream. Through tsx instead (BENCH_GATEWAY_TSX=1) it is
// slower: tsx keeps function names by wrapping every closure made, per call here. Its memory is
// its own; its console is a stub on loopback answering policy (a trusted read) and outcome batches
// at once, so the figures are the gateway's.
// Targets: added latency p50 ≤ 1 ms and p99 ≤ 5 ms; throughput through the gateway ≥ 0.7× direct;
// gateway memory (RSS after a forced settle, printed beside the live heap and the heap V8 keeps
// committed) flat over BENCH_GATEWAY_CALLS calls (default 100,000).
// Beside the latencies, the gateway process's own CPU per call (utime + stime from /proc over its
// rounds): load on the machine stretches wall time, far less the CPU a call costs. And two more
// ceilings, in the same rounds: the same calls through a bare pass-through HTTP proxy of its own
// process (bench/lib/bare-proxy.mjs), the least one more HTTP hop costs here whatever it does, and
// through a TCP relay (bench/lib/tcp-relay.mjs), the least one more process and connection cost.
// The demo server runs in this process, beside the clients, unless BENCH_GATEWAY_SERVER=process:
// then in its own (bundled as the gateway is), as an MCP server is deployed, so that the direct
// path crosses processes as well.
//   BENCH_GATEWAY_ROUNDS (6)  BENCH_GATEWAY_ROUND_CALLS (300)  BENCH_GATEWAY_CALLS (100000)  BENCH_GATEWAY_TSX (0)
//   BENCH_GATEWAY_SERVER (in-process | process)
//   BENCH_CPU_PROFILE=<dir>: the gateway writes a V8 .cpuprofile there on exit (open in Chrome DevTools)
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { GATEWAY_NODE_FLAGS } from '../lib/gateway/node-flags';
import { startDemoMcpServer } from '../scripts/demo-mcp-server';
import { envNumber, int, load1, log, ms, runMain, stats, table, verdict } from './lib/report';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ROUNDS = envNumber('BENCH_GATEWAY_ROUNDS', 6);
const ROUND_CALLS = envNumber('BENCH_GATEWAY_ROUND_CALLS', 300);
const MEMORY_CALLS = envNumber('BENCH_GATEWAY_CALLS', 100_000);
const SERVER = process.env.BENCH_GATEWAY_SERVER ?? 'in-process';
if (SERVER !== 'in-process' && SERVER !== 'process')
  throw new Error(`BENCH_GATEWAY_SERVER must be in-process or process, got ${SERVER}`);
const MEMORY_FILE = path.join(os.tmpdir(), `countersign-bench-gateway-memory-${process.pid}.json`);

/** The demo server, wherever it runs: its URL, the token that may call every tool, its stop. */
let demo: { url: URL; token: string; close(): Promise<void> } | undefined;
let stub: Server | undefined;
let gateway: ChildProcess | undefined;
let bare: ChildProcess | undefined;
let relay: ChildProcess | undefined;
const clients: Client[] = [];
/** The gateway's place among the paths each round takes turns on (direct, gateway, bare proxy, TCP relay). */
const THROUGH_GATEWAY = 1;

function stubConsole(): Promise<string> {
  stub = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      if (req.url === '/api/v1/policy/evaluate') {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as { server: string; tools: { name: string }[] };
        const tools = body.tools.map((t) => ({
          name: t.name,
          readOnly: true,
          blocked: false,
          requiredApprovals: 0,
          reason: 'stub',
        }));
        return res.end(JSON.stringify({ server: body.server, trusted: true, tools }));
      }
      if (req.url === '/api/v1/outcomes') return res.end('{"accepted":0,"duplicates":0}');
      res.statusCode = 404;
      res.end('{}');
    });
  });
  return new Promise((resolve) =>
    stub!.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(stub!.address() as AddressInfo).port}`)),
  );
}

/**
 * scripts/<script>.ts bundled as the package ships the gateway (scripts/pack-mcp.ts): the SDK and
 * zod outside.
 */
async function bundle(script: 'gateway' | 'demo-mcp-server'): Promise<string> {
  const dir = path.join(root, '.bench-data');
  mkdirSync(dir, { recursive: true });
  const outfile = path.join(dir, `${script}.mjs`); // beside node_modules, for the SDK and zod
  const external = ['@modelcontextprotocol/sdk', 'zod'].flatMap((e) => [e, `${e}/*`]);
  await build({
    entryPoints: [path.join(root, `scripts/${script}.ts`)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external,
    logLevel: 'warning',
    legalComments: 'none',
  });
  return outfile;
}

async function startGateway(consoleUrl: string, upstream: URL): Promise<string> {
  const profile = process.env.BENCH_CPU_PROFILE;
  // tsx in this process (tsx's CLI would run the gateway as a child: its CPU and profile not ours).
  const entry =
    process.env.BENCH_GATEWAY_TSX === '1' ? ['--import', 'tsx', 'scripts/gateway.ts'] : [await bundle('gateway')];
  gateway = spawn(
    process.execPath,
    [
      ...GATEWAY_NODE_FLAGS,
      '--expose-gc',
      '--import',
      path.join(root, 'bench/lib/gc-on-signal.mjs'),
      ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(profile)}`] : []),
      ...entry,
      '--server',
      'billing-mcp',
      '--principal',
      'bench',
      '--organization',
      'bench',
      '--upstream',
      upstream.toString(),
      '--port',
      '0',
    ],
    {
      cwd: root,
      env: {
        ...process.env,
        COUNTERSIGN_URL: consoleUrl,
        COUNTERSIGN_API_KEY: 'cs_live_bench',
        BENCH_MEMORY_FILE: MEMORY_FILE,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  return listening(gateway);
}

async function startServer(): Promise<NonNullable<typeof demo>> {
  if (SERVER === 'in-process') {
    const server = await startDemoMcpServer({ slowMs: 0 });
    return { url: server.url, token: server.tokens.full, close: () => server.close() };
  }
  const child = spawn(process.execPath, [await bundle('demo-mcp-server'), '--port', '0', '--slow-ms', '0'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // It prints its URL, then the token with every scope, then the one with orders:read only.
  const printed = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('orders:read:')) resolve(out);
    });
    child.once('exit', (code) => reject(new Error(`the demo server exited ${code}: ${out}`)));
  });
  const url = /on (http\S+)/.exec(printed)?.[1];
  const token = /every scope:\s+(\S+)/.exec(printed)?.[1];
  if (!url || !token) throw new Error(`the demo server printed no URL and token: ${printed}`);
  return {
    url: new URL(url),
    token,
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** A ceiling (bench/lib/<script>) in front of the same server, as its own process. */
async function startCeiling(script: string, upstream: URL): Promise<[ChildProcess, string]> {
  const child = spawn(process.execPath, [path.join(root, 'bench/lib', script), upstream.toString()], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return [child, await listening(child)];
}

/** The URL a child prints on stderr as "listening on <URL>,", once it does. */
function listening(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (c: Buffer) => {
      err += c.toString();
      const m = /listening on (\S+?),/.exec(err);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`${path.basename(String(child.spawnfile))} exited ${code}: ${err}`)));
  });
}

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  clients.push(client);
  return client;
}

// `concurrency` clients, each calling in sequence until `calls` calls were made: latencies and wall time.
async function run(pool: Client[], calls: number) {
  const latencies: number[] = [];
  let left = calls;
  const t0 = performance.now();
  await Promise.all(
    pool.map(async (client) => {
      while (left-- > 0) {
        const t = performance.now();
        await client.callTool({ name: 'get_order', arguments: { orderId: '4411' } });
        latencies.push(performance.now() - t);
      }
    }),
  );
  return { latencies, seconds: (performance.now() - t0) / 1000 };
}

/** The process's CPU so far (user + system), in ms; /proc ticks are 10 ms. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

type Settled = { rssKb: number; heapUsedMb: number; heapTotalMb: number };

/**
 * The process's RSS after a full garbage collection (bench/lib/gc-on-signal.mjs), in kB, and its
 * own figures from then: the live heap, and the heap V8 keeps committed (its young generation
 * grows with the allocation rate up to a size Node.js 24 sets far higher than 20 did).
 */
async function settled(pid: number): Promise<Settled> {
  rmSync(MEMORY_FILE, { force: true });
  process.kill(pid, 'SIGUSR2');
  await new Promise((r) => setTimeout(r, 500));
  const usage = JSON.parse(readFileSync(MEMORY_FILE, 'utf8')) as { heapUsed: number; heapTotal: number };
  return { rssKb: rssKb(pid), heapUsedMb: usage.heapUsed / 2 ** 20, heapTotalMb: usage.heapTotal / 2 ** 20 };
}

const rssKb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);

async function main(): Promise<number> {
  demo = await startServer();
  const gatewayUrl = await startGateway(await stubConsole(), demo.url);
  let bareUrl: string, relayUrl: string;
  [bare, bareUrl] = await startCeiling('bare-proxy.mjs', demo.url);
  [relay, relayUrl] = await startCeiling('tcp-relay.mjs', demo.url);
  const how = process.env.BENCH_GATEWAY_TSX === '1' ? 'through tsx' : 'bundled';
  log(`gateway (${how}) ${gatewayUrl} → demo server ${demo.url} (${SERVER}); load ${load1()}`);
  const rows = [['clients', 'path', 'calls', 'p50', 'p99', 'calls/s', 'gateway CPU/call']];
  const verdicts: string[][] = [['target', 'measured', 'ceiling (same run)', 'verdict']];
  let ok = true;
  for (const concurrency of [1, 16]) {
    // In this order: direct, the gateway (whose CPU is counted), the bare proxy, the TCP relay.
    const pools = await Promise.all(
      [demo.url.toString(), gatewayUrl, bareUrl, relayUrl].map((url) =>
        Promise.all(Array.from({ length: concurrency }, () => connect(url, demo!.token))),
      ),
    );
    for (const pool of pools) await run(pool, 50);
    const acc = pools.map(() => ({ latencies: [] as number[], seconds: 0, cpuMs: 0 }));
    for (let round = 0; round < ROUNDS; round++) {
      // The four take turns, in an order that rotates each round.
      for (let k = 0; k < pools.length; k++) {
        const i = (round + k) % pools.length;
        const cpu0 = i === THROUGH_GATEWAY ? cpuMs(gateway!.pid!) : 0;
        const r = await run(pools[i], ROUND_CALLS);
        if (i === THROUGH_GATEWAY) acc[i].cpuMs += cpuMs(gateway!.pid!) - cpu0;
        acc[i].latencies.push(...r.latencies);
        acc[i].seconds += r.seconds;
      }
    }
    const [ds, gs, bs, ts] = acc.map((a) => stats(a.latencies));
    const [dRate, gRate, bRate, tRate] = acc.map((a) => a.latencies.length / a.seconds);
    rows.push([String(concurrency), 'direct', int(ds.n), ms(ds.p50), ms(ds.p99), int(dRate), '']);
    rows.push([
      String(concurrency),
      'gateway',
      int(gs.n),
      ms(gs.p50),
      ms(gs.p99),
      int(gRate),
      ms(acc[THROUGH_GATEWAY].cpuMs / gs.n),
    ]);
    rows.push([String(concurrency), 'bare proxy', int(bs.n), ms(bs.p50), ms(bs.p99), int(bRate), '']);
    rows.push([String(concurrency), 'TCP relay', int(ts.n), ms(ts.p50), ms(ts.p99), int(tRate), '']);
    const checks: [string, number, string, boolean][] = [
      [
        `${concurrency} client(s): added p50 ≤ 1 ms`,
        gs.p50 - ds.p50,
        `direct ${ms(ds.p50)}; bare proxy added ${ms(bs.p50 - ds.p50)}, TCP relay ${ms(ts.p50 - ds.p50)}`,
        gs.p50 - ds.p50 <= 1,
      ],
      [
        `${concurrency} client(s): added p99 ≤ 5 ms`,
        gs.p99 - ds.p99,
        `direct ${ms(ds.p99)}; bare proxy added ${ms(bs.p99 - ds.p99)}, TCP relay ${ms(ts.p99 - ds.p99)}`,
        gs.p99 - ds.p99 <= 5,
      ],
    ];
    for (const [name, value, ceiling, pass] of checks) {
      verdicts.push([name, ms(value), ceiling, verdict(pass)]);
      ok &&= pass;
    }
    const ratio = gRate / dRate;
    verdicts.push([
      `${concurrency} client(s): throughput ≥ 0.7× direct`,
      `${ratio.toFixed(2)}×`,
      `direct ${int(dRate)}/s; bare proxy ${(bRate / dRate).toFixed(2)}×, TCP relay ${(tRate / dRate).toFixed(2)}×`,
      verdict(ratio >= 0.7),
    ]);
    ok &&= ratio >= 0.7;
  }

  const memoryClients = await Promise.all(Array.from({ length: 16 }, () => connect(gatewayUrl, demo!.token)));
  await run(memoryClients, Math.min(5000, MEMORY_CALLS / 10));
  const before = await settled(gateway!.pid!);
  await run(memoryClients, MEMORY_CALLS);
  await new Promise((r) => setTimeout(r, 1500)); // the reporter's batches go out, timers settle
  const after = await settled(gateway!.pid!);
  rmSync(MEMORY_FILE, { force: true });
  const grown = (after.rssKb - before.rssKb) / 1024;
  const flat = grown <= 20;
  const mb = (x: number) => x.toFixed(0);
  verdicts.push([
    `memory flat over ${int(MEMORY_CALLS)} calls (≤ 20 MB growth)`,
    `${grown.toFixed(1)} MB`,
    `RSS ${mb(before.rssKb / 1024)} MB before; live heap ${mb(before.heapUsedMb)} → ${mb(after.heapUsedMb)} MB, ` +
      `heap V8 keeps ${mb(before.heapTotalMb)} → ${mb(after.heapTotalMb)} MB`,
    verdict(flat),
  ]);
  ok &&= flat;
  console.log(table(rows));
  console.log(table(verdicts));
  log(`load ${load1()} at the end; ${ok ? 'every target met' : 'some targets missed'}`);
  return 0;
}

runMain(main, async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  if (gateway && gateway.exitCode === null) {
    const exited = new Promise((r) => gateway!.once('exit', r));
    gateway.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]); // the profile is written on exit
  }
  for (const child of [bare, relay]) if (child && child.exitCode === null) child.kill('SIGTERM');
  stub?.close();
  await demo?.close();
});
