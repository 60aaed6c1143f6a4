// `npm run bench:guards [-- --short]`: what the guards add to a write through the gateway
// (docs/design.md "Guards at the point of execution"). The console built and started on a fresh
// database; the gateway in process in front of the demo MCP server, its server trusted and its
// writes needing no approval, so a write is staged, its grant redeemed, and it is forwarded. The
// guards are asked in the staging request (its `guard` member). One client makes --writes
// sequential writes (issue_credit, each its own arguments and request reference, so no guard
// refuses), every other one with the guard's question taken out of the staging body on its way
// to the console: the write path without the guards, in the same run. Every request the gateway
// sends the console is timed where it leaves the gateway. The added cost is the staging's p50
// with the guards less its p50 without, plus what the staging without them still does for the
// guards (the hold's lookup of a permission refusal, which the guards' own statement answers
// when asked: timed as its SQL alone, planned each time as the staging runs it), beside the
// framework's bare route measured between writes (GET /api/v1/me: authentication and nothing
// else). The target: at most 2 ms added at p50.
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { gatewayContext } from '@/lib/gateway/context';
import { runHttp } from '@/lib/gateway/http';
import { OutcomeReporter } from '@/lib/mcp/reporter';
import { kysely } from '@/lib/server/db/kysely';
import { selectPermissionRefusal } from '@/lib/server/guards/sql';
import { startDemoMcpServer } from '../scripts/demo-mcp-server';
import { log, p, readFlags, report, type Figure } from './lib/report';
import { createApiKey, freshDatabase, newSecret, onCleanup, runMain, startConsole } from './lib/setup';

const flags = readFlags({ writes: [400, 60] });
const WARM = 20;
const SERVER = 'bench-mcp';

async function main() {
  const db = await freshDatabase(flags.databaseUrl);
  await db.sql.query(
    `INSERT INTO policy_rules (server, tool_name, required_approvals, created_by) VALUES ($1, '*', 0, 'bench')`,
    [SERVER],
  );
  const app = await startConsole({ DATABASE_URL: db.url, AUTH_SECRET: newSecret() });
  const apiKey = await createApiKey(db, ['outcomes:write', 'approvals:request', 'grants:redeem'], 'bench-guards');

  // Every request to the console, timed by path as it leaves the gateway; a staging without the
  // guards' question timed apart, when `unguarded` says to take it out.
  const times = new Map<string, number[]>();
  let unguarded = false;
  const timed = async (input: string | URL, init?: RequestInit) => {
    let route = new URL(input).pathname.replace(/\/[0-9a-f-]{36}\//, '/{id}/');
    if (route === '/api/v1/approvals' && init?.method === 'POST') {
      const staging = JSON.parse(String(init.body)) as { guard?: unknown };
      if (!staging.guard) throw new Error('the gateway staged a write without asking the guards');
      if (unguarded) {
        delete staging.guard;
        init = { ...init, body: JSON.stringify(staging) };
        route += ' (no guard)';
      }
    }
    const started = performance.now();
    const res = await fetch(input, init);
    const body = await res.arrayBuffer();
    (times.get(route) ?? times.set(route, []).get(route)!).push(performance.now() - started);
    return new Response(body, { status: res.status, headers: res.headers });
  };
  const endpoint = { url: app.origin, apiKey, fetch: timed };
  const ctx = gatewayContext({
    server: SERVER,
    principal: 'bench',
    organization: 'bench',
    approvalWaitMs: 10_000,
    endpoint,
    reporter: new OutcomeReporter(endpoint),
    log: () => {},
  });
  const demo = await startDemoMcpServer({ slowMs: 0 });
  onCleanup('stop the demo server', () => demo.close());
  const gateway = await runHttp(ctx, new URL(demo.url), '127.0.0.1', 0);
  onCleanup('stop the gateway', () => gateway.close());
  const client = new Client({ name: 'bench-guards', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(gateway.url), {
      requestInit: { headers: { authorization: `Bearer ${demo.tokens.full}` } },
    }),
  );
  onCleanup('close the client', () => client.close());
  log(`gateway ${gateway.url} → ${demo.url}`);

  const writes: number[] = [];
  const plainWrites: number[] = [];
  const bare: number[] = [];
  for (let i = -WARM; i < flags.writes * 2; i++) {
    unguarded = (i & 1) === 1;
    const started = performance.now();
    const answer = await client.callTool({
      name: 'issue_credit',
      arguments: { orderId: '4411', amount: 1 + (i & 7), currency: 'EUR', idempotencyKey: `bench-${randomUUID()}` },
      _meta: { 'countersign/requestRef': `bench-${randomUUID()}` },
    });
    const took = performance.now() - started;
    if (answer.isError) throw new Error(`a write was refused: ${JSON.stringify(answer.content)}`);
    const b = performance.now();
    await timed(new URL('/api/v1/me', app.origin), { headers: { authorization: `Bearer ${apiKey}` } });
    if (i < 0) continue;
    (unguarded ? plainWrites : writes).push(took);
    bare.push(performance.now() - b);
  }
  await ctx.reporter.flush();
  // The hold's lookup, as the staging without the guards runs it (unprepared, in its transaction).
  const hold = selectPermissionRefusal(`bench-${randomUUID()}`, 'bench').compile(kysely);
  const holdTimes: number[] = [];
  for (let i = -WARM; i < flags.writes; i++) {
    const t0 = performance.now();
    await db.sql.query(hold.sql, hold.parameters as unknown[]);
    if (i >= 0) holdTimes.push(performance.now() - t0);
  }
  const holdLookup = p(holdTimes);
  // The warm-up's requests are left out: the last --writes of each route.
  const last = (route: string) => (times.get(route) ?? []).slice(-flags.writes);
  const stage = p(last('/api/v1/approvals'));
  const plainStage = p(last('/api/v1/approvals (no guard)'));
  const redeem = p(times.get('/api/v1/grants/{id}/redeem')!.slice(-flags.writes * 2));
  const me = p(bare);
  const write = p(writes);
  const plainWrite = p(plainWrites);
  const figures: Figure[] = [
    {
      name: 'a write through the gateway: what the guards add to its staging, p50',
      value: stage.p50 - plainStage.p50 + holdLookup.p50,
      unit: 'ms',
      note: `p95 ${(stage.p95 - plainStage.p95 + holdLookup.p95).toFixed(2)} ms`,
      ceiling: { name: 'the bare route GET /api/v1/me, p50', value: me.p50, unit: 'ms' },
      target: { op: '≤', value: 2, unit: 'ms' },
    },
    {
      name: '  the whole write, p50: with the guards',
      value: write.p50,
      unit: 'ms',
      note: `without: ${plainWrite.p50.toFixed(2)} ms (p95 ${write.p95.toFixed(2)} / ${plainWrite.p95.toFixed(2)} ms)`,
    },
    {
      name: '  staging (POST /api/v1/approvals), p50: with the guards',
      value: stage.p50,
      unit: 'ms',
      note: `without: ${plainStage.p50.toFixed(2)} ms`,
    },
    { name: "  the hold's lookup alone (counted above), p50", value: holdLookup.p50, unit: 'ms' },
    { name: '  redeeming the grant, p50', value: redeem.p50, unit: 'ms' },
  ];
  return { pgVersion: db.pgVersion, figures };
}

runMain(async () => {
  const { pgVersion, figures } = await main();
  report('guards', pgVersion, { writes: flags.writes, short: flags.short }, figures);
});
