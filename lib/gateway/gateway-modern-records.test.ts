// One record per call on the 2026-07-28 leg (issue 42, plan step 4): SDK v2's client, pinned to
// 2026-07-28, through the gateway (HTTP and stdio) in front of the SDK v2 test server's
// `test_input_required_result_multi_round` (two questions, one per round, then the answer). A call
// that completes after its two rounds is recorded once, its rounds counted in `attempt` and noted
// in `observed.rounds` (who asked, which kinds, how many requests: never what); a call left after
// its first round is recorded once as that round (rejected / input_required / after_input), when
// its state can no longer be used or when the gateway closes. Expected values are written from
// docs/design.md's table, docs/gateway.md and docs/api.md, not read back from the code.
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { Client, InMemoryTransport, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { cli } from '@/lib/auth/actor';
import { setPolicyRule } from '@/lib/server/policy/policy-rules';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { uniq } from '@/testing/factories';
import {
  closedAfterEach,
  consoleActors,
  recordDetailsOf,
  testContext,
  type ConsoleActors,
} from '@/testing/gateway-fixtures';
import { startV2HttpServer } from '@/testing/mcp-v2-server';
import type { GatewayContext } from './context';
import { runHttp } from './http';
import { runStdio } from './stdio';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

let actors: ConsoleActors;
beforeAll(async () => {
  actors = await consoleActors();
});
const open = closedAfterEach();

const V2_SERVER = path.join(process.cwd(), 'testing/mcp-v2-server.ts');
const TOOL = 'test_input_required_result_multi_round';

type Leg = 'http' | 'stdio';

/** A gateway of `leg` in front of the SDK v2 test server, whose tools need no approval; a pinned client to it. */
async function through(leg: Leg, over: Partial<GatewayContext> = {}, autoFulfill = true, sampling = false) {
  const server = uniq(`records-${leg}`);
  await trustServer(cli, server);
  await setPolicyRule(cli, { server, tool: null, requiredApprovals: 0 });
  const t = testContext(actors, server, over);
  const client = new Client(
    { name: 'records-test-client', version: '1.0.0' },
    {
      versionNegotiation: { mode: { pin: '2026-07-28' } },
      capabilities: { elicitation: { form: {} }, ...(sampling ? { sampling: {} } : {}) },
      inputRequired: { autoFulfill },
    },
  );
  if (sampling)
    client.setRequestHandler('sampling/createMessage', async () => ({
      role: 'assistant',
      content: { type: 'text', text: 'Paris' },
      model: 'test-model',
    }));
  // Answers each question by the field it asks for.
  client.setRequestHandler('elicitation/create', async (request) => {
    const fields = Object.keys(
      (request.params as { requestedSchema?: { properties?: object } }).requestedSchema?.properties ?? {},
    );
    const content: Record<string, string> = fields.includes('color') ? { color: 'green' } : { name: 'Ada' };
    return { action: 'accept', content };
  });
  let close: () => Promise<void>;
  if (leg === 'http') {
    const upstream = await startV2HttpServer();
    const g = await runHttp(t.ctx, new URL(upstream.url), '127.0.0.1', 0);
    await client.connect(new StreamableHTTPClientTransport(new URL(g.url)));
    close = async () => {
      await g.close();
      await upstream.close();
    };
  } else {
    const [clientSide, gatewaySide] = InMemoryTransport.createLinkedPair();
    const g = await runStdio(
      t.ctx,
      [process.execPath, '--import', 'tsx', V2_SERVER, 'stdio'],
      gatewaySide as unknown as Transport,
    );
    await client.connect(clientSide);
    close = () => g.close();
  }
  let closed = false;
  const closeGateway = async () => {
    if (closed) return;
    closed = true;
    await client.close();
    await close();
  };
  open.push(async () => {
    await closeGateway();
    await t.ctx.reporter.close(2000);
  });
  return { ctx: t.ctx, client, closeGateway };
}

const stored = (requestRef: string) => recordDetailsOf(requestRef);

async function eventually<T>(read: () => Promise<T[]>, count: number, ms = 5000): Promise<T[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const rows = await read();
    if (rows.length >= count || Date.now() > deadline) return rows;
    await new Promise((r) => setTimeout(r, 50));
  }
}

const call = (ref: string) => ({ name: TOOL, arguments: {}, _meta: { 'countersign/requestRef': ref } });

/** The server's round asking one form elicitation, as docs/api.md `observed.rounds` names it. */
const askedName = { atMs: expect.any(Number), by: 'server', asked: ['elicitation_form'], requests: 1 };

/** A record's rounds' times: from the call's first request, in order. */
function expectInOrder(record: { observed: unknown }) {
  const times = (record.observed as { rounds: { atMs: number }[] }).rounds.map((r) => r.atMs);
  times.forEach((t, i) => expect(t).toBeGreaterThanOrEqual(i ? times[i - 1] : 0));
}

describe.each<Leg>(['http', 'stdio'])('a pinned 2026-07-28 client through the gateway (%s)', (leg) => {
  it('a call that completes after two input_required rounds is recorded once: completed, its three requests counted', async () => {
    const { ctx, client } = await through(leg);
    const ref = `ref-${randomUUID()}`;
    const result = await client.callTool(call(ref));
    expect(result.content).toEqual([{ type: 'text', text: 'Done: Ada likes green' }]);
    const eventId = (result._meta as Record<string, unknown>)['countersign/eventId'];
    expect(eventId).toMatch(/^evt_[0-9a-f-]{36}\.3$/);
    await ctx.reporter.flush();
    const records = await stored(ref);
    expect(records).toEqual([
      {
        eventId,
        toolName: TOOL,
        attempt: 3,
        observed: {
          sent: true,
          result: { isError: false, outputValidation: 'not_declared' },
          resultType: 'complete',
          rounds: [askedName, askedName],
        },
        boundary: 'none',
        delivery: 'completed',
        category: 'ok',
        retry: 'no',
      },
    ]);
    expectInOrder(records[0]);
  });

  it('a round that asks two kinds at once is one round of two requests', async () => {
    const { ctx, client } = await through(leg, {}, true, true);
    const ref = `ref-${randomUUID()}`;
    const result = await client.callTool({
      name: 'test_input_required_result_capabilities',
      arguments: {},
      _meta: { 'countersign/requestRef': ref },
    });
    expect(result.isError).toBeFalsy();
    await ctx.reporter.flush();
    const records = await stored(ref);
    expect(records.map((r) => [r.attempt, r.delivery, (r.observed as { rounds?: unknown }).rounds])).toEqual([
      [
        2,
        'completed',
        [{ atMs: expect.any(Number), by: 'server', asked: ['elicitation_form', 'sampling'], requests: 2 }],
      ],
    ]);
  });

  it('a call left after its first round is recorded once, as that round, when its state can no longer be used', async () => {
    const { ctx, client } = await through(leg, { roundAbandonMs: 300 }, false);
    const ref = `ref-${randomUUID()}`;
    const round = (await client.request(
      { method: 'tools/call', params: call(ref) },
      { allowInputRequired: true },
    )) as unknown as { resultType: string; requestState?: string };
    expect(round.resultType).toBe('input_required');
    expect(typeof round.requestState).toBe('string');
    await ctx.reporter.flush();
    expect(await stored(ref)).toEqual([]); // not yet: the client may still come back
    const records = await eventually(async () => {
      await ctx.reporter.flush();
      return stored(ref);
    }, 1);
    expect(records).toEqual([
      {
        eventId: expect.stringMatching(/^evt_[0-9a-f-]{36}\.1$/),
        toolName: TOOL,
        attempt: 1,
        observed: { sent: true, resultType: 'input_required', rounds: [askedName] },
        boundary: 'protocol',
        delivery: 'rejected',
        category: 'input_required',
        retry: 'after_input',
      },
    ]);
    // Nothing more once the horizon passed again.
    await new Promise((r) => setTimeout(r, 400));
    await ctx.reporter.flush();
    expect(await stored(ref)).toHaveLength(1);
  });

  it("the server's own JSON-RPC error keeps its code in the record: -32021, a capability the client did not declare", async () => {
    const { ctx, client } = await through(leg);
    const ref = `ref-${randomUUID()}`;
    const error = await client
      .callTool({ name: 'test_missing_capability', arguments: {}, _meta: { 'countersign/requestRef': ref } })
      .catch((e: unknown) => e);
    expect((error as { code?: number }).code).toBe(-32021);
    await ctx.reporter.flush();
    expect(await stored(ref)).toEqual([
      {
        eventId: expect.stringMatching(/^evt_[0-9a-f-]{36}\.1$/),
        toolName: 'test_missing_capability',
        attempt: 1,
        observed: { sent: true, jsonRpcErrorCode: -32021 },
        boundary: 'protocol',
        delivery: 'rejected',
        category: 'protocol_error',
        retry: 'no',
      },
    ]);
  });

  it('a call left after its second round is recorded as that round when the gateway closes', async () => {
    const { ctx, client, closeGateway } = await through(leg, {}, false);
    const ref = `ref-${randomUUID()}`;
    const first = (await client.request({ method: 'tools/call', params: call(ref) }, { allowInputRequired: true })) as {
      requestState?: string;
    };
    const second = (await client.request(
      {
        method: 'tools/call',
        params: {
          ...call(ref),
          inputResponses: { step1: { action: 'accept', content: { name: 'Ada' } } },
          requestState: first.requestState,
        },
      } as never,
      { allowInputRequired: true },
    )) as { resultType: string; inputRequests?: Record<string, unknown> };
    expect(second.resultType).toBe('input_required');
    expect(Object.keys(second.inputRequests ?? {})).toEqual(['step2']);
    await closeGateway();
    await ctx.reporter.flush();
    expect(await stored(ref)).toEqual([
      {
        eventId: expect.stringMatching(/^evt_[0-9a-f-]{36}\.2$/),
        toolName: TOOL,
        attempt: 2,
        observed: { sent: true, resultType: 'input_required', rounds: [askedName, askedName] },
        boundary: 'protocol',
        delivery: 'rejected',
        category: 'input_required',
        retry: 'after_input',
      },
    ]);
  });
});
