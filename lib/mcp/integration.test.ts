// The wrapper against a real MCP server (scripts/demo-mcp-server.ts) through the real SDK, over
// InMemoryTransport and over Streamable HTTP on 127.0.0.1. Countersign's side is the in-process
// fake in ./testing (the real one: e2e/agent-integration.spec.ts).
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  createDemoMcpServer,
  createDemoStore,
  startDemoMcpServer,
  DEMO_SERVER_NAME,
  LEGACY_ORDER,
  type DemoStore,
} from '../../scripts/demo-mcp-server';
import { classifyRecord } from '../outcomes/classify';
import { argsDigest } from './digest';
import { observingFetch } from './observe';
import { callToolWithRetry } from './retry';
import { withCountersign, type CountersignClient, type GuardedCallResult } from './countersign-client';
import { fakeCountersign, type Decision } from '../../testing/fake-countersign';

const SLOW_MS = 400;
type Token = 'full' | 'ordersOnly' | 'bad';

interface Harness {
  store: DemoStore;
  connectFor(client: Client, token: Token): () => Promise<void>;
  loseConnection(): void;
  close(): Promise<void>;
}

const harnesses: Record<'in-memory' | 'streamable-http', () => Promise<Harness>> = {
  'in-memory': async () => {
    const store = createDemoStore();
    const links: { server: McpServer; transport: InMemoryTransport }[] = [];
    return {
      store,
      connectFor: (client) => async () => {
        const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
        const server = createDemoMcpServer(store, { slowMs: SLOW_MS });
        links.push({ server, transport: serverSide });
        await server.connect(serverSide);
        await client.connect(clientSide);
      },
      loseConnection: () => void links.at(-1)?.transport.close(),
      close: async () => {
        for (const { server } of links) await server.close();
      },
    };
  },
  'streamable-http': async () => {
    const demo = await startDemoMcpServer({ slowMs: SLOW_MS });
    const token = (t: Token) => (t === 'bad' ? 'demo_not_a_token' : demo.tokens[t]);
    return {
      store: demo.store,
      connectFor: (client, t) => () =>
        client.connect(
          new StreamableHTTPClientTransport(demo.url, {
            fetch: observingFetch(),
            requestInit: { headers: { authorization: `Bearer ${token(t)}` } },
          }),
        ),
      loseConnection: () => demo.dropConnections(),
      close: () => demo.close(),
    };
  },
};

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!().catch(() => {});
});

async function setup(kind: keyof typeof harnesses, decide?: (a: { body: { tool: { name: string } } }) => Decision) {
  const harness = await harnesses[kind]();
  const countersign = fakeCountersign({ decide });
  cleanup.push(() => harness.close());
  const wrap = (token: Token = 'full'): CountersignClient => {
    const client = new Client({ name: 'integration-agent', version: '1.0.0' });
    cleanup.push(() => client.close());
    return withCountersign(client, {
      url: 'http://countersign.test',
      apiKey: 'cs_live_fake',
      fetch: countersign.fetch,
      server: DEMO_SERVER_NAME,
      trustedServer: true,
      organization: 'acme',
      principal: 'user_193',
      agent: 'integration-agent',
      connect: harness.connectFor(client, token),
      lostConnectionGraceMs: 100,
      reporterOptions: { flushIntervalMs: 10 },
      approval: { pollInitialMs: 5, pollMaxMs: 20, maxWaitMs: 5000 },
    });
  };
  return { harness, countersign, wrap };
}

const call = (summary: string, more: Partial<Parameters<CountersignClient['callTool']>[1]> = {}) => ({
  requestRef: 'req_integration',
  summary,
  ...more,
});
const verdict = (r: GuardedCallResult) => {
  const { boundary, delivery, category, retry } = r.classification;
  return { boundary, delivery, category, retry };
};

describe.each(['in-memory', 'streamable-http'] as const)('over %s', (kind) => {
  it('a trusted read: completed ok, no approval asked; the record carries a digest, never arguments or result', async () => {
    const { countersign, wrap } = await setup(kind);
    const agent = wrap();
    const r = await agent.callTool({ name: 'get_order', arguments: { orderId: '4412' } }, call('Look up an order'));
    expect(verdict(r)).toEqual({ boundary: 'none', delivery: 'completed', category: 'ok', retry: 'no' });
    expect(r.result?.structuredContent).toMatchObject({ orderId: '4412', amount: 125.5 });
    expect(countersign.approvals.size).toBe(0);
    await agent.flush();
    expect(countersign.outcomes).toHaveLength(1);
    const [stored] = countersign.outcomes;
    expect(stored).toMatchObject({
      argsDigest: argsDigest({ orderId: '4412' }),
      tool: { name: 'get_order', annotations: { readOnlyHint: true } },
      attempt: 1,
    });
    expect(JSON.stringify(stored)).not.toMatch(/4412|125\.5|delivered/);
    expect(classifyRecord(stored, true)).toEqual(r.classification);
    if (kind === 'streamable-http')
      expect(stored).toMatchObject({
        observed: { httpStatus: 200 },
        mcpRequestId: expect.any(Number),
        sessionId: expect.any(String),
        protocolVersion: expect.any(String),
      });
  });

  it('invalid arguments: rejected, invalid_arguments (folded -32602)', async () => {
    const { wrap } = await setup(kind);
    const r = await wrap().callTool({ name: 'get_order', arguments: { orderId: 4411 } }, call('Look up an order'));
    expect(verdict(r)).toEqual({
      boundary: 'protocol',
      delivery: 'rejected',
      category: 'invalid_arguments',
      retry: 'after_correction',
    });
    expect(r.record.observed).toMatchObject({ jsonRpcErrorCode: -32602 });
  });

  it('an output-schema violation: completed, output_schema_violation, the content withheld', async () => {
    const { wrap } = await setup(kind);
    const r = await wrap().callTool(
      { name: 'get_invoice', arguments: { orderId: LEGACY_ORDER } },
      call('Read an invoice'),
    );
    expect(verdict(r)).toEqual({
      boundary: 'tool',
      delivery: 'completed',
      category: 'output_schema_violation',
      retry: 'no',
    });
    expect(r.result).toBeUndefined();
    expect(r.record.observed.result).toEqual({ isError: false, outputValidation: 'invalid' });
  });

  it('a write: approval requested, grant redeemed right before the call, completed with the grant; a replay with the same key needs a new grant and does not refund twice', async () => {
    const { harness, countersign, wrap } = await setup(kind);
    const agent = wrap();
    const args = { orderId: '4411', amount: 40, currency: 'EUR', idempotencyKey: 'refund-4411-v1' };
    const first = await agent.callTool(
      { name: 'refund_payment', arguments: args },
      call('Refund 40.00 EUR', { idempotencyKey: 'refund-4411-v1' }),
    );
    expect(verdict(first)).toEqual({ boundary: 'none', delivery: 'completed', category: 'ok', retry: 'no' });
    expect(first.record.grantId).toBe(first.approval?.grantId);
    const [approval] = countersign.approvals.values();
    expect(approval).toMatchObject({
      status: 'redeemed',
      redemptions: 1,
      body: {
        server: DEMO_SERVER_NAME,
        tool: { name: 'refund_payment' },
        argsDigest: argsDigest(args),
        principal: 'user_193',
      },
    });

    const replay = await agent.callTool(
      { name: 'refund_payment', arguments: args },
      call('Refund 40.00 EUR', { idempotencyKey: 'refund-4411-v1', attempt: 2 }),
    );
    expect(verdict(replay).category).toBe('ok');
    expect(replay.result?.structuredContent).toMatchObject({
      replayed: true,
      refundId: first.result?.structuredContent?.refundId,
    });
    expect(countersign.approvals.size).toBe(2);
    expect(harness.store.refunds.size).toBe(1);
  });

  it('a denied write is never sent: never_sent, denied_by_policy, and the tool did not run', async () => {
    const { harness, wrap } = await setup(kind, () => 'deny');
    const r = await wrap().callTool(
      {
        name: 'refund_payment',
        arguments: { orderId: '4413', amount: 18, currency: 'EUR', idempotencyKey: 'refund-4413' },
      },
      call('Refund 18.00 EUR', { idempotencyKey: 'refund-4413' }),
    );
    expect(verdict(r)).toEqual({
      boundary: 'client',
      delivery: 'never_sent',
      category: 'denied_by_policy',
      retry: 'after_approval',
    });
    expect(r.record.observed).toEqual({ sent: false, clientBlock: 'denied_by_policy' });
    expect(r.record.grantId).toBeUndefined();
    expect(harness.store.refunds.size).toBe(0);
  });

  it('no decision in time: never_sent, approval_required', async () => {
    const { harness, wrap } = await setup(kind, () => 'never');
    const client = wrap();
    (client as unknown as { options: { approval: { maxWaitMs: number } } }).options.approval.maxWaitMs = 100;
    const r = await client.callTool(
      { name: 'issue_credit', arguments: { orderId: '4411', amount: 5, currency: 'EUR', idempotencyKey: 'c-wait' } },
      call('Credit 5.00 EUR'),
    );
    expect(verdict(r)).toMatchObject({ delivery: 'never_sent', category: 'approval_required' });
    expect(harness.store.credits.size).toBe(0);
  });

  it('a client timeout after which the server completes the write: unknown, timeout, check state first', async () => {
    const { harness, wrap } = await setup(kind);
    const r = await wrap().callTool(
      { name: 'issue_credit', arguments: { orderId: '4412', amount: 10, currency: 'EUR', idempotencyKey: 'credit-1' } },
      call('Credit 10.00 EUR', { idempotencyKey: 'credit-1', timeoutMs: 100 }),
    );
    expect(verdict(r)).toEqual({
      boundary: 'client',
      delivery: 'unknown',
      category: 'timeout',
      retry: 'after_state_check',
    });
    expect(r.record.grantId).toEqual(expect.any(String));
    expect(harness.store.credits.has('credit-1')).toBe(false);
    await until(() => harness.store.credits.has('credit-1'), SLOW_MS + 1000);
  });

  it('the connection is lost during a write: unknown, connection_lost', async () => {
    const { harness, wrap } = await setup(kind);
    const agent = wrap();
    const pending = agent.callTool(
      {
        name: 'issue_credit',
        arguments: { orderId: '4411', amount: 5, currency: 'EUR', idempotencyKey: 'credit-lost' },
      },
      call('Credit 5.00 EUR', { idempotencyKey: 'credit-lost', timeoutMs: 5000 }),
    );
    // Cut the connection while the slow tool runs.
    await until(() => harness.store.pendingCredits.has('credit-lost'), 3000);
    harness.loseConnection();
    const r = await pending;
    expect(verdict(r)).toEqual({
      boundary: 'client',
      delivery: 'unknown',
      category: 'connection_lost',
      retry: 'after_state_check',
    });
  });

  it('retry helper: after the unknown, a state check that finds the write done stops; replays reuse the key and input and the server writes once', async () => {
    const { harness, wrap } = await setup(kind);
    const agent = wrap();
    const params = {
      name: 'issue_credit',
      arguments: { orderId: '4413', amount: 3, currency: 'EUR', idempotencyKey: 'credit-retry' },
    };
    const checked = await callToolWithRetry(
      agent,
      params,
      call('Credit 3.00 EUR', { idempotencyKey: 'credit-retry', timeoutMs: 100 }),
      {
        initialDelayMs: 10,
        stateCheck: async () =>
          (await until(() => harness.store.credits.has('credit-retry'), SLOW_MS + 1000).then(
            () => true,
            () => false,
          ))
            ? 'done'
            : 'unknown',
      },
    );
    expect(checked).toMatchObject({ stopped: 'state_done', state: 'done' });
    expect(checked.attempts).toHaveLength(1);

    // A state check that cannot see the write says "not done": every replay reuses the key and the
    // input, each with its own grant, and the server credits once.
    const replay = {
      name: 'issue_credit',
      arguments: { orderId: '4413', amount: 4, currency: 'EUR', idempotencyKey: 'credit-replay' },
    };
    const replayed = await callToolWithRetry(
      agent,
      replay,
      call('Credit 4.00 EUR', { idempotencyKey: 'credit-replay', timeoutMs: 250 }),
      {
        maxAttempts: 5,
        initialDelayMs: 150,
        stateCheck: async () => 'not_done',
      },
    );
    expect(replayed.stopped).toBe('succeeded');
    expect(replayed.attempts.length).toBeGreaterThanOrEqual(2);
    expect(replayed.attempts.map((a) => a.record.attempt)).toEqual(replayed.attempts.map((_, i) => i + 1));
    expect(new Set(replayed.attempts.map((a) => `${a.record.idempotencyKey} ${a.record.argsDigest}`)).size).toBe(1);
    expect(new Set(replayed.attempts.map((a) => a.record.grantId)).size).toBe(replayed.attempts.length);
    expect(replayed.final.result?.structuredContent).toMatchObject({ replayed: true });
    expect([...harness.store.credits.values()].filter((c) => c.idempotencyKey === 'credit-replay')).toHaveLength(1);
  });
});

describe('over streamable-http only: admission', () => {
  it('a bad token: 401 invalid_token while connecting, rejected, unauthenticated', async () => {
    const { wrap } = await setup('streamable-http');
    const r = await wrap('bad').callTool(
      { name: 'get_order', arguments: { orderId: '4411' } },
      call('Look up an order'),
    );
    expect(r.record.observed).toEqual({ sent: true, httpStatus: 401, authError: 'invalid_token' });
    expect(verdict(r)).toEqual({
      boundary: 'admission',
      delivery: 'rejected',
      category: 'unauthenticated',
      retry: 'after_reauth',
    });
  });

  it('a token without the scope: 403 insufficient_scope on the call, rejected, forbidden; concurrent calls keep their own statuses', async () => {
    const { wrap } = await setup('streamable-http');
    const agent = wrap('ordersOnly');
    const [refused, allowed] = await Promise.all([
      agent.callTool({ name: 'list_refunds', arguments: { orderId: '4411' } }, call('List refunds')),
      agent.callTool({ name: 'get_order', arguments: { orderId: '4411' } }, call('Look up an order')),
    ]);
    expect(refused.record.observed).toEqual({ sent: true, httpStatus: 403, authError: 'insufficient_scope' });
    expect(verdict(refused)).toEqual({
      boundary: 'admission',
      delivery: 'rejected',
      category: 'forbidden',
      retry: 'after_approval',
    });
    expect(allowed.record.observed).toMatchObject({ httpStatus: 200, result: { outputValidation: 'valid' } });
  });

  it('Countersign down: reads still work and their records wait; writes are not sent without a grant; records arrive when it is back', async () => {
    const { harness, countersign, wrap } = await setup('streamable-http');
    countersign.setDown(true);
    const agent = wrap();
    const read = await agent.callTool({ name: 'get_order', arguments: { orderId: '4411' } }, call('Look up an order'));
    expect(verdict(read).category).toBe('ok');
    const write = await agent.callTool(
      { name: 'refund_payment', arguments: { orderId: '4411', amount: 1, currency: 'EUR', idempotencyKey: 'r-down' } },
      call('Refund 1.00 EUR', { idempotencyKey: 'r-down' }),
    );
    expect(verdict(write)).toMatchObject({ delivery: 'never_sent', category: 'approval_required' });
    expect(harness.store.refunds.size).toBe(0);
    expect(await agent.flush()).toEqual({ ok: false, buffered: 2 });
    countersign.setDown(false);
    expect(await agent.flush()).toEqual({ ok: true, buffered: 0 });
    expect(countersign.outcomes.map((o) => o.eventId)).toEqual([read.record.eventId, write.record.eventId]);
  });
});

async function until(check: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}
