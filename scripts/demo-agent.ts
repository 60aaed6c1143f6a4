// The agent-integration demo: a support agent drives the demo MCP server (started here on
// loopback) through lib/mcp's wrapper, then a plain MCP client drives it through the Countersign
// gateway (in-process); Countersign receives every outcome and approval.
//
//   COUNTERSIGN_URL=http://127.0.0.1:3000 COUNTERSIGN_API_KEY=cs_live_… \
//   [COUNTERSIGN_REVIEWER_TOKEN=cs_pat_…] npm run demo:agent [-- --json]
//
// It works against any console the key reaches, with or without the demo seed data. Before any
// scenario it checks through the API what the scenarios need, and stops (exit 2) naming each
// missing step: the key and its scopes; the reviewer token, if given; the demo MCP server
// "billing-mcp" trusted (`npm run cli -- servers:trust --name billing-mcp`; with an admin's
// personal token as COUNTERSIGN_REVIEWER_TOKEN the demo trusts it itself, which no API key may);
// no policy rule changing the approvals its tools need (`npm run cli -- policy:set …`).
//
// The API key needs outcomes:write, approvals:request and grants:redeem. With a reviewer's
// personal token the demo decides its own approval requests (the reviewer must not be the
// principal the agent acts for, COUNTERSIGN_PRINCIPAL, default user_193); without one it waits
// for a person in the console (COUNTERSIGN_APPROVAL_WAIT_SECONDS, default 600) and skips the
// denial scenario. The scenarios show every delivery state: completed (a read, approved writes,
// an output-schema violation), rejected (401, 403, invalid arguments), unknown (a timed-out write)
// and never sent (the MCP server down; a denied request). Each prints its request reference:
// search for it in the console; --json prints the report (scripts/lib/demo-agent-types.ts).
import { pathToFileURL } from 'node:url';
import { runDemoAgent } from './lib/demo-agent-run';
import { config } from '@/lib/config';
import { DemoSetupError } from './lib/demo-agent-preflight';

export { runDemoAgent, type DemoAgentOptions, type DemoAgentReport, type ScenarioReport } from './lib/demo-agent-run';

async function main() {
  const settings = config(); // lib/config: a bad value stops here, named
  const { COUNTERSIGN_URL: url, COUNTERSIGN_API_KEY: apiKey } = settings;
  if (!url || !apiKey) {
    console.error(
      'Set COUNTERSIGN_URL (e.g. http://127.0.0.1:3000) and COUNTERSIGN_API_KEY (a key with outcomes:write, approvals:request, grants:redeem).',
    );
    console.error(
      'Create one with: npm run cli -- apikeys:create --name demo-agent --scopes outcomes:write,approvals:request,grants:redeem',
    );
    process.exit(2);
  }
  const json = process.argv.includes('--json');
  const report = await runDemoAgent({
    countersignUrl: url,
    apiKey,
    reviewerToken: settings.COUNTERSIGN_REVIEWER_TOKEN,
    principal: settings.COUNTERSIGN_PRINCIPAL,
    organization: settings.COUNTERSIGN_ORGANIZATION,
    approvalWaitMs: settings.COUNTERSIGN_APPROVAL_WAIT_SECONDS * 1000,
    // With --json, stdout carries only the report; the narration goes to stderr.
    log: json ? (line) => console.error(line) : undefined,
  });
  console.log(
    json
      ? JSON.stringify(report)
      : '\nRequest references:\n' +
          report.scenarios
            .map((s) => `  ${s.name.padEnd(20)} ${s.requestRef}${s.skipped ? ' (skipped)' : ''}`)
            .join('\n'),
  );
  const mismatches = report.scenarios.filter(
    (s) => !s.skipped && (s.delivery !== s.expected.delivery || s.category !== s.expected.category),
  );
  process.exit(mismatches.length > 0 ? 1 : 0);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((err) => {
    console.error('[demo-agent]', err instanceof Error ? err.message : err);
    // Set-up missing on the console: like a missing variable, nothing ran.
    process.exit(err instanceof DemoSetupError ? 2 : 1);
  });
}
