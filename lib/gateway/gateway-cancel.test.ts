// A client's cancellation of a call the gateway has not forwarded yet (the SDK client's callTool
// with an AbortSignal, which sends notifications/cancelled): the call is never sent, recorded
// never_sent / cancelled, and not answered, whichever await of the gateway the cancel meets (the
// policy being fetched, the approval pending, the grant's redemption answered after the cancel).
// Both modes: stdio in front of the real server-filesystem (a write is a file on disk), Streamable
// HTTP in front of the demo MCP server (a refund is an entry in its store); the real console
// in-process deciding and recording, made slow where a test needs it (testing/console-fetch.ts).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { cli } from '@/lib/auth/actor';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { startDemoMcpServer } from '@/scripts/demo-mcp-server';
import { runHttp } from './http';
import { runStdio } from './stdio';
import { uniq } from '@/testing/factories';
import {
  approvalsOf,
  consoleActors,
  decide,
  recordsOf,
  testContext,
  type ConsoleActors,
  closedAfterEach,
} from '@/testing/gateway-fixtures';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

const FS_BIN = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/dist/index.js');

let actors: ConsoleActors;
beforeAll(async () => {
  actors = await consoleActors();
});
const open = closedAfterEach();

interface Mode {
  client: Client;
  t: ReturnType<typeof testContext>;
  /** A write that needs one reviewer's approval; `times()` is how often the server carried it out. */
  write: { name: string; args: Record<string, unknown> };
  times: () => Promise<number>;
  /** How many notifications/cancelled the gateway has received (the client's send finished). */
  cancels: () => number;
}

const isCancel = (m: unknown) => (m as { method?: unknown }).method === 'notifications/cancelled';

async function stdioMode(): Promise<Mode> {
  const dir = await mkdtemp(join(tmpdir(), 'cs-gw-cancel-'));
  const server = uniq('fs-cancel');
  await trustServer(cli, server);
  const t = testContext(actors, server, { approvalWaitMs: 10_000 });
  const [clientSide, gatewaySide] = InMemoryTransport.createLinkedPair();
  let cancels = 0;
  const send = clientSide.send.bind(clientSide);
  clientSide.send = async (message, options) => {
    await send(message, options);
    if (isCancel(message)) cancels++;
  };
  const stdio = await runStdio(t.ctx, [process.execPath, FS_BIN, dir], gatewaySide);
  const client = new Client({ name: 'cancel-test', version: '1.0.0' });
  await client.connect(clientSide);
  open.push(async () => {
    await client.close();
    await stdio.close();
    await t.ctx.reporter.close(2000);
    await rm(dir, { recursive: true, force: true });
  });
  const file = join(dir, 'note.txt');
  return {
    client,
    t,
    write: { name: 'write_file', args: { path: file, content: 'written' } },
    times: () =>
      readFile(file, 'utf8').then(
        () => 1,
        () => 0,
      ),
    cancels: () => cancels,
  };
}

async function httpMode(): Promise<Mode> {
  const demo = await startDemoMcpServer({ slowMs: 50 });
  const server = uniq('billing-cancel');
  await trustServer(cli, server);
  const t = testContext(actors, server, { approvalWaitMs: 10_000 });
  const gateway = await runHttp(t.ctx, demo.url, '127.0.0.1', 0);
  let cancels = 0;
  const client = new Client({ name: 'cancel-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(gateway.url), {
      requestInit: { headers: { authorization: `Bearer ${demo.tokens.full}` } },
      // The gateway handles a POSTed notification before it answers 202.
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        if (typeof init?.body === 'string' && isCancel(JSON.parse(init.body))) cancels++;
        return res;
      },
    }),
  );
  open.push(async () => {
    await client.close();
    await gateway.close();
    await demo.close();
    await t.ctx.reporter.close(2000);
  });
  return {
    client,
    t,
    write: {
      name: 'refund_payment',
      args: { orderId: '4412', amount: 10, currency: 'EUR', idempotencyKey: uniq('rf') },
    },
    times: async () => demo.store.refunds.size,
    cancels: () => cancels,
  };
}

const modes = [
  ['stdio', stdioMode],
  ['http', httpMode],
] as const;

/** The call, cancellable; `cancel()` aborts it and resolves once the gateway received the cancel. */
function cancellable(m: Mode, ref: string) {
  const controller = new AbortController();
  const outcome = m.client
    .callTool({ name: m.write.name, arguments: m.write.args, _meta: { 'countersign/requestRef': ref } }, undefined, {
      signal: controller.signal,
      timeout: 30_000,
    })
    .then(
      (r) => ({ answered: r as CallToolResult }),
      (e: unknown) => ({ error: e }),
    );
  return {
    outcome,
    async cancel() {
      const before = m.cancels();
      controller.abort('the user gave up');
      await vi.waitFor(() => expect(m.cancels()).toBe(before + 1));
      expect(await outcome).toMatchObject({ error: expect.anything() });
    },
  };
}

const again = (m: Mode, ref: string) =>
  m.client.callTool({
    name: m.write.name,
    arguments: m.write.args,
    _meta: { 'countersign/requestRef': ref },
  }) as Promise<CallToolResult>;

const pendingApproval = (requestRef: string) =>
  vi.waitFor(
    async () => {
      const pending = (await approvalsOf(requestRef)).find((a) => a.status === 'pending');
      expect(pending).toBeDefined();
      return pending!.id;
    },
    { timeout: 5000, interval: 20 },
  );

/** The grant of the one approval request staged for this request reference. */
const grantOf = async (requestRef: string) => {
  const approvals = await approvalsOf(requestRef);
  expect(approvals).toHaveLength(1);
  return approvals[0].grant;
};

/** Long enough for a call that went on anyway to reach the server (polls every 50 ms in these tests). */
const settle = () => new Promise((r) => setTimeout(r, 600));

describe.each(modes)('gateway (%s), a call cancelled before it was forwarded', (_mode, setUp) => {
  it('while the approval is pending: approved afterwards, it is still not sent; the same call later goes through once', async () => {
    const m = await setUp();
    const ref = uniq('req');
    const call = cancellable(m, ref);
    await pendingApproval(ref);
    await call.cancel();
    await decide(actors.reviewer, ref, 'approve');
    await settle();
    expect(await m.times()).toBe(0);
    expect(await grantOf(ref)).toMatchObject({ redeemedAt: null }); // not spent by the cancelled call
    expect(await recordsOf(ref, m.t.ctx.reporter)).toMatchObject([
      { delivery: 'never_sent', category: 'cancelled', grantId: null },
    ]);

    // The same call again finds the same request, approved: it redeems the grant and goes through
    // (docs/api.md), once and recorded with its grant, never on a grant of the cancelled call's.
    const r = await again(m, ref);
    expect(r.isError).toBeFalsy();
    expect(await m.times()).toBe(1);
    const records = await recordsOf(ref, m.t.ctx.reporter);
    expect(records.map((x) => [x.delivery, x.category])).toEqual([
      ['never_sent', 'cancelled'],
      ['completed', 'ok'],
    ]);
    expect(records[1].grantId).toBe((await grantOf(ref))!.id);
  }, 30_000);

  it('approved, the redemption answered after the cancel: not sent, the spent grant not used again', async () => {
    const m = await setUp();
    const ref = uniq('req');
    const redemption = m.t.console.slow(/^\/api\/v1\/grants\/[^/]+\/redeem$/);
    const call = cancellable(m, ref);
    await decide(actors.reviewer, ref, 'approve');
    await redemption.reached; // redeemed in the database; its answer held back
    await call.cancel();
    redemption.release();
    await settle();
    expect(await m.times()).toBe(0);
    const grant = await grantOf(ref);
    expect(grant?.redeemedAt).toBeInstanceOf(Date); // spent: the gateway redeemed it right before the cancel
    expect(await recordsOf(ref, m.t.ctx.reporter)).toMatchObject([
      { delivery: 'never_sent', category: 'cancelled', grantId: grant!.id },
    ]);

    // The same call again: its grant is spent, so it is refused, not forwarded on it.
    const r = await again(m, ref);
    expect(r.isError).toBe(true);
    expect(r._meta?.['countersign/error']).toMatchObject({ category: 'approval_required', retry: 'after_approval' });
    expect(await m.times()).toBe(0);
  }, 30_000);

  it('while the policy is being fetched: never staged, not sent; the same call later is held for approval', async () => {
    const m = await setUp();
    const ref = uniq('req');
    const policy = m.t.console.slow(/^\/api\/v1\/policy\/evaluate$/);
    const call = cancellable(m, ref); // the first call of the session: catalog and policy fetched for it
    await policy.reached;
    await call.cancel();
    policy.release();
    await vi.waitFor(async () =>
      expect(await recordsOf(ref, m.t.ctx.reporter)).toMatchObject([{ delivery: 'never_sent', category: 'cancelled' }]),
    );
    await settle();
    expect(await approvalsOf(ref)).toEqual([]);
    expect(await m.times()).toBe(0);

    // The same call again, not cancelled: staged and held (not forwarded) until someone approves.
    const held = again(m, ref);
    await pendingApproval(ref);
    await settle();
    expect(await m.times()).toBe(0);
    await decide(actors.reviewer, ref, 'approve');
    expect((await held).isError).toBeFalsy();
    expect(await m.times()).toBe(1);
  }, 30_000);
});
