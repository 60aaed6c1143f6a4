// The agent-integration demo's scenarios (scripts/demo-agent.ts is its command line): a support
// agent drives the demo MCP server (on loopback) through lib/mcp's wrapper, and Countersign receives
// every outcome and approval (with the call's arguments); then a plain client does the same through
// the gateway (demo-agent-gateway.ts). First it checks the console has what the scenarios need
// (demo-agent-preflight.ts). Who decides the approvals: demo-agent-reviewer.ts.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { callApi, type CountersignEndpoint } from '../../lib/mcp/countersign-http';
import {
  observingFetch,
  OutcomeReporter,
  withCountersign,
  type CountersignClient,
  type GuardedCallResult,
} from '../../lib/mcp';
import { DEMO_SERVER_NAME, LEGACY_ORDER, startDemoMcpServer } from '../demo-mcp-server';
import { runGatewayScenarios } from './demo-agent-gateway';
import { prepareConsole } from './demo-agent-preflight';
import { demoReviewer } from './demo-agent-reviewer';
import type { DemoAgentOptions, DemoAgentReport, ScenarioReport } from './demo-agent-types';

export type { DemoAgentOptions, DemoAgentReport, ScenarioReport } from './demo-agent-types';

const SLOW_MS = 1500;
const SHORT_TIMEOUT_MS = 400;

export async function runDemoAgent(options: DemoAgentOptions): Promise<DemoAgentReport> {
  const log = options.log ?? console.log;
  const runId = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  const ref = (name: string) => `req_demo_${name}_${runId}`;
  const endpoint: CountersignEndpoint = { url: options.countersignUrl, apiKey: options.apiKey };
  const reviewer: CountersignEndpoint | null = options.reviewerToken
    ? { url: options.countersignUrl, apiKey: options.reviewerToken }
    : null;
  const demo = await startDemoMcpServer({ slowMs: SLOW_MS });
  log(`Demo MCP server "${DEMO_SERVER_NAME}" on ${demo.url}; reporting to ${options.countersignUrl} (run ${runId})`);
  // Nothing is recorded or requested until the console has what the scenarios need.
  const setup = await prepareConsole({
    endpoint,
    reviewer,
    demo,
    organization: options.organization,
    principal: options.principal,
    log,
  }).catch(async (err: unknown) => {
    await demo.close();
    throw err;
  });
  const reporter = new OutcomeReporter({ ...endpoint, flushIntervalMs: 200 });
  const { onRequested, decide, saw } = demoReviewer({ reviewer, countersignUrl: options.countersignUrl, log });

  const clients: Client[] = [];
  const wrap = (token: string, mcpUrl = demo.url): CountersignClient => {
    const client = new Client({ name: 'demo-support-agent', version: '1.0.0' });
    clients.push(client);
    return withCountersign(client, {
      ...endpoint,
      reporter,
      server: DEMO_SERVER_NAME,
      trustedServer: true,
      organization: setup.organization,
      principal: setup.principal,
      agent: 'demo-support-agent',
      connect: () =>
        client.connect(
          new StreamableHTTPClientTransport(mcpUrl, {
            fetch: observingFetch(),
            requestInit: { headers: { authorization: `Bearer ${token}` } },
          }),
        ),
      approval: { maxWaitMs: options.approvalWaitMs ?? 600_000, onRequested },
    });
  };

  const agent = wrap(demo.tokens.full);
  const scenarios: ScenarioReport[] = [];
  const run = async (
    name: string,
    expected: ScenarioReport['expected'],
    act: () => Promise<GuardedCallResult>,
    requestRef = ref(name),
  ): Promise<GuardedCallResult> => {
    log(`\n${name}  —  request reference ${requestRef}`);
    const r = await act();
    const c = r.classification;
    const report: ScenarioReport = {
      name,
      requestRef,
      expected,
      delivery: c.delivery,
      category: c.category,
      retry: c.retry,
      grantId: r.approval?.grantId,
      approvalId: r.approval?.id,
      idempotencyKey: r.record.idempotencyKey ?? undefined,
      reviewerSaw: saw(r.approval?.id),
    };
    scenarios.push(report);
    const matches = c.delivery === expected.delivery && c.category === expected.category;
    log(
      `    ${c.delivery} / ${c.category} (retry: ${c.retry})${matches ? '' : `  ← expected ${expected.delivery} / ${expected.category}`}`,
    );
    log(`    ${c.whatHappened} Next: ${c.nextStep}`);
    if (r.approval?.blockedBecause) log(`    blocked: ${r.approval.blockedBecause}`);
    return r;
  };

  const creditRef = ref('timeout');
  const creditKey = `credit-4412-${runId}`;
  try {
    await run('read', { delivery: 'completed', category: 'ok' }, () =>
      agent.callTool(
        { name: 'get_order', arguments: { orderId: '4411' } },
        { requestRef: ref('read'), summary: 'Look up order 4411' },
      ),
    );

    await run('refund', { delivery: 'completed', category: 'ok' }, () =>
      agent.callTool(
        {
          name: 'refund_payment',
          arguments: {
            orderId: '4411',
            amount: 40,
            currency: 'EUR',
            idempotencyKey: `refund-4411-${runId}`,
            reason: 'Damaged on arrival',
          },
        },
        {
          requestRef: ref('refund'),
          idempotencyKey: `refund-4411-${runId}`,
          summary: 'Refund 40.00 EUR on order 4411',
          resource: { type: 'order', id: '4411' },
        },
      ),
    );

    await run('unauthenticated', { delivery: 'rejected', category: 'unauthenticated' }, () =>
      wrap(`demo_revoked_${randomBytes(8).toString('hex')}`).callTool(
        { name: 'get_order', arguments: { orderId: '4411' } },
        { requestRef: ref('unauthenticated'), summary: 'Look up order 4411 with a revoked token' },
      ),
    );

    await run('insufficient_scope', { delivery: 'rejected', category: 'forbidden' }, () =>
      wrap(demo.tokens.ordersOnly).callTool(
        { name: 'list_refunds', arguments: { orderId: '4411' } },
        { requestRef: ref('insufficient_scope'), summary: 'List refunds on order 4411 with an orders-only token' },
      ),
    );

    await run('invalid_arguments', { delivery: 'rejected', category: 'invalid_arguments' }, () =>
      agent.callTool(
        { name: 'get_order', arguments: { orderId: 4411 } },
        { requestRef: ref('invalid_arguments'), summary: 'Look up order 4411 (order number sent as a number)' },
      ),
    );

    await run('output_schema', { delivery: 'completed', category: 'output_schema_violation' }, () =>
      agent.callTool(
        { name: 'get_invoice', arguments: { orderId: LEGACY_ORDER } },
        { requestRef: ref('output_schema'), summary: `Read the invoice of legacy order ${LEGACY_ORDER}` },
      ),
    );

    // The server is down (nothing listens at its address): the call never left the agent.
    const down = new URL(demo.url);
    down.port = String(await closedPort());
    await run('server_down', { delivery: 'never_sent', category: 'connection_lost' }, () =>
      wrap(demo.tokens.full, down).callTool(
        { name: 'get_order', arguments: { orderId: '4411' } },
        { requestRef: ref('server_down'), summary: 'Look up order 4411 while the orders server is down' },
      ),
    );

    const credit = (idempotencyKey: string, timeoutMs: number) =>
      agent.callTool(
        { name: 'issue_credit', arguments: { orderId: '4412', amount: 10, currency: 'EUR', idempotencyKey } },
        {
          requestRef: creditRef,
          idempotencyKey,
          summary: 'Issue 10.00 EUR store credit on order 4412',
          resource: { type: 'order', id: '4412' },
          timeoutMs,
        },
      );
    const timedOut = await run(
      'timeout',
      { delivery: 'unknown', category: 'timeout' },
      () => credit(creditKey, SHORT_TIMEOUT_MS),
      creditRef,
    );
    if (timedOut.approval?.grantId) {
      const landed = await waitFor(() => demo.store.credits.has(creditKey), SLOW_MS + 3000);
      scenarios.at(-1)!.note = landed
        ? 'the server completed the write after the client gave up'
        : 'the write did not land';
      log(`    meanwhile on the server: ${scenarios.at(-1)!.note}`);
    }

    if (reviewer) {
      decide('deny');
      await run('denied', { delivery: 'never_sent', category: 'denied_by_policy' }, () =>
        agent.callTool(
          {
            name: 'refund_payment',
            arguments: { orderId: '4413', amount: 18, currency: 'EUR', idempotencyKey: `refund-4413-${runId}` },
          },
          {
            requestRef: ref('denied'),
            idempotencyKey: `refund-4413-${runId}`,
            summary: 'Refund 18.00 EUR on order 4413',
            resource: { type: 'order', id: '4413' },
          },
        ),
      );
      decide('approve');
    } else {
      log(
        "\ndenied  —  skipped: set COUNTERSIGN_REVIEWER_TOKEN to a reviewer's personal token to have a request denied",
      );
      scenarios.push({
        name: 'denied',
        requestRef: ref('denied'),
        expected: { delivery: 'never_sent', category: 'denied_by_policy' },
        skipped: 'no reviewer token',
      });
    }

    // The agent misbehaves on purpose: after the unknown outcome it retries with a NEW key
    // instead of checking state and replaying the same key. The credit is issued twice.
    await run(
      'unsafe_replay',
      { delivery: 'completed', category: 'ok' },
      () => credit(`${creditKey}-retry`, 10_000),
      creditRef,
    );
    const credits = [...demo.store.credits.values()].filter((c) => c.orderId === '4412').length;
    scenarios.at(-1)!.note = `order 4412 now has ${credits} store credit(s)`;
    log(`    ${scenarios.at(-1)!.note}: Countersign flags this as an unsafe replay`);

    scenarios.push(
      ...(await runGatewayScenarios({
        demo,
        endpoint,
        principal: setup.principal,
        organization: setup.organization,
        approvalWaitMs: options.approvalWaitMs ?? 600_000,
        ref,
        runId,
        onRequested,
        saw,
        log,
      })),
    );
  } finally {
    const flushed = await reporter.close(10_000);
    for (const client of clients) await client.close().catch(() => {});
    await demo.close();
    log(
      `\nOutcome records: ${reporter.stats().sent} sent${flushed.ok ? '' : `, ${flushed.buffered} still buffered (Countersign unreachable?)`}`,
    );
  }

  let findings: DemoAgentReport['findings'] = null;
  if (reviewer) {
    const incident = await callApi(reviewer, 'GET', `/api/v1/incidents/${encodeURIComponent(creditRef)}`);
    if (incident.kind === 'response' && incident.status === 200) {
      const kinds = ((incident.body as { findings?: { kind: string }[] }).findings ?? []).map((f) => f.kind);
      findings = { requestRef: creditRef, kinds };
      log(`Findings on ${creditRef}: ${kinds.join(', ') || 'none'}`);
    }
  }
  return { runId, scenarios, reporter: reporter.stats(), findings };
}

// A loopback port nothing listens on (taken, then let go).
function closedPort(): Promise<number> {
  const server = createServer();
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function waitFor(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}
