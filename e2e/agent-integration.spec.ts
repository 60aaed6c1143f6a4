import { execFile } from 'node:child_process';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { promisify } from 'node:util';
import { expect, test, type APIRequestContext } from '@playwright/test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { observingFetch, withCountersign } from '../lib/mcp';
import { DEMO_SERVER_NAME, startDemoMcpServer } from '../scripts/demo-mcp-server';
import { freePort } from '../scripts/lib/embedded-postgres';
import type { DemoAgentReport } from '../scripts/demo-agent';
import { cli, secretFrom, users } from '../testing/e2e';
import { childEnvironment } from '../lib/config';

// The agent-side integration against the real console: the demo agent (npm run demo:agent) drives
// the demo MCP server, directly and through the gateway, and the console's API says what it stored
// for each scenario.

let agentKey = '';
let readKey = '';
let reviewerToken = '';

test.beforeAll(() => {
  const apiKey = (name: string, scopes: string) =>
    secretFrom(cli('apikeys:create', '--name', `e2e-${name}-${Date.now()}`, '--scopes', scopes), 'cs_live_');
  agentKey = apiKey('demo-agent', 'outcomes:write,approvals:request,grants:redeem');
  readKey = apiKey('agent-read', 'outcomes:read');
  reviewerToken = secretFrom(
    cli('tokens:create', '--email', users.reviewer.email, '--name', 'e2e-agent-integration'),
    'cs_pat_',
  );
  // The demo seed trusts it already; say so here too, so this spec stands on its own.
  cli('servers:trust', '--name', DEMO_SERVER_NAME);
});

const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });

type StoredOutcome = {
  id: string;
  eventId: string;
  idempotencyKey: string | null;
  grantId: string | null;
  argsDigest: string;
  principal: string;
  agent: string | null;
  tool: { name: string };
  classification: { delivery: string; category: string; retry: string };
};

async function outcomes(request: APIRequestContext, query: string): Promise<StoredOutcome[]> {
  const res = await request.get(`/api/v1/outcomes?${query}`, { headers: bearer(readKey) });
  expect(res.status()).toBe(200);
  return (await res.json()).items;
}

test("the demo agent: every scenario stored with its classification, the refund's grant redeemed exactly once, the unsafe replay found", async ({
  request,
  baseURL,
}) => {
  test.setTimeout(120_000);
  // npm run demo:agent, as a person would run it (with --json for a report on stdout).
  const { stdout } = await promisify(execFile)('node_modules/.bin/tsx', ['scripts/demo-agent.ts', '--json'], {
    env: childEnvironment({
      COUNTERSIGN_URL: baseURL,
      COUNTERSIGN_API_KEY: agentKey,
      COUNTERSIGN_REVIEWER_TOKEN: reviewerToken,
      COUNTERSIGN_PRINCIPAL: 'user_193',
    }),
    timeout: 90_000,
  }).catch((err: { stdout?: string; stderr?: string }) => {
    throw new Error(`demo agent failed:\n${err.stderr ?? ''}\n${err.stdout ?? ''}`);
  });
  const report = JSON.parse(stdout) as DemoAgentReport;
  const byName = Object.fromEntries(report.scenarios.map((s) => [s.name, s]));
  expect(Object.keys(byName).sort()).toEqual(
    [
      'denied',
      'gateway_read',
      'gateway_write',
      'insufficient_scope',
      'invalid_arguments',
      'output_schema',
      'read',
      'refund',
      'server_down',
      'timeout',
      'unauthenticated',
      'unsafe_replay',
    ].sort(),
  );
  expect(report.reporter).toMatchObject({ buffered: 0, dropped: 0, rejected: 0 });

  const expected: Record<string, [string, string, string]> = {
    read: ['completed', 'ok', 'no'],
    refund: ['completed', 'ok', 'no'],
    unauthenticated: ['rejected', 'unauthenticated', 'after_reauth'],
    insufficient_scope: ['rejected', 'forbidden', 'after_approval'],
    invalid_arguments: ['rejected', 'invalid_arguments', 'after_correction'],
    output_schema: ['completed', 'output_schema_violation', 'no'],
    server_down: ['never_sent', 'connection_lost', 'backoff'],
    denied: ['never_sent', 'denied_by_policy', 'after_approval'],
    gateway_read: ['completed', 'ok', 'no'],
    gateway_write: ['completed', 'ok', 'no'],
  };
  const deliveries = new Set<string>();
  for (const [name, [delivery, category, retry]] of Object.entries(expected)) {
    const items = await outcomes(request, `requestRef=${byName[name].requestRef}`);
    expect(items, name).toHaveLength(1);
    expect(items[0].classification, name).toMatchObject({ delivery, category, retry });
    expect(items[0].principal).toBe('user_193');
    // What the agent classified with the shared classifier is what the console derived.
    expect({ delivery: byName[name].delivery, category: byName[name].category }, name).toEqual({ delivery, category });
    deliveries.add(delivery);
  }

  // The refund: one record with the grant, the grant redeemed once, a second redemption refused.
  const refund = byName.refund;
  const [refundRecord] = await outcomes(request, `requestRef=${refund.requestRef}`);
  expect(refundRecord.grantId).toBe(refund.grantId);
  expect(await outcomes(request, `grantId=${refund.grantId}`)).toHaveLength(1);
  const approval = await (
    await request.get(`/api/v1/approvals/${refund.approvalId}`, { headers: bearer(reviewerToken) })
  ).json();
  expect(approval).toMatchObject({
    status: 'redeemed',
    grant: { id: refund.grantId, redeemedAt: expect.any(String), revokedAt: null },
  });
  expect(approval.decisions).toEqual([
    expect.objectContaining({ reviewer: users.reviewer.email, decision: 'approve' }),
  ]);
  const again = await request.post(`/api/v1/grants/${refund.grantId}/redeem`, {
    headers: bearer(agentKey),
    data: { server: DEMO_SERVER_NAME, tool: 'refund_payment', argsDigest: refundRecord.argsDigest },
  });
  expect(again.status()).toBe(409);

  // Through the gateway: recorded by it (its agent name), the read without a grant, the refund held
  // until the reviewer token approved it, then forwarded with its grant redeemed once.
  const [gwRead] = await outcomes(request, `requestRef=${byName.gateway_read.requestRef}`);
  const [gwWrite] = await outcomes(request, `requestRef=${byName.gateway_write.requestRef}`);
  for (const r of [gwRead, gwWrite]) expect(r.agent).toBe('demo-support-agent via countersign-gateway');
  expect(gwRead.grantId).toBeNull();
  expect(gwWrite.grantId).toEqual(expect.any(String));
  expect(gwWrite.grantId).toBe(byName.gateway_write.grantId);
  expect(byName.gateway_write.approvalId).toEqual(expect.any(String));
  const gwApproval = await (
    await request.get(`/api/v1/approvals/${byName.gateway_write.approvalId}`, { headers: bearer(reviewerToken) })
  ).json();
  expect(gwApproval).toMatchObject({ status: 'redeemed', grant: { id: gwWrite.grantId, revokedAt: null } });
  expect(gwApproval.decisions).toEqual([
    expect.objectContaining({ reviewer: users.reviewer.email, decision: 'approve' }),
  ]);

  // The denied request: never sent, no grant.
  const [deniedRecord] = await outcomes(request, `requestRef=${byName.denied.requestRef}`);
  expect(deniedRecord.grantId).toBeNull();

  // The timeout and the unsafe replay share one request reference.
  expect(byName.timeout.requestRef).toBe(byName.unsafe_replay.requestRef);
  expect(byName.timeout.note).toBe('the server completed the write after the client gave up');
  const credit = await outcomes(request, `requestRef=${byName.timeout.requestRef}`);
  expect(credit.map((r) => [r.classification.delivery, r.classification.category, r.idempotencyKey]).reverse()).toEqual(
    [
      ['unknown', 'timeout', byName.timeout.idempotencyKey],
      ['completed', 'ok', byName.unsafe_replay.idempotencyKey],
    ],
  );
  expect(credit.every((r) => r.grantId)).toBe(true);
  deliveries.add('unknown');
  expect([...deliveries].sort()).toEqual(['completed', 'never_sent', 'rejected', 'unknown']);

  const incident = await (
    await request.get(`/api/v1/incidents/${byName.timeout.requestRef}`, { headers: bearer(readKey) })
  ).json();
  expect(incident.findings.map((f: { kind: string }) => f.kind)).toContain('unsafe_replay');
  expect(report.findings?.kinds).toContain('unsafe_replay');
});

test('Countersign down: the tool call still works and its record waits; writes are not sent; records arrive once it is back', async ({
  request,
  baseURL,
}) => {
  test.setTimeout(60_000);
  const demo = await startDemoMcpServer();
  const port = await freePort();
  const client = new Client({ name: 'e2e-agent', version: '1.0.0' });
  const agent = withCountersign(client, {
    url: `http://127.0.0.1:${port}`,
    apiKey: agentKey,
    server: DEMO_SERVER_NAME,
    trustedServer: true,
    organization: 'acme',
    principal: 'user_193',
    agent: 'e2e-agent',
    connect: () =>
      client.connect(
        new StreamableHTTPClientTransport(demo.url, {
          fetch: observingFetch(),
          requestInit: { headers: { authorization: `Bearer ${demo.tokens.full}` } },
        }),
      ),
    reporterOptions: { flushIntervalMs: 60_000 },
    approval: { maxWaitMs: 2000 },
  });
  const requestRef = `req_e2e_down_${Date.now().toString(36)}`;
  let proxy: { close(): Promise<void> } | null = null;
  try {
    const read = await agent.callTool(
      { name: 'get_order', arguments: { orderId: '4411' } },
      { requestRef, summary: 'Look up order 4411' },
    );
    expect(read.classification).toMatchObject({ delivery: 'completed', category: 'ok' });
    expect(read.result?.structuredContent).toMatchObject({ orderId: '4411' });

    const write = await agent.callTool(
      {
        name: 'refund_payment',
        arguments: { orderId: '4411', amount: 5, currency: 'EUR', idempotencyKey: `${requestRef}-refund` },
      },
      { requestRef, idempotencyKey: `${requestRef}-refund`, summary: 'Refund 5.00 EUR on order 4411' },
    );
    expect(write.classification).toMatchObject({ delivery: 'never_sent', category: 'approval_required' });
    expect(demo.store.refunds.size).toBe(0);

    expect(await agent.flush()).toEqual({ ok: false, buffered: 2 });
    expect(await outcomes(request, `requestRef=${requestRef}`)).toEqual([]);

    // Countersign is back at the same address.
    proxy = await forward(port, new URL(baseURL!).port);
    expect(await agent.flush()).toEqual({ ok: true, buffered: 0 });
    const stored = await outcomes(request, `requestRef=${requestRef}`);
    expect(stored.map((r) => [r.eventId, r.classification.delivery, r.classification.category]).sort()).toEqual(
      [
        [read.record.eventId, 'completed', 'ok'],
        [write.record.eventId, 'never_sent', 'approval_required'],
      ].sort(),
    );
  } finally {
    await agent.close(1000);
    await client.close();
    await demo.close();
    await proxy?.close();
  }
});

// A plain TCP forwarder: the console reachable again on the port the reporter was given.
async function forward(port: number, targetPort: string): Promise<{ close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    const upstream = connect(Number(targetPort), '127.0.0.1');
    for (const s of [socket, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    }
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  return {
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
