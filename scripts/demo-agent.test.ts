// `npm run demo:agent` against a console without the demo seed data: this file's database is only
// migrated (no demo users, no trusted servers, no policy rules), and the console is its /api/v1
// route handlers served over HTTP on loopback (testing/console-fetch.ts). The demo runs as a person
// runs it, as a child process with --json; what it reports and what the console stored are checked
// against the tables below.
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cli } from '@/lib/auth/actor';
import { childEnvironment } from '@/lib/config';
import { createApiKey, createPersonalToken } from '@/lib/server/credentials/credentials';
import { db } from '@/lib/server/db/db';
import { deletePolicyRule, setPolicyRule } from '@/lib/server/policy/policy-rules';
import { consoleFetch } from '@/testing/console-fetch';
import { makeUser, uniq, value } from '@/testing/factories';
import type { DemoAgentReport } from './demo-agent';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

const consoleHttp = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', async () => {
    const answer = await consoleFetch(`http://127.0.0.1${req.url}`, {
      method: req.method,
      headers: req.headers as Record<string, string>,
      body: chunks.length ? Buffer.concat(chunks) : undefined,
    }).catch(() => new Response('no route', { status: 404 }));
    res.writeHead(answer.status, Object.fromEntries(answer.headers));
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
});
let url = '';

beforeAll(async () => {
  await new Promise<void>((resolve) => consoleHttp.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(consoleHttp.address() as AddressInfo).port}`;
});
afterAll(() => consoleHttp.close());

const key = async (scopes: ('outcomes:write' | 'outcomes:read' | 'approvals:request' | 'grants:redeem')[]) =>
  value(await createApiKey(cli, { name: uniq('demo-agent'), scopes })).secret;
const tokenOf = async (role: 'reviewer' | 'admin') => {
  const person = await makeUser(role);
  return { email: person.email, secret: value(await createPersonalToken(cli, person.userId, 'demo')).secret };
};
const AGENT_SCOPES = ['outcomes:write', 'approvals:request', 'grants:redeem'] as const;

/** npm run demo:agent -- --json: its exit code, its report (stdout) and its narration (stderr). */
async function demoAgent(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)('node_modules/.bin/tsx', ['scripts/demo-agent.ts', '--json'], {
      env: childEnvironment({ COUNTERSIGN_URL: url, COUNTERSIGN_APPROVAL_WAIT_SECONDS: '20', ...env }),
      timeout: 100_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

const storedCount = async () => ({
  outcomes: await db.outcomeRecord.count(),
  approvals: await db.approvalRequest.count(),
});

// What each scenario shows, by the contract (docs/design.md's classification table).
const expected: Record<string, [delivery: string, category: string]> = {
  read: ['completed', 'ok'],
  refund: ['completed', 'ok'],
  unauthenticated: ['rejected', 'unauthenticated'],
  insufficient_scope: ['rejected', 'forbidden'],
  invalid_arguments: ['rejected', 'invalid_arguments'],
  output_schema: ['completed', 'output_schema_violation'],
  server_down: ['never_sent', 'connection_lost'],
  timeout: ['unknown', 'timeout'],
  denied: ['never_sent', 'denied_by_policy'],
  unsafe_replay: ['completed', 'ok'],
  gateway_read: ['completed', 'ok'],
  gateway_write: ['completed', 'ok'],
};

describe('the demo agent against a console without the demo data', () => {
  it('stops before anything runs, naming the step: the demo server is not trusted (a reviewer may not trust it)', async () => {
    const reviewer = await tokenOf('reviewer');
    const before = await storedCount();
    const run = await demoAgent({
      COUNTERSIGN_API_KEY: await key([...AGENT_SCOPES]),
      COUNTERSIGN_REVIEWER_TOKEN: reviewer.secret,
    });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('"billing-mcp" is not trusted');
    expect(run.stderr).toContain('npm run cli -- servers:trust --name billing-mcp');
    expect(await storedCount()).toEqual(before);
    expect(await db.trustedServer.count()).toBe(0);
  }, 120_000);

  it('stops naming the scopes a key lacks, and a key the console does not know', async () => {
    const lacking = await demoAgent({ COUNTERSIGN_API_KEY: await key(['outcomes:write']) });
    expect(lacking.code, lacking.stderr).toBe(2);
    expect(lacking.stderr).toContain('lacks the scope(s) approvals:request, grants:redeem');
    expect(lacking.stderr).toContain(
      'npm run cli -- apikeys:create --name demo-agent --scopes outcomes:write,approvals:request,grants:redeem',
    );
    const unknown = await demoAgent({ COUNTERSIGN_API_KEY: 'cs_live_not-a-key-this-console-knows' });
    expect(unknown.code, unknown.stderr).toBe(2);
    expect(unknown.stderr).toContain('COUNTERSIGN_API_KEY is not accepted');
  }, 120_000);

  it("with an admin's token: trusts the demo server itself, runs every scenario, and the console stores all four delivery states", async () => {
    const admin = await tokenOf('admin');
    const agentKey = await key([...AGENT_SCOPES]);
    const run = await demoAgent({ COUNTERSIGN_API_KEY: agentKey, COUNTERSIGN_REVIEWER_TOKEN: admin.secret });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('Trusted "billing-mcp"');
    expect(await db.trustedServer.findUnique({ where: { name: 'billing-mcp' } })).toMatchObject({
      trustedBy: admin.email,
    });

    const report = JSON.parse(run.stdout) as DemoAgentReport;
    expect(report.reporter).toMatchObject({ buffered: 0, dropped: 0, rejected: 0 });
    const seen = Object.fromEntries(report.scenarios.map((s) => [s.name, [s.delivery, s.category]]));
    expect(seen).toEqual(expected);

    // What the console stored, as it classified it itself (under the request reference each printed).
    const readKey = await key(['outcomes:read']);
    const stored: Record<string, [string, string][]> = {};
    for (const s of report.scenarios) {
      const res = await consoleFetch(`${url}/api/v1/outcomes?requestRef=${encodeURIComponent(s.requestRef)}`, {
        headers: { authorization: `Bearer ${readKey}` },
      });
      expect(res.status).toBe(200);
      const items = (await res.json()).items as { classification: { delivery: string; category: string } }[];
      stored[s.requestRef] = items.map((i) => [i.classification.delivery, i.classification.category]);
    }
    for (const s of report.scenarios) {
      // The timeout and the unsafe replay share a request reference: both records are under it.
      expect(stored[s.requestRef], s.name).toContainEqual(expected[s.name]);
    }
    const deliveries = new Set(Object.values(stored).flatMap((items) => items.map(([d]) => d)));
    expect([...deliveries].sort()).toEqual(['completed', 'never_sent', 'rejected', 'unknown']);
    expect(report.findings?.kinds).toContain('unsafe_replay');

    // What the reviewer read before deciding: the very arguments each call ran with (written here
    // as the scenarios send them), and for the gateway's call the tool's description as declared.
    const saw = Object.fromEntries(report.scenarios.map((s) => [s.name, s.reviewerSaw]));
    const run4411 = { orderId: '4411', amount: 40, currency: 'EUR', reason: 'Damaged on arrival' };
    expect(saw.refund).toEqual({
      arguments: { ...run4411, idempotencyKey: `refund-4411-${report.runId}` },
      argumentsNote: null,
      toolDescription: null, // the agent package sends none (only the gateway reads tools/list)
    });
    expect(saw.denied?.arguments).toEqual({
      orderId: '4413',
      amount: 18,
      currency: 'EUR',
      idempotencyKey: `refund-4413-${report.runId}`,
    });
    expect(saw.gateway_write).toEqual({
      arguments: {
        orderId: '4412',
        amount: 20,
        currency: 'EUR',
        idempotencyKey: `refund-4412-gw-${report.runId}`,
        reason: 'Late delivery',
      },
      argumentsNote: null,
      toolDescription:
        'Refunds money on an order to the original payment method. Irreversible. The same idempotencyKey with the same input returns the first refund.',
    });
    // Every approval the demo staged carried its arguments, and none keeps them once decided and done.
    const staged = await db.approvalRequest.findMany({
      where: { requestRef: { in: report.scenarios.map((s) => s.requestRef) } },
      select: { status: true, argumentsSent: true, argumentsSealed: true },
    });
    expect(staged.map((r) => [r.status, r.argumentsSent, r.argumentsSealed]).sort()).toEqual([
      ['denied', true, null],
      ['redeemed', true, null],
      ['redeemed', true, null],
      ['redeemed', true, null],
      ['redeemed', true, null],
    ]);
  }, 120_000);

  it('stops naming a policy rule that changes what a demo tool needs (the server trusted by now)', async () => {
    await db.trustedServer.upsert({
      where: { name: 'billing-mcp' },
      create: { name: 'billing-mcp', trustedBy: 'test' },
      update: {},
    });
    const rule = value(
      await setPolicyRule(cli, { server: 'billing-mcp', tool: 'refund_payment', requiredApprovals: 'blocked' }),
    );
    try {
      const before = await storedCount();
      const run = await demoAgent({ COUNTERSIGN_API_KEY: await key([...AGENT_SCOPES]) });
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain('refund_payment on billing-mcp is blocked');
      expect(run.stderr).toContain(
        'npm run cli -- policy:set --server billing-mcp --tool refund_payment --approvals 1',
      );
      expect(await storedCount()).toEqual(before);
    } finally {
      value(await deletePolicyRule(cli, rule.id));
    }
  }, 120_000);
});
