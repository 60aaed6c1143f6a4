// The agent-integration demo's gateway scenario: a plain MCP client (SDK v2's, in its default
// 2025 era, with no Countersign code of its own, as a desktop host is) talks to the demo MCP server
// through the Countersign gateway, run in-process in Streamable HTTP mode on loopback. A read goes
// through at once; a refund is held by the gateway until a reviewer approves it, then forwarded
// once with its grant redeemed.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { gatewayContext } from '../../lib/gateway/context';
import { runHttp } from '../../lib/gateway/http';
import type { CountersignEndpoint } from '../../lib/mcp/countersign-http';
import { OutcomeReporter, type ApprovalSnapshot } from '../../lib/mcp';
import { classifyRecord } from '../../lib/outcomes/classify';
import type { Outcome } from '../../lib/outcomes/schemas';
import { DEMO_SERVER_NAME, type DemoMcpServer } from '../demo-mcp-server';
import type { ReviewerSaw, ScenarioReport } from './demo-agent-types';

export const GATEWAY_AGENT = 'demo-support-agent via countersign-gateway';

export interface GatewayScenarioOptions {
  demo: DemoMcpServer;
  endpoint: CountersignEndpoint;
  principal: string;
  organization: string;
  approvalWaitMs: number;
  ref: (name: string) => string;
  runId: string;
  /** Called with each approval the gateway requests (the reviewer token decides it, or a person). */
  onRequested: (approval: ApprovalSnapshot) => Promise<void>;
  /** What the reviewer token read of an approval before deciding it. */
  saw: (approvalId: string | null | undefined) => ReviewerSaw | undefined;
  log: (line: string) => void;
}

export async function runGatewayScenarios(o: GatewayScenarioOptions): Promise<ScenarioReport[]> {
  const approvals = new Map<string, string>(); // request reference → approval id
  // The gateway's own traffic to the console, watched so the demo can decide what it asked for.
  const watching: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    const path = new URL(typeof input === 'string' || input instanceof URL ? input : input.url).pathname;
    if (init?.method === 'POST' && path.endsWith('/api/v1/approvals') && res.ok) {
      const body = (await res.clone().json()) as ApprovalSnapshot & { status: string };
      const requestRef = JSON.parse(String(init.body)).requestRef as string;
      approvals.set(requestRef, body.id);
      if (body.status === 'pending') await o.onRequested(body);
    }
    return res;
  };
  const endpoint = { ...o.endpoint, fetch: watching };
  const reporter = new OutcomeReporter({ ...endpoint, flushIntervalMs: 200 });
  const records = new Map<string, Outcome>();
  const enqueue = reporter.enqueue.bind(reporter);
  reporter.enqueue = (record: Outcome) => {
    records.set(record.eventId, record);
    return enqueue(record);
  };
  const ctx = gatewayContext({
    server: DEMO_SERVER_NAME,
    principal: o.principal,
    organization: o.organization,
    agent: GATEWAY_AGENT,
    approvalWaitMs: o.approvalWaitMs,
    endpoint,
    reporter,
    log: (line) => o.log(`    gateway: ${line}`),
  });
  const gateway = await runHttp(ctx, o.demo.url, '127.0.0.1', 0);
  o.log(`\nGateway on ${gateway.url}, in front of ${o.demo.url}`);
  const client = new Client({ name: 'demo-desktop-host', version: '1.0.0' });
  const scenarios: ScenarioReport[] = [];
  try {
    await client.connect(
      new StreamableHTTPClientTransport(new URL(gateway.url), {
        requestInit: { headers: { authorization: `Bearer ${o.demo.tokens.full}` } },
      }),
    );
    const run = async (
      name: string,
      expected: ScenarioReport['expected'],
      call: { name: string; arguments: Record<string, unknown>; summary: string; idempotencyKey?: string },
    ) => {
      const requestRef = o.ref(name);
      o.log(`\n${name}  —  request reference ${requestRef}`);
      const result = await client.callTool(
        {
          name: call.name,
          arguments: call.arguments,
          _meta: {
            'countersign/requestRef': requestRef,
            'countersign/summary': call.summary,
            ...(call.idempotencyKey ? { 'countersign/idempotencyKey': call.idempotencyKey } : {}),
          },
        },
        { timeout: o.approvalWaitMs + 60_000, resetTimeoutOnProgress: true },
      );
      const eventId = result._meta?.['countersign/eventId'];
      const record = typeof eventId === 'string' ? records.get(eventId) : undefined;
      const c = record ? classifyRecord(record, true) : null;
      const report: ScenarioReport = {
        name,
        requestRef,
        expected,
        delivery: c?.delivery,
        category: c?.category,
        retry: c?.retry,
        grantId: record?.grantId ?? undefined,
        approvalId: approvals.get(requestRef) ?? null,
        idempotencyKey: record?.idempotencyKey ?? undefined,
        reviewerSaw: o.saw(approvals.get(requestRef)),
        note: result.isError ? 'the gateway or the server answered with an error' : 'answered by the server',
      };
      scenarios.push(report);
      const matches = c?.delivery === expected.delivery && c?.category === expected.category;
      o.log(
        `    ${c ? `${c.delivery} / ${c.category} (retry: ${c.retry})` : 'no record'}${matches ? '' : `  ← expected ${expected.delivery} / ${expected.category}`}`,
      );
      if (c) o.log(`    ${c.whatHappened} Next: ${c.nextStep}`);
    };

    await run(
      'gateway_read',
      { delivery: 'completed', category: 'ok' },
      { name: 'get_order', arguments: { orderId: '4412' }, summary: 'Look up order 4412 (through the gateway)' },
    );
    const key = `refund-4412-gw-${o.runId}`;
    await run(
      'gateway_write',
      { delivery: 'completed', category: 'ok' },
      {
        name: 'refund_payment',
        arguments: { orderId: '4412', amount: 20, currency: 'EUR', idempotencyKey: key, reason: 'Late delivery' },
        summary: 'Refund 20.00 EUR on order 4412 (through the gateway)',
        idempotencyKey: key,
      },
    );
  } finally {
    await client.close().catch(() => {});
    await gateway.close();
    const flushed = await reporter.close(10_000);
    o.log(
      `Gateway records: ${reporter.stats().sent} sent${flushed.ok ? '' : `, ${flushed.buffered} still buffered (Countersign unreachable?)`}`,
    );
  }
  return scenarios;
}
