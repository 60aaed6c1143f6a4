// Approvals in the protocol for 2026-07-28 clients over HTTP (docs/gateway.md "Approvals in the protocol"): SDK v2's
// own client, pinned to 2026-07-28 and declaring URL elicitation, in front of the SDK v2 test
// server; a reviewer decides through the console's API. The call is answered at once with
// input_required (a URL elicitation to the request's page); the retry with the gateway's
// requestState runs the call once approved, even through a restarted gateway; a tampered state,
// one minted for another principal, one whose rounds this gateway would not have packed, and a
// declined elicitation are refused, the call unsent. The call's record notes the gateway's round
// (`observed.rounds`), once however often the approval was still pending.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { cli } from '@/lib/auth/actor';
import { setPolicyRule } from '@/lib/server/policy/policy-rules';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { api, call as callRoute } from '@/testing/api-harness';
import { uniq } from '@/testing/factories';
import {
  approvalsOf,
  closedAfterEach,
  consoleActors,
  decide,
  recordDetailsOf,
  recordsOf,
  testContext,
  type ConsoleActors,
} from '@/testing/gateway-fixtures';
import { startV2HttpServer } from '@/testing/mcp-v2-server';
import type { GatewayContext } from './context';
import { runHttp } from './http';
import { roundStateCodec, type RoundState } from './round-state';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

let actors: ConsoleActors;
beforeAll(async () => {
  actors = await consoleActors();
});
const open = closedAfterEach();

/** The upstream, and a way to start gateways in front of it for one server whose calls need a reviewer. */
async function setUp() {
  const upstream = await startV2HttpServer();
  open.push(() => upstream.close());
  const server = uniq('v2-approvals');
  await trustServer(cli, server);
  await setPolicyRule(cli, { server, tool: null, requiredApprovals: 1 });
  const gateway = async (over: Partial<GatewayContext> = {}) => {
    const t = testContext(actors, server, { approvalWaitMs: 1500, ...over });
    const g = await runHttp(t.ctx, new URL(upstream.url), '127.0.0.1', 0);
    open.push(async () => {
      await g.close();
      await t.ctx.reporter.close(2000);
    });
    return { url: g.url, ctx: t.ctx, close: () => g.close() };
  };
  return { gateway };
}

async function pinnedClient(url: string, autoFulfill: boolean): Promise<Client> {
  const client = new Client(
    { name: 'approval-test-client', version: '1.0.0' },
    {
      versionNegotiation: { mode: { pin: '2026-07-28' } },
      capabilities: { elicitation: { url: {} } },
      inputRequired: { autoFulfill },
    },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  open.push(() => client.close());
  return client;
}

const call = (ref: string) => ({
  name: 'test_simple_text',
  arguments: {},
  _meta: { 'countersign/requestRef': ref },
});

/** The first round, by hand: the gateway's input_required answer. */
async function firstRound(client: Client, ref: string) {
  const round = (await client.request(
    { method: 'tools/call', params: call(ref) },
    { allowInputRequired: true },
  )) as unknown as {
    resultType: string;
    inputRequests?: Record<string, { method: string; params: { mode?: string; url?: string; message?: string } }>;
    requestState?: string;
  };
  return round;
}

/** The gateway's approval round, as docs/api.md `observed.rounds` names it. */
const gateRound = { atMs: expect.any(Number), by: 'gateway', asked: ['approval'], requests: 1 };

const roundsOf = async (ref: string) =>
  (await recordDetailsOf(ref)).map((r) => [r.delivery, (r.observed as { rounds?: unknown }).rounds]);

const retry = (client: Client, ref: string, requestState: string, action = 'accept') =>
  client.request(
    {
      method: 'tools/call',
      params: { ...call(ref), inputResponses: { countersign_approval: { action } }, requestState },
    } as never,
    { allowInputRequired: true },
  ) as Promise<Record<string, unknown>>;

describe('a 2026-07-28 client whose call needs approval', () => {
  it('gets input_required at once with a URL elicitation to the request page; its own handler drives the retry, which runs once approved', async () => {
    const { gateway } = await setUp();
    const g = await gateway();
    const ref = `ref-${randomUUID()}`;
    const client = await pinnedClient(g.url, true);
    const asked: { mode?: string; url?: string; message?: string }[] = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params as never);
      await decide(actors.reviewer, ref, 'approve');
      return { action: 'accept' };
    });
    const result = await client.callTool(call(ref));
    expect(result.content).toEqual([{ type: 'text', text: 'This is a simple text response for testing.' }]);
    expect(asked).toHaveLength(1);
    expect(asked[0].mode).toBe('url');
    expect(asked[0].url).toMatch(/^http:\/\/countersign\.test\/approvals\/[^/]+$/);
    expect(asked[0].message).toContain('"test_simple_text" needs approval by a reviewer of acme');
    const approvals = await approvalsOf(ref);
    expect(approvals.map((a) => a.status)).toEqual(['redeemed']);
    const records = await recordsOf(ref, g.ctx.reporter);
    expect(records.map((r) => [r.toolName, r.delivery, r.grantId])).toEqual([
      ['test_simple_text', 'completed', approvals[0].grant?.id],
    ]);
    expect(await roundsOf(ref)).toEqual([['completed', [gateRound]]]);
  });

  it('a retry while still pending gets another round after the wait; after a restart of the gateway the same state runs the call once', async () => {
    const { gateway } = await setUp();
    const first = await gateway();
    const ref = `ref-${randomUUID()}`;
    const round = await firstRound(await pinnedClient(first.url, false), ref);
    expect(round.resultType).toBe('input_required');
    expect(Object.keys(round.inputRequests ?? {})).toEqual(['countersign_approval']);
    const pending = await retry(await pinnedClient(first.url, false), ref, round.requestState!);
    expect(pending.resultType).toBe('input_required');
    await first.close();
    const second = await gateway();
    await decide(actors.reviewer, ref, 'approve');
    const done = await retry(await pinnedClient(second.url, false), ref, pending.requestState as string);
    expect(done.content).toEqual([{ type: 'text', text: 'This is a simple text response for testing.' }]);
    const approvals = await approvalsOf(ref);
    expect(approvals.map((a) => [a.status, a.grant?.redeemedAt != null])).toEqual([['redeemed', true]]);
    // The first gateway closed with the call waiting for its retry: it recorded the call as left at
    // its approval round (never sent); the second recorded what the retry did. Two requests of one
    // call, two event ids.
    await first.ctx.reporter.flush();
    const records = await recordsOf(ref, second.ctx.reporter);
    expect(records.map((r) => [r.delivery, r.eventId.slice(-2)])).toEqual([
      ['never_sent', '.2'],
      ['completed', '.3'],
    ]);
    // Asked once: the round of the retry while still pending is the same approval, not another round.
    expect(await roundsOf(ref)).toEqual([
      ['never_sent', [gateRound]],
      ['completed', [gateRound]],
    ]);
  });

  it("a state minted with the gateway's key but carrying nine rounds, or a round out of range, is refused with -32602, and nothing is sent", async () => {
    const { gateway } = await setUp();
    const g = await gateway();
    const ref = `ref-${randomUUID()}`;
    const client = await pinnedClient(g.url, false);
    const round = await firstRound(client, ref);
    await decide(actors.reviewer, ref, 'approve');
    // The state's payload (SDK v2's wire shape: "v1." b64url({ p, exp, b? }) "." mac), minted again as the gateway would.
    const payload = JSON.parse(Buffer.from(round.requestState!.split('.')[1], 'base64url').toString()) as {
      p: RoundState;
    };
    expect(payload.p.rounds).toEqual([[expect.any(Number), 33, 1]]);
    const codec = roundStateCodec(g.ctx.endpoint.apiKey, g.ctx);
    const mint = (rounds: unknown) =>
      codec.mint({ ...payload.p, rounds } as RoundState, { mcpReq: { method: 'tools/call' } } as never);
    for (const rounds of [Array.from({ length: 9 }, () => [0, 33, 1]), [[0, 33, 5000]], [[0, 128, 1]]]) {
      const error = await retry(client, ref, await mint(rounds)).catch((e: unknown) => e);
      expect((error as ProtocolError).code, JSON.stringify(rounds)).toBe(-32602);
    }
    expect((await approvalsOf(ref)).map((a) => a.status)).toEqual(['approved']);
    expect(await recordsOf(ref, g.ctx.reporter)).toEqual([]);
    // The same payload minted with its own rounds is taken: the refusals above were the rounds'.
    const done = await retry(client, ref, await mint(payload.p.rounds));
    expect(done.content).toEqual([{ type: 'text', text: 'This is a simple text response for testing.' }]);
  });

  it('a tampered requestState is refused with -32602, and nothing is sent', async () => {
    const { gateway } = await setUp();
    const g = await gateway();
    const ref = `ref-${randomUUID()}`;
    const client = await pinnedClient(g.url, false);
    const round = await firstRound(client, ref);
    const state = round.requestState!;
    const tampered = state.slice(0, -2) + (state.endsWith('A') ? 'BB' : 'AA');
    await decide(actors.reviewer, ref, 'approve');
    const error = await retry(client, ref, tampered).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).code).toBe(-32602);
    expect((await approvalsOf(ref)).map((a) => a.status)).toEqual(['approved']);
    expect(await recordsOf(ref, g.ctx.reporter)).toEqual([]);
  });

  it('a requestState minted for another principal is refused with -32602', async () => {
    const { gateway } = await setUp();
    const mine = await gateway();
    const theirs = await gateway({ principal: 'someone_else' });
    const ref = `ref-${randomUUID()}`;
    const round = await firstRound(await pinnedClient(mine.url, false), ref);
    const error = await retry(await pinnedClient(theirs.url, false), ref, round.requestState!).catch((e: unknown) => e);
    expect((error as ProtocolError).code).toBe(-32602);
  });

  it('a client that declines gets a tool error; the request is withdrawn in the console (revoked, the gateway key named); the call is recorded as never sent', async () => {
    const { gateway } = await setUp();
    const g = await gateway();
    const ref = `ref-${randomUUID()}`;
    const client = await pinnedClient(g.url, true);
    client.setRequestHandler('elicitation/create', async () => ({ action: 'decline' }));
    const result = await client.callTool(call(ref));
    expect(result.isError).toBe(true);
    expect((result._meta as Record<string, unknown>)['countersign/error']).toMatchObject({
      category: 'approval_required',
    });
    expect((result.content as { text: string }[])[0].text).toContain('the request was withdrawn from Countersign');
    const approvals = await approvalsOf(ref);
    expect(approvals.map((a) => a.status)).toEqual(['revoked']);
    const read = await callRoute(api.getApproval, { token: actors.key, params: { id: approvals[0].id } });
    expect(read.status, read.text).toBe(200);
    expect(read.json.revoked).toMatchObject({
      by: expect.stringMatching(/^api_key:[0-9a-f-]{36}$/),
      reason: 'The client declined the elicitation: the call will not be made.',
    });
    // No reviewer can approve it any more.
    await expect(decide(actors.reviewer, ref, 'approve', 300)).rejects.toThrow(/no pending approval/);
    const records = await recordsOf(ref, g.ctx.reporter);
    expect(records.map((r) => [r.delivery, r.category])).toEqual([['never_sent', 'approval_required']]);
    expect(await roundsOf(ref)).toEqual([['never_sent', [gateRound]]]);
  });
});

describe('a 2026-07-28 call held for its grant with a progress token (docs/gateway.md "Authorization passthrough")', () => {
  it('ends on its stream, already answered 200, with -32603 when the server then refuses it (401); its record has the status', async () => {
    const upstream = await startV2HttpServer();
    open.push(() => upstream.close());
    // In front of the server: the call itself refused, as by a server whose credential was revoked meanwhile.
    const proxy = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', async () => {
        if (req.headers['mcp-method'] === 'tools/call') {
          res.writeHead(401, {
            'content-type': 'application/json',
            'www-authenticate': 'Bearer error="invalid_token"',
          });
          return void res.end('{"error":"invalid_token"}');
        }
        const headers = Object.fromEntries(
          Object.entries(req.headers).filter(([k]) => k.startsWith('mcp-') || ['accept', 'content-type'].includes(k)),
        ) as Record<string, string>;
        const answer = await fetch(upstream.url, { method: req.method, headers, body: body || undefined });
        res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
        res.end(await answer.text());
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    open.push(() => new Promise<void>((r) => proxy.close(() => r())));
    const server = uniq('v2-held-refused');
    await trustServer(cli, server);
    await setPolicyRule(cli, { server, tool: null, requiredApprovals: 1 });
    const t = testContext(actors, server, { approvalWaitMs: 5000 });
    const g = await runHttp(
      t.ctx,
      new URL(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`),
      '127.0.0.1',
      0,
    );
    open.push(async () => {
      await g.close();
      await t.ctx.reporter.close(2000);
    });
    // No URL elicitation declared: the gateway holds the call, with progress on the client's token.
    const client = new Client(
      { name: 'approval-test-client', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: {} },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(g.url)));
    open.push(() => client.close());
    const ref = `ref-${randomUUID()}`;
    let progressed!: () => void;
    const streaming = new Promise<void>((r) => (progressed = r));
    const answer = client
      .request({ method: 'tools/call', params: call(ref) }, { onprogress: () => progressed(), timeout: 10_000 })
      .catch((e: unknown) => e);
    await streaming;
    await decide(actors.reviewer, ref, 'approve');
    const error = await answer;
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).code).toBe(-32603);
    const records = await recordDetailsOf(ref, t.ctx.reporter);
    expect(records).toHaveLength(1);
    expect(records[0].observed).toMatchObject({ sent: true, httpStatus: 401 });
  });
});
