// A 2026-07-28 client in front of a 2025 server that asks its client mid-call (docs/gateway.md
// "Server requests mid-call"): SDK v2's client pinned to 2026-07-28, with handlers that answer
// elicitation, sampling and roots, calls through the gateway over HTTP a tool of a 2025 server
// (SDK v1) that elicits, samples and lists roots before it answers. Each of the server's requests
// reaches the client as an `input_required` round mirroring it, the client's answers reach the
// server, and the call ends with the server's result, recorded once, its rounds noted in the
// record (`observed.rounds`: who asked and which kind, never the question or the answer). Two clients on the same shared
// session at once: each is asked only its own call's questions. A client that never retries: its
// call is cancelled upstream and recorded as left at its round; its state, like any state brought
// to a gateway that no longer holds the call (a restart), gets the invalid-state error. Over stdio,
// the same server as the gateway's child, the same client as the host.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { Client, StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client';
import { cli } from '@/lib/auth/actor';
import { setPolicyRule } from '@/lib/server/policy/policy-rules';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { uniq } from '@/testing/factories';
import { askingServer, type Seen } from '@/testing/mcp-asking-server';
import { startLegacyHttp } from '@/testing/mcp-legacy-http';
import { MODERN_ENVELOPE, postModernCall } from '@/testing/raw-mcp-session';
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

/** The asking server (testing/mcp-asking-server.ts) over HTTP, a session per client. */
async function askingHttp(): Promise<{ url: string; seen: Seen }> {
  const seen: Seen = { answers: [], cancelled: 0 };
  const { url } = await startLegacyHttp(() => askingServer(seen), open);
  return { url, seen };
}

async function gatewayFor(upstream: string, over: Partial<GatewayContext> = {}) {
  const server = uniq('v2-asking');
  await trustServer(cli, server);
  await setPolicyRule(cli, { server, tool: null, requiredApprovals: 0 });
  const t = testContext(actors, server, over);
  const gateway = await runHttp(t.ctx, new URL(upstream), '127.0.0.1', 0);
  open.push(async () => {
    await gateway.close();
    await t.ctx.reporter.close(2000);
  });
  return { ...t, url: gateway.url };
}

/** The survey's three rounds, as docs/api.md `observed.rounds` names them. */
const surveyRounds = (['elicitation_form', 'sampling', 'roots'] as const).map((kind) => ({
  atMs: expect.any(Number),
  by: 'server',
  asked: [kind],
  requests: 1,
}));

interface Asked {
  method: string;
  params: unknown;
}

/**
 * SDK v2's client pinned to 2026-07-28 (or in `mode`), declaring elicitation, sampling and roots,
 * answering each with `account`, `summary` and `root`; `asked` holds what it was asked. `first`
 * runs before the elicitation is answered.
 */
async function answeringClient(
  to: string | Transport,
  answers: { account: string; summary: string; root: string },
  first?: () => Promise<void>,
  mode: 'legacy' | { pin: '2026-07-28' } = { pin: '2026-07-28' },
) {
  const asked: Asked[] = [];
  const client = new Client(
    { name: 'answering-client', version: '1.0.0' },
    {
      versionNegotiation: { mode },
      capabilities: { elicitation: { form: {} }, sampling: {}, roots: {} },
    },
  );
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.push({ method: request.method, params: request.params });
    await first?.();
    return { action: 'accept', content: { account: answers.account } };
  });
  client.setRequestHandler('sampling/createMessage', async (request) => {
    asked.push({ method: request.method, params: request.params });
    return { role: 'assistant', content: { type: 'text', text: answers.summary }, model: 'test-model' };
  });
  client.setRequestHandler('roots/list', async (request) => {
    asked.push({ method: request.method, params: request.params });
    return { roots: [{ uri: answers.root, name: 'docs' }] };
  });
  open.push(() => client.close());
  await client.connect(typeof to === 'string' ? new StreamableHTTPClientTransport(new URL(to)) : to);
  return { client, asked };
}

describe('a 2025 server that asks its client mid-call, behind a 2026-07-28 client', () => {
  it('each request of the server is a round of the call, answered by the client, and the call ends once', async () => {
    const upstream = await askingHttp();
    const g = await gatewayFor(upstream.url);
    const { client, asked } = await answeringClient(g.url, {
      account: 'acc_7',
      summary: 'all quiet',
      root: 'file:///srv/docs',
    });
    const ref = uniq('req');
    const result = await client.callTool({
      name: 'survey',
      arguments: { topic: 'billing' },
      _meta: { 'countersign/requestRef': ref },
    });
    expect(result.content).toEqual([{ type: 'text', text: 'billing: acc_7; all quiet; file:///srv/docs' }]);
    // The client was asked what the server asked, in its order, as the server asked it.
    expect(asked).toEqual([
      {
        method: 'elicitation/create',
        params: expect.objectContaining({
          message: 'Which account is billing about?',
          requestedSchema: { type: 'object', properties: { account: { type: 'string' } }, required: ['account'] },
        }),
      },
      {
        method: 'sampling/createMessage',
        params: expect.objectContaining({
          messages: [{ role: 'user', content: { type: 'text', text: 'Summarize billing' } }],
          maxTokens: 50,
        }),
      },
      { method: 'roots/list' },
    ]);
    // The server got the client's answers as the client gave them.
    expect(upstream.seen.answers).toEqual([
      [
        { action: 'accept', content: { account: 'acc_7' } },
        expect.objectContaining({
          role: 'assistant',
          content: { type: 'text', text: 'all quiet' },
          model: 'test-model',
        }),
        { roots: [{ uri: 'file:///srv/docs', name: 'docs' }] },
      ],
    ]);
    // One record for the call, its request count the three rounds' retries and the first request.
    const records = await recordDetailsOf(ref, g.ctx.reporter);
    expect(records.map((r) => [r.delivery, r.category, r.attempt])).toEqual([['completed', 'ok', 4]]);
    expect(records[0].eventId).toMatch(/^evt_[0-9a-f-]{36}\.4$/);
    expect((records[0].observed as { rounds?: unknown }).rounds).toEqual(surveyRounds);
    // Nothing of what was asked or answered is in the record.
    expect(JSON.stringify(records[0].observed)).not.toMatch(/billing|acc_7|quiet|srv/);
  });

  it('two clients on the same shared session at once: each is asked only its own call', async () => {
    const upstream = await askingHttp();
    const g = await gatewayFor(upstream.url);
    // Neither client answers its elicitation before both were asked: both calls are held at once.
    let release!: () => void;
    const both = new Promise<void>((resolve) => (release = resolve));
    let waiting = 0;
    const barrier = async () => {
      waiting += 1;
      if (waiting === 2) release();
      await both;
    };
    const a = await answeringClient(g.url, { account: 'acc_a', summary: 'from a', root: 'file:///a' }, barrier);
    const b = await answeringClient(g.url, { account: 'acc_b', summary: 'from b', root: 'file:///b' }, barrier);
    const [ra, rb] = await Promise.all([
      a.client.callTool({ name: 'survey', arguments: { topic: 'alpha' } }),
      b.client.callTool({ name: 'survey', arguments: { topic: 'beta' } }),
    ]);
    expect(ra.content).toEqual([{ type: 'text', text: 'alpha: acc_a; from a; file:///a' }]);
    expect(rb.content).toEqual([{ type: 'text', text: 'beta: acc_b; from b; file:///b' }]);
    expect(a.asked.map((x) => x.method)).toEqual(['elicitation/create', 'sampling/createMessage', 'roots/list']);
    expect(b.asked.map((x) => x.method)).toEqual(['elicitation/create', 'sampling/createMessage', 'roots/list']);
    expect(a.asked[0].params).toMatchObject({ message: 'Which account is alpha about?' });
    expect(b.asked[0].params).toMatchObject({ message: 'Which account is beta about?' });
  });

  it('a client that never retries: the call is cancelled upstream and recorded at its round; its state is then invalid', async () => {
    const upstream = await askingHttp();
    const g = await gatewayFor(upstream.url, { heldCallMs: 300 });
    const ref = uniq('req');
    const round = (
      await postModernCall(g.url, 1, {
        name: 'survey',
        arguments: { topic: 'gamma' },
        _meta: { ...MODERN_ENVELOPE, 'countersign/requestRef': ref },
      })
    ).message;
    expect(round.result).toMatchObject({
      resultType: 'input_required',
      inputRequests: {
        'elicitation-1': {
          method: 'elicitation/create',
          params: { message: 'Which account is gamma about?' },
        },
      },
      requestState: expect.any(String),
    });
    await expect.poll(() => upstream.seen.cancelled).toBe(1);
    const records = await recordDetailsOf(ref, g.ctx.reporter);
    // Left at its round, as any call whose client does not come back (the classifier's word for it).
    expect(records).toEqual([
      {
        eventId: expect.stringMatching(/^evt_[0-9a-f-]{36}\.1$/),
        toolName: 'survey',
        attempt: 1,
        observed: { sent: true, resultType: 'input_required', rounds: [surveyRounds[0]] },
        boundary: 'protocol',
        delivery: 'rejected',
        category: 'input_required',
        retry: 'after_input',
      },
    ]);
    // Too late: the call is no longer held (as after a restart of the gateway).
    const late = (
      await postModernCall(g.url, 2, {
        name: 'survey',
        arguments: { topic: 'gamma' },
        inputResponses: { 'elicitation-1': { action: 'accept', content: { account: 'acc_9' } } },
        requestState: (round.result as { requestState: string }).requestState,
        _meta: { ...MODERN_ENVELOPE, 'countersign/requestRef': ref },
      })
    ).message;
    expect(late.error).toMatchObject({ code: -32602, message: 'Invalid or expired requestState' });
    expect(upstream.seen.answers).toEqual([]);
  });
});

describe('over stdio, the same server as the child of the gateway', () => {
  it("each of the child's requests is a round of the host's call, answered by the host", async () => {
    const { hostSide, ctx } = await stdioGateway(actors, tsxCommand('mcp-asking-server.ts', 'stdio'), open);
    const { client, asked } = await answeringClient(hostSide, {
      account: 'acc_s',
      summary: 'piped',
      root: 'file:///s',
    });
    const ref = uniq('req');
    const result = await client.callTool({
      name: 'survey',
      arguments: { topic: 'stdio' },
      _meta: { 'countersign/requestRef': ref },
    });
    expect(result.content).toEqual([{ type: 'text', text: 'stdio: acc_s; piped; file:///s' }]);
    expect(asked.map((a) => a.method)).toEqual(['elicitation/create', 'sampling/createMessage', 'roots/list']);
    const records = await recordDetailsOf(ref, ctx.reporter);
    expect(records.map((r) => [r.delivery, r.category, r.attempt])).toEqual([['completed', 'ok', 4]]);
    expect((records[0].observed as { rounds?: unknown }).rounds).toEqual(surveyRounds);
  });

  it("a 2025 host that probes with server/discover and then sends initialize: each of the child's requests reaches it, and the call ends once", async () => {
    const { hostSide, ctx } = await stdioGateway(actors, tsxCommand('mcp-asking-server.ts', 'stdio'), open);
    // The probe, as SDK v2's client sends it in auto mode: answered in the 2026-07-28 era.
    const answers: Record<string, unknown>[] = [];
    hostSide.onmessage = (m) => void answers.push(m as Record<string, unknown>);
    await hostSide.start();
    await hostSide.send({
      jsonrpc: '2.0',
      id: 'probe-1',
      method: 'server/discover',
      params: { _meta: MODERN_ENVELOPE },
    });
    await vi.waitFor(() => expect(answers).toHaveLength(1), { timeout: 10_000 });
    expect(answers[0]).toMatchObject({ id: 'probe-1', result: { supportedVersions: ['2026-07-28'] } });
    // The host then opens a 2025 session after all (served by the factory's 2025 instance).
    const { client, asked } = await answeringClient(
      hostSide,
      { account: 'acc_p', summary: 'probed', root: 'file:///p' },
      undefined,
      'legacy',
    );
    expect(client.getProtocolEra()).toBe('legacy');
    const ref = uniq('req');
    const result = await client.callTool({
      name: 'survey',
      arguments: { topic: 'probe' },
      _meta: { 'countersign/requestRef': ref },
    });
    expect(result.content).toEqual([{ type: 'text', text: 'probe: acc_p; probed; file:///p' }]);
    expect(asked.map((a) => a.method)).toEqual(['elicitation/create', 'sampling/createMessage', 'roots/list']);
    const records = await recordDetailsOf(ref, ctx.reporter);
    expect(records.map((r) => [r.delivery, r.category])).toEqual([['completed', 'ok']]);
    // The SDK put each round to the 2025 host as the request itself, mid-call: still a round of the one call.
    expect((records[0].observed as { rounds?: unknown }).rounds).toEqual(surveyRounds);
  });
});
