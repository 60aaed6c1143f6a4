// A 2026-07-28 client's cancellation through the gateway (docs/gateway.md "Cancellation"): SDK
// v2's own client, pinned to 2026-07-28, declaring no URL elicitation (so a call that needs a
// grant is held in its request, as gateway-cancel.test.ts holds a 2025 client's), cancels with
// an AbortSignal, which over Streamable HTTP in this era aborts the request's own stream. A call
// not forwarded yet (the policy being fetched, the approval pending, the grant's redemption
// answered after the cancel) is never sent, recorded never_sent / cancelled; a forwarded call's
// cancel reaches the server, and the record says cancelled, its outcome unknown. Upstream: an SDK
// v2 server of both eras with a write that counts its runs and one that runs until cancelled; the
// real console in-process deciding and recording, made slow where a test needs it.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { cli } from '@/lib/auth/actor';
import { setPolicyRule } from '@/lib/server/policy/policy-rules';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { uniq } from '@/testing/factories';
import {
  approvalsOf,
  closedAfterEach,
  consoleActors,
  decide,
  recordsOf,
  testContext,
  type ConsoleActors,
} from '@/testing/gateway-fixtures';
import { startV2HttpServer } from '@/testing/mcp-v2-server';
import { runHttp } from './http';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

let actors: ConsoleActors;
beforeAll(async () => {
  actors = await consoleActors();
});
const open = closedAfterEach();

/** What the server saw: refunds it carried out, and how the long transfer ended. */
interface Seen {
  refunds: number;
  transfer: 'not_started' | 'running' | 'cancelled' | 'finished';
}

/** The server's tools: a refund (a write needing a reviewer) and a transfer that runs until cancelled (a write needing none). */
function buildServer(seen: Seen): McpServer {
  const server = new McpServer({ name: 'cancel-test-server', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.registerTool(
    'refund_payment',
    { description: 'Refunds an order, once per call.', inputSchema: z.object({ orderId: z.string() }) },
    async () => {
      seen.refunds++;
      return { content: [{ type: 'text' as const, text: 'refunded' }] };
    },
  );
  server.registerTool('slow_transfer', { description: 'Moves funds; takes up to ten seconds.' }, async (ctx) => {
    seen.transfer = 'running';
    const signal = ctx.mcpReq.signal;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 10_000);
      signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
    seen.transfer = signal.aborted ? 'cancelled' : 'finished';
    return { content: [{ type: 'text' as const, text: 'transferred' }] };
  });
  return server;
}

async function setUp() {
  const seen: Seen = { refunds: 0, transfer: 'not_started' };
  const upstream = await startV2HttpServer(0, '127.0.0.1', () => buildServer(seen));
  open.push(() => upstream.close());
  const server = uniq('v2-cancel');
  await trustServer(cli, server);
  await setPolicyRule(cli, { server, tool: 'refund_payment', requiredApprovals: 1 });
  await setPolicyRule(cli, { server, tool: 'slow_transfer', requiredApprovals: 0 });
  const t = testContext(actors, server, { approvalWaitMs: 10_000 });
  const gateway = await runHttp(t.ctx, new URL(upstream.url), '127.0.0.1', 0);
  // A 2026-07-28 client cancels by closing the request's stream: its connection, as the gateway sees it.
  let closed = 0;
  gateway.server.on('connection', (socket) => socket.once('close', () => closed++));
  open.push(async () => {
    await gateway.close();
    await t.ctx.reporter.close(2000);
  });
  const client = new Client(
    { name: 'cancel-test-client', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: {} },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url)));
  open.push(() => client.close());
  return { seen, t, client, closed: () => closed };
}

type SetUp = Awaited<ReturnType<typeof setUp>>;

interface CallParams {
  name: string;
  arguments: Record<string, unknown>;
  _meta: Record<string, unknown>;
}

const refund = (ref: string): CallParams => ({
  name: 'refund_payment',
  arguments: { orderId: '4412' },
  _meta: { 'countersign/requestRef': ref },
});

/**
 * The call, cancellable; `cancel()` aborts it and resolves once the gateway saw the request's
 * connection close. The client's promise rejects, with no answer.
 */
function cancellable(m: SetUp, params: CallParams) {
  const controller = new AbortController();
  const outcome = m.client.callTool(params, { signal: controller.signal, timeout: 30_000 }).then(
    (r) => ({ answered: r }),
    (e: unknown) => ({ error: e }),
  );
  return {
    async cancel() {
      const before = m.closed();
      controller.abort('the user gave up');
      expect(await outcome).toMatchObject({ error: expect.anything() });
      await vi.waitFor(() => expect(m.closed()).toBe(before + 1), { timeout: 5000, interval: 10 });
    },
  };
}

const pendingApproval = (requestRef: string) =>
  vi.waitFor(
    async () => {
      const pending = (await approvalsOf(requestRef)).find((a) => a.status === 'pending');
      expect(pending).toBeDefined();
      return pending!.id;
    },
    { timeout: 5000, interval: 20 },
  );

/** The records of this reference, once `count` of them arrived (a cancelled call is recorded after the cancel reached the gateway). */
const recordsAfterCancel = (m: SetUp, ref: string, count = 1) =>
  vi.waitFor(
    async () => {
      const records = await recordsOf(ref, m.t.ctx.reporter);
      expect(records).toHaveLength(count);
      return records;
    },
    { timeout: 5000, interval: 50 },
  );

/** Long enough for a call that went on anyway to reach the server (the console is polled every 50 ms here). */
const settle = () => new Promise((r) => setTimeout(r, 600));

describe('a 2026-07-28 client cancels a call the gateway has not forwarded yet', () => {
  it('while the approval is pending: approved afterwards, it is still not sent; the same call later goes through once', async () => {
    const m = await setUp();
    const ref = uniq('req');
    const call = cancellable(m, refund(ref));
    await pendingApproval(ref);
    await call.cancel();
    expect(await recordsAfterCancel(m, ref)).toMatchObject([
      { delivery: 'never_sent', category: 'cancelled', grantId: null },
    ]);
    await decide(actors.reviewer, ref, 'approve');
    await settle();
    expect(m.seen.refunds).toBe(0);
    const [approval] = await approvalsOf(ref);
    expect(approval.grant).toMatchObject({ redeemedAt: null }); // not spent by the cancelled call

    // The same call again finds the same request, approved: it redeems the grant and goes through once.
    const r = (await m.client.callTool(refund(ref))) as CallToolResult;
    expect(r.isError).toBeFalsy();
    expect(m.seen.refunds).toBe(1);
    const records = await recordsOf(ref, m.t.ctx.reporter);
    expect(records.map((x) => [x.delivery, x.category, x.grantId])).toEqual([
      ['never_sent', 'cancelled', null],
      ['completed', 'ok', approval.grant!.id],
    ]);
  }, 30_000);

  it('approved, the redemption answered after the cancel: not sent, the spent grant named in the record and not used again', async () => {
    const m = await setUp();
    const ref = uniq('req');
    const redemption = m.t.console.slow(/^\/api\/v1\/grants\/[^/]+\/redeem$/);
    const call = cancellable(m, refund(ref));
    await decide(actors.reviewer, ref, 'approve');
    await redemption.reached; // redeemed in the database; its answer held back
    await call.cancel();
    redemption.release();
    const [approval] = await approvalsOf(ref);
    expect(approval.grant?.redeemedAt).toBeInstanceOf(Date);
    expect(await recordsAfterCancel(m, ref)).toMatchObject([
      { delivery: 'never_sent', category: 'cancelled', grantId: approval.grant!.id },
    ]);
    await settle();
    expect(m.seen.refunds).toBe(0);

    // The same call again: its grant is spent, so it is refused, not forwarded on it.
    const r = (await m.client.callTool(refund(ref))) as CallToolResult;
    expect(r.isError).toBe(true);
    expect(r._meta?.['countersign/error']).toMatchObject({ category: 'approval_required', retry: 'after_approval' });
    expect(m.seen.refunds).toBe(0);
  }, 30_000);

  it('while the policy is being fetched: never staged, not sent; the same call later is held for approval', async () => {
    const m = await setUp();
    const ref = uniq('req');
    const policy = m.t.console.slow(/^\/api\/v1\/policy\/evaluate$/);
    const call = cancellable(m, refund(ref)); // the gateway's first call: catalog and policy fetched for it
    await policy.reached;
    await call.cancel();
    policy.release();
    expect(await recordsAfterCancel(m, ref)).toMatchObject([{ delivery: 'never_sent', category: 'cancelled' }]);
    await settle();
    expect(await approvalsOf(ref)).toEqual([]);
    expect(m.seen.refunds).toBe(0);

    // The same call again, not cancelled: staged and held (not forwarded) until someone approves.
    const held = m.client.callTool(refund(ref)) as Promise<CallToolResult>;
    await pendingApproval(ref);
    await settle();
    expect(m.seen.refunds).toBe(0);
    await decide(actors.reviewer, ref, 'approve');
    expect((await held).isError).toBeFalsy();
    expect(m.seen.refunds).toBe(1);
  }, 30_000);
});

describe('a 2026-07-28 client cancels a forwarded call', () => {
  it('the cancel reaches the server, no answer comes, and the record says cancelled with its outcome unknown', async () => {
    const m = await setUp();
    const ref = uniq('req');
    const call = cancellable(m, { ...refund(ref), name: 'slow_transfer', arguments: {} });
    await vi.waitFor(() => expect(m.seen.transfer).toBe('running'), { timeout: 5000, interval: 20 });
    await call.cancel();
    await vi.waitFor(() => expect(m.seen.transfer).toBe('cancelled'), { timeout: 5000, interval: 20 });
    const [approval] = await approvalsOf(ref);
    // docs/design.md: a write cancelled after it was sent may have taken effect.
    expect(await recordsAfterCancel(m, ref)).toMatchObject([
      { toolName: 'slow_transfer', delivery: 'unknown', category: 'cancelled', grantId: approval.grant!.id },
    ]);
  }, 30_000);
});
