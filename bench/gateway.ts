// `npm run bench:gateway [-- --short]`: what the gateway adds to a tool call, in both eras. The same
// read call (get_order, Streamable HTTP on loopback) direct, through the gateway and through a bare
// node:http hop (the floor any gateway process pays on these cores), in rotating rounds at 1 and 16
// connections, sent by wrk with a fixed body (each request its own JSON-RPC id
// and request reference), to the demo's get_order on SDK v2 (bench/lib/mcp-v2-server.ts). The 2025
// era: on an MCP session opened by SDK v2's client pinned to 2025 (`legacy`), whose server answers
// a call as an SSE stream of one event. The 2026-07-28 era: no session and no initialize, every
// request carrying its own `_meta` envelope and headers, as SDK v2's client sends them. Each era
// has its server and its gateway: scripts/gateway.ts bundled by esbuild with
// scripts/pack-mcp.ts's externals, run by node with the package's flags, in its own process; its
// console is a stub on loopback that answers policy (a trusted read) and outcome batches at once,
// so the figures are the gateway's. Its CPU and memory come from the process itself
// (process.cpuUsage and memoryUsage, asked over an IPC channel). `--era 2025` or `--era 2026`
// runs one era only. In the 2025 rounds also the previous gateway (PREVIOUS: the commit before
// SDK v2 came in, SDK v1's relay, which served 2025 clients only), built from git history the same
// way. Exits non-zero on errors, never on a missed target.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { build } from 'esbuild';
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  Client,
  PROTOCOL_VERSION_META_KEY,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { GATEWAY_NODE_FLAGS } from '@/lib/gateway/node-flags';
import { PACKAGE_EXTERNALS } from '../scripts/lib/package-externals';
import { childEnvironment } from '@/lib/config';
import { startV2BenchServer } from './lib/mcp-v2-server';
import { int, log, percentile, readFlags, report, root, type Figure } from './lib/report';
import { onCleanup, runMain } from './lib/setup';
import { ensureWrk, MARK, wrk, type WrkRun } from './lib/wrk';

/** The gateway as it was before SDK v2 (issue 42): the commit before SDK v2 became a dependency. */
const PREVIOUS = '677d1cc72992db17e212070e2f51386de63c1972';
const flags = readFlags({ rounds: [6, 3], 'round-seconds': [3, 1], 'memory-seconds': [100, 20] }, ['era']);
// Answers the benchmark's question over IPC: the process's own memory and CPU so far.
const REPORTER = `process.on('message', () => process.send?.({ rss: process.memoryUsage().rss, cpu: process.cpuUsage() }));`;
// Each call its own request reference, as an agent's tasks are: the gateway's read guards count
// a request's calls against its budget, and one reference for every call of a run would spend it.
const REF = { 'countersign/requestRef': `bench-${MARK}` };
const ARGS = { name: 'get_order', arguments: { orderId: '4411' } };
const CALL_2025 = JSON.stringify({ jsonrpc: '2.0', id: MARK, method: 'tools/call', params: { ...ARGS, _meta: REF } });
const MODERN = '2026-07-28';
// What SDK v2's client sends on a 2026-07-28 call: the envelope in _meta (protocol version and
// capabilities required, client info), and the same in the standard headers (modernHeaders).
const CALL_2026 = JSON.stringify({
  jsonrpc: '2.0',
  id: MARK,
  method: 'tools/call',
  params: {
    ...ARGS,
    _meta: {
      [PROTOCOL_VERSION_META_KEY]: MODERN,
      [CLIENT_INFO_META_KEY]: { name: 'bench', version: '1.0.0' },
      [CLIENT_CAPABILITIES_META_KEY]: {},
      ...REF,
    },
  },
});

/** A console stub: every tool a trusted read, every outcome batch taken. */
async function stubConsole(): Promise<string> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      if (req.url === '/api/v1/policy/evaluate') {
        const asked = JSON.parse(body) as { server: string; tools: { name: string }[] };
        const tools = asked.tools.map((t) => ({
          name: t.name,
          readOnly: true,
          blocked: false,
          requiredApprovals: 0,
          reason: 'stub',
        }));
        return void res.end(JSON.stringify({ server: asked.server, trusted: true, tools }));
      }
      if (req.url === '/api/v1/outcomes') return void res.end('{"accepted":0,"duplicates":0}');
      res.writeHead(404).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  onCleanup('close the console stub', () => void server.close());
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** What a gateway is built from: a source tree holding `scripts/gateway.ts`, and the packages it leaves to npm. */
interface Build {
  tree: string;
  externals: readonly string[];
  name: string;
}

const CURRENT: Build = { tree: root, externals: PACKAGE_EXTERNALS, name: 'gateway-bench' };

/**
 * The previous gateway's source, from git history, under .bench-data (beside node_modules, whose
 * SDK v1 and zod it was built with): its own tsconfig resolves its `@/` imports.
 */
function previousBuild(): Build {
  const tree = path.join(root, '.bench-data/previous-gateway', PREVIOUS.slice(0, 12));
  if (!existsSync(path.join(tree, 'scripts/gateway.ts'))) {
    rmSync(tree, { recursive: true, force: true });
    mkdirSync(tree, { recursive: true });
    const tar = execFileSync('git', ['archive', '--format=tar', PREVIOUS, 'lib', 'scripts', 'tsconfig.json'], {
      cwd: root,
      maxBuffer: 1 << 30,
    });
    execFileSync('tar', ['-x', '-C', tree], { input: tar });
  }
  return { tree, externals: ['@modelcontextprotocol/sdk', 'zod'], name: 'gateway-previous-bench' };
}

/** The gateway bundled as the package ships it, in its own process; its URL and what it says of itself. */
async function startGateway(consoleUrl: string, upstream: URL, from: Build = CURRENT) {
  const outfile = path.join(root, `.bench-data/${from.name}.mjs`); // beside node_modules, for the externals
  mkdirSync(path.dirname(outfile), { recursive: true });
  await build({
    entryPoints: [path.join(from.tree, 'scripts/gateway.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: from.externals.flatMap((e) => [e, `${e}/*`]),
    banner: { js: REPORTER },
    logLevel: 'warning',
  });
  const args = ['--server', 'billing-mcp', '--principal', 'bench', '--organization', 'bench'];
  const gateway = spawn(
    process.execPath,
    [...GATEWAY_NODE_FLAGS, outfile, ...args, '--upstream', upstream.toString(), '--port', '0'],
    {
      env: childEnvironment({ COUNTERSIGN_URL: consoleUrl, COUNTERSIGN_API_KEY: 'cs_live_bench' }),
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    },
  );
  onCleanup('stop the gateway', () => void gateway.kill('SIGTERM'));
  const url = await new Promise<string>((resolve, reject) => {
    let err = '';
    gateway.stderr!.on('data', (c: Buffer) => {
      err += c.toString();
      const m = /listening on (\S+?),/.exec(err);
      if (m) resolve(m[1]);
    });
    gateway.once('exit', (code) => reject(new Error(`the gateway exited ${code}: ${err}`)));
  });
  const self = () =>
    new Promise<{ rss: number; cpuMs: number }>((resolve) => {
      gateway.once('message', (m: { rss: number; cpu: { user: number; system: number } }) =>
        resolve({ rss: m.rss, cpuMs: (m.cpu.user + m.cpu.system) / 1000 }),
      );
      gateway.send('report');
    });
  return { url, self };
}

// The floor: one bare node:http hop in its own process, forwarding each request as it is to the
// server on a kept-alive connection and piping the answer back; no MCP, no records.
const HOP = `
const http = require('node:http');
const to = new URL(process.argv[1]);
const agent = new http.Agent({ keepAlive: true, maxFreeSockets: 256 });
const server = http.createServer((req, res) => {
  const up = http.request(
    { host: to.hostname, port: to.port, path: to.pathname, method: req.method, headers: req.headers, agent },
    (answer) => { res.writeHead(answer.statusCode, answer.headers); answer.pipe(res); },
  );
  up.on('error', () => res.destroy());
  req.pipe(up);
});
server.listen(0, '127.0.0.1', () => process.stderr.write('listening on http://127.0.0.1:' + server.address().port + '/mcp,'));
`;

const HOP_NAME = 'a bare node:http hop (the floor)';
const PREVIOUS_NAME = `the previous gateway (${PREVIOUS.slice(0, 7)}, SDK v1's relay)`;

/** The bare hop in front of `upstream`, in its own process; its URL. */
async function startBareHop(upstream: URL): Promise<string> {
  const hop = spawn(process.execPath, ['-e', HOP, upstream.toString()], { stdio: ['ignore', 'ignore', 'pipe'] });
  onCleanup('stop the bare hop', () => void hop.kill('SIGTERM'));
  return new Promise<string>((resolve, reject) => {
    let err = '';
    hop.stderr!.on('data', (c: Buffer) => {
      err += c.toString();
      const m = /listening on (\S+?),/.exec(err);
      if (m) resolve(m[1]);
    });
    hop.once('exit', (code) => reject(new Error(`the bare hop exited ${code}: ${err}`)));
  });
}

/** A 2025 MCP session opened by SDK v2's client, checked with one call; the headers wrk sends in it. */
async function session(url: string, token: string): Promise<Record<string, string>> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'bench', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } });
  await client.connect(transport);
  onCleanup('close an MCP client', () => client.close());
  const answer = await client.callTool({ name: 'get_order', arguments: { orderId: '4411' } });
  if (answer.isError) throw new Error(`get_order through ${url} failed: ${JSON.stringify(answer.content)}`);
  return {
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-session-id': transport.sessionId!,
    'mcp-protocol-version': transport.protocolVersion!,
  };
}

/**
 * The headers of a 2026-07-28 call (no session), checked with one call of the body wrk sends: the
 * answer (JSON, or the result event of an SSE stream) must be get_order's result.
 */
async function modernHeaders(url: string, token: string): Promise<Record<string, string>> {
  const headers = {
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN,
    'mcp-method': 'tools/call',
    'mcp-name': ARGS.name,
  };
  const res = await fetch(url, { method: 'POST', headers, body: CALL_2026.replaceAll(MARK, 'check-01') });
  const text = await res.text();
  const json = res.headers.get('content-type')?.includes('text/event-stream')
    ? text
        .split('\n')
        .filter((l) => l.startsWith('data: ') && l.includes('"result"'))
        .pop()
        ?.slice(6)
    : text;
  const answer = JSON.parse(json ?? 'null') as { result?: { isError?: boolean; structuredContent?: unknown } } | null;
  if (!res.ok || !answer?.result?.structuredContent || answer.result.isError)
    throw new Error(`get_order (2026-07-28) through ${url} failed: ${res.status} ${text.slice(0, 500)}`);
  return headers;
}

/** A way to the server; `name` says what it is in the rows, after "added by". */
type Path = { name: string; url: string; headers: Record<string, string> };
type Gateway = Awaited<ReturnType<typeof startGateway>>;

/**
 * One era: direct (paths[0]), through the gateway (paths[1]) and the paths measured beside it (the
 * bare hop, the previous gateway), rounds rotating, then memory.
 */
async function measure(era: string, paths: Path[], body: string, gateway: Gateway, problems: string[]) {
  let prefix = 0;
  const calls = async (i: number, connections: number, seconds: number) => {
    const r = await wrk({
      url: paths[i].url,
      headers: paths[i].headers,
      connections,
      seconds,
      method: 'POST',
      bodies: [Buffer.from(body)],
      prefix: (prefix++).toString(36).padStart(2, '0'),
    });
    if (r.non2xx || r.socketErrors || r.timeouts) problems.push(`${era} ${paths[i].name}: ${JSON.stringify(r)}`);
    return r;
  };
  const figures: Figure[] = [];
  for (const connections of [1, 16]) {
    const order = paths.map((_, i) => i);
    for (const i of order) await calls(i, connections, 1); // warm-up
    const runs: WrkRun[][] = paths.map(() => []);
    let cpuMs = 0;
    for (let round = 0; round < flags.rounds; round++) {
      for (const i of [...order.slice(round % order.length), ...order.slice(0, round % order.length)]) {
        const before = i === 1 ? await gateway.self() : null;
        runs[i].push(await calls(i, connections, flags['round-seconds']));
        if (before) cpuMs += (await gateway.self()).cpuMs - before.cpuMs;
      }
    }
    // Each round's percentiles, the median over rounds; throughput over all of them.
    const median = (i: number, k: 'p50' | 'p99') =>
      percentile(
        runs[i].map((r) => r[k]),
        50,
      );
    const rate = (i: number) =>
      runs[i].reduce((a, r) => a + r.requests, 0) / runs[i].reduce((a, r) => a + r.seconds, 0);
    const gatewayCalls = runs[1].reduce((a, r) => a + r.requests, 0);
    log(
      `${era}, ${connections} connection(s): direct ${int(rate(0))}/s, gateway ${int(rate(1))}/s, gateway CPU ${(cpuMs / gatewayCalls).toFixed(3)} ms/call`,
    );
    for (const k of ['p50', 'p99'] as const)
      figures.push({
        name: `${era}, ${connections} connection(s): ${k} added by the gateway`,
        value: median(1, k) - median(0, k),
        unit: 'ms',
        note: `${median(1, k).toFixed(2)} ms through it`,
        ceiling: { name: `direct ${k}`, value: median(0, k), unit: 'ms' },
        target: { op: '≤', value: k === 'p50' ? 1 : 5, unit: 'ms' },
      });
    for (let i = 2; i < paths.length; i++)
      for (const k of ['p50', 'p99'] as const)
        figures.push({
          name: `${era}, ${connections} connection(s): ${k} added by ${paths[i].name}`,
          value: median(i, k) - median(0, k),
          unit: 'ms',
          note: `${median(i, k).toFixed(2)} ms through it, ${int(rate(i))} calls/s`,
        });
    figures.push({
      name: `${era}, ${connections} connection(s): throughput through the gateway`,
      value: rate(1) / rate(0),
      unit: '×',
      note: `${int(rate(1))} calls/s; gateway CPU ${(cpuMs / gatewayCalls).toFixed(3)} ms per call`,
      ceiling: { name: 'direct', value: rate(0), unit: 'calls/s' },
      target: { op: '≥', value: 0.7, unit: '×' },
    });
  }

  // Memory: the gateway's resident set before and after a long run at 16 connections, each read
  // after a pause. No collection is forced, so the first half of the run is left out: the heap
  // grows to its working size first, and what still grows after that is what a leak would be.
  const settled = async () => (await new Promise((r) => setTimeout(r, 1_500)), (await gateway.self()).rss / 2 ** 20);
  await calls(1, 16, Math.ceil(flags['memory-seconds'] / 2));
  const before = await settled();
  const long = await calls(1, 16, flags['memory-seconds']);
  const after = await settled();
  figures.push({
    name: `${era}: gateway memory growth over ${int(long.requests)} calls`,
    value: after - before,
    unit: 'MB',
    note: `RSS ${before.toFixed(0)} → ${after.toFixed(0)} MB`,
    target: { op: '≤', value: 20, unit: 'MB' },
  });
  return figures;
}

runMain(async () => {
  if (flags.era !== undefined && !['2025', '2026'].includes(flags.era)) throw new Error('--era must be 2025 or 2026');
  ensureWrk();
  const consoleUrl = await stubConsole();
  const problems: string[] = [];
  const figures: Figure[] = [];
  if (flags.era !== '2026') {
    const server = await startV2BenchServer();
    onCleanup('stop the SDK v2 server', () => server.close());
    const gateway = await startGateway(consoleUrl, server.url);
    const previous = await startGateway(consoleUrl, server.url, previousBuild());
    log(`2025: gateway ${gateway.url} (previous: ${previous.url}) → SDK v2 server ${server.url}, in 2025 sessions`);
    const direct = await session(server.url.toString(), server.token);
    const paths = [
      { name: 'direct', url: server.url.toString(), headers: direct },
      { name: 'the gateway', url: gateway.url, headers: await session(gateway.url, server.token) },
      // The bare hop carries the direct path's session.
      { name: HOP_NAME, url: await startBareHop(server.url), headers: direct },
      { name: PREVIOUS_NAME, url: previous.url, headers: await session(previous.url, server.token) },
    ];
    figures.push(...(await measure('2025', paths, CALL_2025, gateway, problems)));
  }
  if (flags.era !== '2025') {
    const server = await startV2BenchServer();
    onCleanup('stop the SDK v2 server', () => server.close());
    const gateway = await startGateway(consoleUrl, server.url);
    log(`${MODERN}: gateway ${gateway.url} → SDK v2 server ${server.url}`);
    const direct = await modernHeaders(server.url.toString(), server.token);
    const paths = [
      { name: 'direct', url: server.url.toString(), headers: direct },
      { name: 'the gateway', url: gateway.url, headers: await modernHeaders(gateway.url, server.token) },
      { name: HOP_NAME, url: await startBareHop(server.url), headers: direct },
    ];
    figures.push(...(await measure(MODERN, paths, CALL_2026, gateway, problems)));
  }
  report(
    'gateway',
    undefined,
    { ...flags, client: 'wrk, 1 thread', servers: 'in the benchmark process, one gateway per era' },
    figures,
  );
  for (const problem of problems) console.error(`[bench] ${problem}`);
  return problems.length ? 1 : 0;
});
