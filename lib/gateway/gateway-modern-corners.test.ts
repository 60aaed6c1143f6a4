// The corners of a 2026-07-28 client in front of a 2025 server that asks its client mid-call
// (docs/gateway.md "Server requests mid-call"), over HTTP: SDK v2's client pinned to 2026-07-28
// (or its requests sent by hand where the test reads the wire) through the gateway to an SDK v1
// server (testing/mcp-asking-corners.ts), the real console recording. The server asks a ninth
// time in one call; asks for sampling the client did not declare; asks on the session's own stream,
// outside any call; reports progress between its requests; asks in URL mode and then says the
// page was visited; stops waiting for its request and answers the call while the client is away.
// Over stdio, the same server as the gateway's child asks while the host has two calls in flight.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import {
  Client,
  StreamableHTTPClientTransport,
  type ClientCapabilities,
  type Transport,
} from '@modelcontextprotocol/client';
import { cli } from '@/lib/auth/actor';
import { setPolicyRule } from '@/lib/server/policy/policy-rules';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { uniq } from '@/testing/factories';
import { cornersServer, type CornersSeen } from '@/testing/mcp-asking-corners';
import { startLegacyHttp } from '@/testing/mcp-legacy-http';
import { MODERN_ENVELOPE, postModernCall } from '@/testing/raw-mcp-session';
import { durationsOf } from '@/testing/record-durations';
import { stdioGateway, tsxCommand } from '@/testing/stdio-gateway';
import {
  closedAfterEach,
  consoleActors,
  recordDetailsOf,
  testContext,
  type ConsoleActors,
} from '@/testing/gateway-fixtures';
import type { GatewayContext } from './context';
import { runHttp } from './http';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

let actors: ConsoleActors;
beforeAll(async () => {
  actors = await consoleActors();
});
const open = closedAfterEach();

const METHOD_NOT_FOUND = -32601;

/** The corners server over HTTP and a gateway in front of it; `seen` is what the server's requests got. */
async function setUp(over: Partial<GatewayContext> = {}) {
  const seen: CornersSeen = { got: [], gaveUp: 0 };
  const { url, sessionsOpened } = await startLegacyHttp(() => cornersServer(seen), open);
  const server = uniq('v2-corners');
  await trustServer(cli, server);
  await setPolicyRule(cli, { server, tool: null, requiredApprovals: 0 });
  const t = testContext(actors, server, over);
  const gateway = await runHttp(t.ctx, new URL(url), '127.0.0.1', 0);
  open.push(async () => {
    await gateway.close();
    await t.ctx.reporter.close(2000);
  });
  return { seen, sessionsOpened, url: gateway.url, reporter: t.ctx.reporter, console: t.console };
}

/** SDK v2's client pinned to 2026-07-28 (or in `mode`) with `capabilities`, answering each elicitation with `value-<n>`. */
async function client(
  to: string | Transport,
  capabilities: ClientCapabilities,
  mode: 'legacy' | { pin: '2026-07-28' } = { pin: '2026-07-28' },
) {
  const asked: { method: string; params: unknown }[] = [];
  const c = new Client({ name: 'corners-client', version: '1.0.0' }, { versionNegotiation: { mode }, capabilities });
  // The SDK lets a client answer only what it declared.
  if (capabilities.elicitation)
    c.setRequestHandler('elicitation/create', async (request) => {
      asked.push({ method: request.method, params: request.params });
      return { action: 'accept', content: { value: `value-${asked.length}` } };
    });
  if (capabilities.sampling)
    c.setRequestHandler('sampling/createMessage', async (request) => {
      asked.push({ method: request.method, params: request.params });
      return { role: 'assistant', content: { type: 'text', text: 'sampled' }, model: 'test-model' };
    });
  if (capabilities.roots)
    c.setRequestHandler('roots/list', async (request) => {
      asked.push({ method: request.method, params: request.params });
      return { roots: [{ uri: 'file:///srv', name: 'srv' }] };
    });
  open.push(() => c.close());
  await c.connect(typeof to === 'string' ? new StreamableHTTPClientTransport(new URL(to)) : to);
  return { client: c, asked };
}

const textOf = (result: { content?: unknown }) => (result.content as { text: string }[])[0].text;

describe('a 2025 server asking mid-call, behind a 2026-07-28 client: the corners', () => {
  it('the ninth request of the server in one call is refused to it (-32601), and the call goes on to its result', async () => {
    const m = await setUp();
    const { client: c, asked } = await client(m.url, { elicitation: { form: {} } });
    const ref = uniq('req');
    const result = await c.callTool({
      name: 'ask_repeatedly',
      arguments: { times: 9 },
      _meta: { 'countersign/requestRef': ref },
    });
    // Eight rounds put to the client, the ninth request refused to the server: the bound is 8.
    expect(asked.map((a) => (a.params as { message: string }).message)).toEqual([
      'Value 1?',
      'Value 2?',
      'Value 3?',
      'Value 4?',
      'Value 5?',
      'Value 6?',
      'Value 7?',
      'Value 8?',
    ]);
    expect(JSON.parse(textOf(result))).toEqual([...Array(8).fill('answered'), METHOD_NOT_FOUND]);
    expect(m.seen.got[0][7]).toEqual({ answer: { action: 'accept', content: { value: 'value-8' } } });
    expect(m.seen.got[0][8]).toEqual({ code: METHOD_NOT_FOUND });
    // One record: the server's result, after the first request and its eight retries.
    const records = await recordDetailsOf(ref, m.reporter);
    expect(records.map((r) => [r.delivery, r.category, r.attempt])).toEqual([['completed', 'ok', 9]]);
  });

  it('sixteen clients arriving together, before the era is known, share one upstream session', async () => {
    const m = await setUp();
    const clients = await Promise.all(Array.from({ length: 16 }, () => client(m.url, {})));
    const results = await Promise.all(
      clients.map(({ client: c }) => c.callTool({ name: 'pause', arguments: { ms: 0 } })),
    );
    expect(results.map(textOf)).toEqual(Array(16).fill('"paused"'));
    expect(m.sessionsOpened()).toBe(1);
  });

  it('a request for sampling from a client that declared only elicitation: refused to the server (-32601), the client not asked', async () => {
    const m = await setUp();
    const { client: c, asked } = await client(m.url, { elicitation: { form: {} } });
    const ref = uniq('req');
    const result = await c.callTool({ name: 'summarize', arguments: {}, _meta: { 'countersign/requestRef': ref } });
    expect(JSON.parse(textOf(result))).toEqual([{ code: METHOD_NOT_FOUND }]);
    expect(asked).toEqual([]);
    const records = await recordDetailsOf(ref, m.reporter);
    expect(records.map((r) => [r.delivery, r.category, r.attempt])).toEqual([['completed', 'ok', 1]]);
  });

  it("a request sent on the session's own stream belongs to no call: refused (-32601), though a call is in flight", async () => {
    const m = await setUp();
    // The client declared roots: only the stream the request came on makes it no call's.
    const { client: c, asked } = await client(m.url, { roots: {}, elicitation: { form: {} } });
    const result = await c.callTool({ name: 'roots_off_call', arguments: {} });
    expect(JSON.parse(textOf(result))).toEqual([{ code: METHOD_NOT_FOUND }]);
    expect(asked).toEqual([]);
  });

  it("the server's progress across the rounds reaches the client, in order, above the gateway's own: never stepping back", async () => {
    // The gateway sends its own progress while it redeems the call's grant (answered late), and the
    // server's goes on above it, in the first request and in the retries of both rounds alike.
    const m = await setUp({ progressIntervalMs: 30 });
    const redemption = m.console.slow(/^\/api\/v1\/grants\/[^/]+\/redeem$/);
    void redemption.reached.then(() => setTimeout(redemption.release, 200));
    const { client: c } = await client(m.url, { elicitation: { form: {} } });
    const progress: { progress: number; total?: number; message?: string }[] = [];
    const result = await c.callTool(
      { name: 'staged_report', arguments: {} },
      {
        // The client's SDK reports its own rounds on the same callback: only what came on the wire is kept.
        onprogress: (p) => {
          if (!p.message?.startsWith('Fulfilling input required')) progress.push(p);
        },
      },
    );
    expect(textOf(result)).toBe('"reported"');
    const own = progress.filter((p) => p.message === 'Waiting for approval in Countersign');
    const k = own.length;
    expect(k).toBeGreaterThan(0); // the redemption outlasted the interval: the case in question
    expect(own.map((p) => p.progress)).toEqual(Array.from({ length: k }, (_, i) => i + 1));
    // The server's 1, 2, 3 of 3, raised by k + 1 (one above the gateway's last), in all three requests.
    expect(progress.slice(k)).toEqual([
      { progress: k + 2, total: k + 4, message: 'step 1' },
      { progress: k + 3, total: k + 4, message: 'step 2' },
      { progress: k + 4, total: k + 4, message: 'step 3' },
    ]);
    progress.forEach((p, i) => expect(p.progress).toBeGreaterThanOrEqual(i ? progress[i - 1].progress : 0));
  });

  it("a URL elicitation: the round carries no elicitationId, and the server's elicitation/complete is not relayed (2026-07-28 has none)", async () => {
    const m = await setUp();
    const envelope = {
      ...MODERN_ENVELOPE,
      'io.modelcontextprotocol/clientCapabilities': { elicitation: { url: {} } },
    };
    const ref = uniq('req');
    const call = { name: 'connect_account', arguments: {} };
    const round = await postModernCall(m.url, 1, { ...call, _meta: { ...envelope, 'countersign/requestRef': ref } });
    expect(round.message.result).toEqual({
      _meta: expect.anything(),
      resultType: 'input_required',
      inputRequests: {
        'elicitation-1': {
          method: 'elicitation/create',
          params: { mode: 'url', message: 'Sign in to the bank.', url: 'https://bank.example/connect?session=7' },
        },
      },
      requestState: expect.any(String),
    });
    const retry = await postModernCall(m.url, 2, {
      ...call,
      inputResponses: { 'elicitation-1': { action: 'accept' } },
      requestState: (round.message.result as { requestState: string }).requestState,
      _meta: { ...envelope, 'countersign/requestRef': ref },
    });
    expect(retry.message.result).toMatchObject({ content: [{ type: 'text', text: '"connected"' }] });
    // The server's completion notice came while the retry waited: nothing of it reaches the client.
    expect(retry.text).not.toContain('elicitation/complete');
    expect(m.seen.got).toEqual([[{ answer: { action: 'accept' } }]]);
    const records = await recordDetailsOf(ref, m.reporter);
    expect(records.map((r) => [r.delivery, r.category, r.attempt])).toEqual([['completed', 'ok', 2]]);
  });

  it("a call the server ends while its client is away between rounds is recorded as the server's outcome when its hold runs out", async () => {
    const m = await setUp({ heldCallMs: 1500 });
    const ref = uniq('req');
    const round = await postModernCall(m.url, 1, {
      name: 'ask_briefly',
      arguments: {},
      _meta: { ...MODERN_ENVELOPE, 'countersign/requestRef': ref },
    });
    expect(round.message.result).toMatchObject({ resultType: 'input_required' });
    // The server stops waiting for its request and answers the call; the client never comes back.
    await expect.poll(() => m.seen.gaveUp).toBe(1);
    const records = await vi.waitFor(
      async () => {
        const found = await recordDetailsOf(ref, m.reporter);
        expect(found).toHaveLength(1);
        return found;
      },
      { timeout: 5000, interval: 100 },
    );
    // The result row of DESIGN.md's table: completed / ok, after one request of the client.
    expect(records).toEqual([
      expect.objectContaining({
        toolName: 'ask_briefly',
        attempt: 1,
        delivery: 'completed',
        category: 'ok',
        retry: 'no',
      }),
    ]);
    expect(records[0].observed).not.toHaveProperty('resultType');
    // Lasting until the server's answer (it gave up on its request after 200 ms), not until the hold ran out.
    expect((await durationsOf(ref))[0]).toBeLessThan(1000);
  });
});

describe('over stdio, the same server as the child of the gateway', () => {
  it("the child's request while the host has two calls in flight is refused (-32601): it cannot tell whose it is", async () => {
    const { hostSide } = await stdioGateway(actors, tsxCommand('mcp-asking-corners.ts', 'stdio'), open);
    const { client: host, asked } = await client(hostSide, { elicitation: { form: {} } });
    // The second call asks while the first is still in flight: stdio has no stream per call to tell them apart.
    let started!: () => void;
    const inFlight = new Promise<void>((resolve) => (started = resolve));
    const first = host.callTool({ name: 'pause', arguments: { ms: 3000 } }, { onprogress: () => started() });
    await inFlight;
    const second = await host.callTool({ name: 'ask_after', arguments: { ms: 200 } });
    expect(JSON.parse(textOf(second))).toEqual([{ code: METHOD_NOT_FOUND }]);
    expect(asked).toEqual([]);
    // The first call, asked nothing, is not disturbed.
    expect(textOf(await first)).toBe('"paused"');
  });

  it("a 2025 host that probes before initialize: the child's requests are checked against what its initialize declared", async () => {
    const { hostSide } = await stdioGateway(actors, tsxCommand('mcp-asking-corners.ts', 'stdio'), open);
    const answers: unknown[] = [];
    hostSide.onmessage = (m) => void answers.push(m);
    await hostSide.start();
    await hostSide.send({
      jsonrpc: '2.0',
      id: 'probe-1',
      method: 'server/discover',
      params: { _meta: MODERN_ENVELOPE },
    });
    await vi.waitFor(() => expect(answers).toHaveLength(1), { timeout: 10_000 });
    // The probe declared elicitation only (MODERN_ENVELOPE); the initialize declares roots only.
    const { client: host, asked } = await client(hostSide, { roots: {} }, 'legacy');
    expect(host.getProtocolEra()).toBe('legacy');
    const summarized = await host.callTool({ name: 'summarize', arguments: {} });
    expect(JSON.parse(textOf(summarized))).toEqual([{ code: METHOD_NOT_FOUND }]);
    const asking = await host.callTool({ name: 'ask_repeatedly', arguments: { times: 1 } });
    expect(JSON.parse(textOf(asking))).toEqual([METHOD_NOT_FOUND]);
    expect(asked).toEqual([]);
  });
});
