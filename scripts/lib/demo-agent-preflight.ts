// What the agent-integration demo needs of the console it reports to, checked through the HTTP API
// before any scenario runs, so that it works against any console its key reaches (a fresh database
// without the demo seed, a production console) or stops naming the step that is missing:
//   - the API key is accepted and holds the demo's scopes (and its organization, if bound to one);
//   - the reviewer token, when given, is a person who may decide and is not the agent's principal;
//   - the demo MCP server is trusted (`servers:trust`), else its read-only hints do not count: its
//     reads would wait for approvals and a failed read would count as an uncertain write. An admin's
//     personal token may trust it through the API, and the demo then does so itself; an API key
//     never may (servers.manage is granted to admins and the command line only);
//   - no policy rule changes what the scenarios' tools need (a rule can only be changed from the
//     command line or by an admin in the console).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { callApi, problemCode, type ApiResponse, type CountersignEndpoint } from '../../lib/mcp/countersign-http';
import { annotationsOf } from '../../lib/mcp/countersign-client';
import type { ToolAnnotations } from '../../lib/outcomes/schemas';
import { DEMO_SERVER_NAME, type DemoMcpServer } from '../demo-mcp-server';

export const DEMO_AGENT_SCOPES = ['outcomes:write', 'approvals:request', 'grants:redeem'] as const;
export const CREATE_DEMO_KEY = `npm run cli -- apikeys:create --name demo-agent --scopes ${DEMO_AGENT_SCOPES.join(',')}`;

/**
 * The approvals each tool the scenarios call is written for: what the console's policy asks of a
 * trusted server's tools with no rule (docs/design.md, "Approval lifecycle"): read-only none, the
 * other writes one (none of these is open-world).
 */
export const DEMO_TOOL_APPROVALS: Record<string, 0 | 1> = {
  get_order: 0,
  get_invoice: 0,
  list_refunds: 0,
  refund_payment: 1,
  issue_credit: 1,
};

/** The console is not ready for the demo; `steps` says what to do, one line each. */
export class DemoSetupError extends Error {
  constructor(
    readonly console: string,
    readonly steps: string[],
  ) {
    super(`the console at ${console} is not ready for the demo:\n${steps.map((s) => `  - ${s}`).join('\n')}`);
    this.name = 'DemoSetupError';
  }
}

export interface DemoSetup {
  organization: string;
  principal: string;
  /** Who the reviewer token is (null: none given). */
  reviewer: { email: string; role: string } | null;
}

type Me =
  | { kind: 'api_key'; scopes: string[]; organization: string | null }
  | { kind: 'user'; email: string; role: string; principalId: string };

type ToolPolicy = { name: string; readOnly: boolean; blocked: boolean; requiredApprovals: number; reason: string };

export async function prepareConsole(o: {
  endpoint: CountersignEndpoint;
  reviewer: CountersignEndpoint | null;
  demo: DemoMcpServer;
  organization?: string;
  principal?: string;
  log: (line: string) => void;
}): Promise<DemoSetup> {
  const url = String(o.endpoint.url);
  const steps: string[] = [];
  const stop = (...more: string[]) => new DemoSetupError(url, [...steps, ...more]);

  const key = await callApi(o.endpoint, 'GET', '/api/v1/me');
  if (key.kind === 'network_error')
    throw stop(`nothing answers at ${url}: start the console (npm start) or correct COUNTERSIGN_URL`);
  if (key.status === 401)
    throw stop(
      `COUNTERSIGN_API_KEY is not accepted there (unknown, revoked or expired): create one with ${CREATE_DEMO_KEY}`,
    );
  if (key.status !== 200)
    throw stop(`GET /api/v1/me answered ${answer(key)}: is COUNTERSIGN_URL a Countersign console?`);
  const me = key.body as Me;
  if (me.kind !== 'api_key')
    throw stop(`COUNTERSIGN_API_KEY is a person's token, not an API key: create one with ${CREATE_DEMO_KEY}`);
  const missing = DEMO_AGENT_SCOPES.filter((s) => !me.scopes.includes(s));
  if (missing.length)
    steps.push(`the API key lacks the scope(s) ${missing.join(', ')}: create one with ${CREATE_DEMO_KEY}`);
  if (me.organization && o.organization && me.organization !== o.organization)
    steps.push(
      `the API key is for organization "${me.organization}" but COUNTERSIGN_ORGANIZATION is "${o.organization}": unset it, or use a key for "${o.organization}"`,
    );
  const setup: DemoSetup = {
    organization: o.organization ?? me.organization ?? 'acme',
    principal: o.principal ?? 'user_193',
    reviewer: null,
  };

  let admin = false;
  if (o.reviewer) {
    const r = await callApi(o.reviewer, 'GET', '/api/v1/me');
    const who = r.kind === 'response' && r.status === 200 ? (r.body as Me) : null;
    if (!who)
      steps.push(
        `COUNTERSIGN_REVIEWER_TOKEN is not accepted there (${answer(r)}): create one with npm run cli -- tokens:create --email <a reviewer's e-mail> --name demo-agent`,
      );
    else if (who.kind !== 'user')
      steps.push("COUNTERSIGN_REVIEWER_TOKEN is an API key: it must be a reviewer's personal token (cs_pat_…)");
    else if (who.role !== 'reviewer' && who.role !== 'admin')
      steps.push(
        `COUNTERSIGN_REVIEWER_TOKEN is ${who.email}'s, whose role (${who.role}) may not decide approvals: use a reviewer's or an admin's`,
      );
    else if (who.principalId === setup.principal)
      steps.push(
        `COUNTERSIGN_REVIEWER_TOKEN is ${who.email}'s, the principal the agent acts for (${setup.principal}), and nobody decides their own requests: use another person's token, or set COUNTERSIGN_PRINCIPAL`,
      );
    else {
      setup.reviewer = { email: who.email, role: who.role };
      admin = who.role === 'admin';
    }
  }

  if (!missing.includes('approvals:request')) {
    const tools = await listTools(o.demo);
    let policy = await evaluate(o.endpoint, tools);
    if (policy && !policy.trusted && admin && o.reviewer) {
      const trusted = await callApi(o.reviewer, 'POST', '/api/v1/servers/trust', { body: { name: DEMO_SERVER_NAME } });
      if (trusted.kind === 'response' && trusted.status === 200) {
        o.log(`Trusted "${DEMO_SERVER_NAME}" on the console as ${setup.reviewer!.email} (audited as server.trust)`);
        policy = await evaluate(o.endpoint, tools);
      } else o.log(`Trusting "${DEMO_SERVER_NAME}" with the reviewer token failed: ${answer(trusted)}`);
    }
    if (!policy)
      steps.push('POST /api/v1/policy/evaluate failed: is COUNTERSIGN_URL a Countersign console of this version?');
    else if (!policy.trusted)
      steps.push(
        `the demo MCP server "${DEMO_SERVER_NAME}" is not trusted, so its read-only hints do not count (reads would wait for approvals): run npm run cli -- servers:trust --name ${DEMO_SERVER_NAME} (with the console's DATABASE_URL), or set COUNTERSIGN_REVIEWER_TOKEN to an admin's personal token and the demo trusts it itself (no API key scope may)`,
      );
    else
      for (const [tool, needs] of Object.entries(DEMO_TOOL_APPROVALS)) {
        const got = policy.tools.find((t) => t.name === tool);
        if (!got || (!got.blocked && got.requiredApprovals === needs)) continue;
        steps.push(
          `${tool} on ${DEMO_SERVER_NAME} ${got.blocked ? 'is blocked' : `needs ${got.requiredApprovals} approval(s)`} (${got.reason}); the demo is written for ${needs}: run npm run cli -- policy:set --server ${DEMO_SERVER_NAME} --tool ${tool} --approvals ${needs}`,
        );
      }
  }
  if (steps.length) throw stop();
  return setup;
}

// The tools as the demo server lists them: their annotations are what the console judges.
async function listTools(demo: DemoMcpServer): Promise<{ name: string; annotations: ToolAnnotations | null }[]> {
  const client = new Client({ name: 'demo-agent-preflight', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(demo.url, {
      requestInit: { headers: { authorization: `Bearer ${demo.tokens.full}` } },
    }),
  );
  try {
    const { tools } = await client.listTools();
    return tools
      .filter((t) => t.name in DEMO_TOOL_APPROVALS)
      .map((t) => ({ name: t.name, annotations: annotationsOf(t) }));
  } finally {
    await client.close().catch(() => {});
  }
}

async function evaluate(
  endpoint: CountersignEndpoint,
  tools: { name: string; annotations: ToolAnnotations | null }[],
): Promise<{ trusted: boolean; tools: ToolPolicy[] } | null> {
  const res = await callApi(endpoint, 'POST', '/api/v1/policy/evaluate', { body: { server: DEMO_SERVER_NAME, tools } });
  return res.kind === 'response' && res.status === 200 ? (res.body as { trusted: boolean; tools: ToolPolicy[] }) : null;
}

function answer(r: ApiResponse): string {
  if (r.kind === 'network_error') return 'unreachable';
  const code = problemCode(r.body);
  return `HTTP ${r.status}${code ? ` ${code}` : ''}`;
}
