// The official conformance suite as a differential test (docs/gateway.md "Conformance"): every
// server scenario run against an upstream directly and through the gateway (Streamable HTTP, on
// 127.0.0.1, the real console in-process) must get the same verdict, whatever the upstream passes
// or fails. Upstreams: server-everything over Streamable HTTP, and the SDK v2 test server
// (testing/mcp-v2-server.ts), which also must pass every 2026-07-28 scenario directly.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cli } from '@/lib/auth/actor';
import { setPolicyRule } from '@/lib/server/policy/policy-rules';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { differences, runSuite, startEverythingHttp, type SuiteRun, type Verdict } from '@/testing/conformance';
import { uniq } from '@/testing/factories';
import { consoleActors, testContext, type ConsoleActors } from '@/testing/gateway-fixtures';
import { startV2HttpServer } from '@/testing/mcp-v2-server';
import { runHttp } from './http';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

// One scenario judges the answering hop's own HTTP listener, not what it relays, so through the
// gateway its verdict is the gateway's own: its listener must refuse foreign Host and Origin values
// whatever the server behind it does (docs/gateway.md "Streamable HTTP: clients that connect by URL").
// server-sse-polling judges the gateway's own SSE streams too, but they resume as the server's do
// (docs/gateway.md "Resuming a stream"), so it is compared like the others.
const DNS = 'dns-rebinding-protection';
const PER_HOP = [DNS];
const SUITE_TIMEOUT = 240_000;

let actors: ConsoleActors;
const closers: (() => Promise<unknown>)[] = [];
beforeAll(async () => {
  actors = await consoleActors();
});
afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
});

/** A gateway in front of `upstream` whose policy lets every tool through without a reviewer. */
async function gatewayFor(upstream: string): Promise<string> {
  const server = uniq('conformance');
  await trustServer(cli, server);
  await setPolicyRule(cli, { server, tool: null, requiredApprovals: 0 });
  // The gateway's own progress interval: a hold for a grant shorter than it sends no progress.
  const t = testContext(actors, server, { progressIntervalMs: undefined });
  const gateway = await runHttp(t.ctx, new URL(upstream), '127.0.0.1', 0);
  closers.push(async () => {
    await gateway.close();
    await t.ctx.reporter.close(2000);
  });
  return gateway.url;
}

/** What the failing checks said, directly and through the gateway, for the scenarios that differ. */
const why = (differ: object, direct: SuiteRun, through: SuiteRun) =>
  JSON.stringify(
    Object.fromEntries(
      Object.keys(differ).map((n) => [n, { direct: direct.problems[n], through: through.problems[n] }]),
    ),
    null,
    1,
  );
const without = (verdicts: Record<string, Verdict>, names: string[]) =>
  Object.fromEntries(Object.entries(verdicts).filter(([n]) => !names.includes(n)));

// The 2025 suite (0.1.16, --suite all): its 32 server scenarios, each passing unless named below.
const SCENARIOS_2025 = [
  'completion-complete',
  'dns-rebinding-protection',
  'elicitation-sep1034-defaults',
  'elicitation-sep1330-enums',
  'json-schema-2020-12',
  'logging-set-level',
  'ping',
  'prompts-get-embedded-resource',
  'prompts-get-simple',
  'prompts-get-with-args',
  'prompts-get-with-image',
  'prompts-list',
  'resources-list',
  'resources-read-binary',
  'resources-read-text',
  'resources-subscribe',
  'resources-templates-read',
  'resources-unsubscribe',
  'server-initialize',
  'server-sse-multiple-streams',
  'server-sse-polling',
  'tools-call-audio',
  'tools-call-elicitation',
  'tools-call-embedded-resource',
  'tools-call-error',
  'tools-call-image',
  'tools-call-mixed-content',
  'tools-call-sampling',
  'tools-call-simple-text',
  'tools-call-with-logging',
  'tools-call-with-progress',
  'tools-list',
];
const table = (names: string[], otherwise: Record<string, Verdict>) =>
  Object.fromEntries(names.map((n) => [n, otherwise[n] ?? 'pass']));

const upstreams = [
  {
    name: 'server-everything over Streamable HTTP',
    start: startEverythingHttp,
    // It lacks the suite's test tools, resources and prompts, and its listener takes any Host.
    direct2025: table(SCENARIOS_2025, {
      'completion-complete': 'fail',
      'dns-rebinding-protection': 'fail',
      'elicitation-sep1034-defaults': 'fail',
      'elicitation-sep1330-enums': 'fail',
      'json-schema-2020-12': 'fail',
      'prompts-get-embedded-resource': 'fail',
      'prompts-get-simple': 'fail',
      'prompts-get-with-args': 'fail',
      'prompts-get-with-image': 'fail',
      'resources-read-binary': 'fail',
      'resources-read-text': 'fail',
      'resources-templates-read': 'fail',
      'server-sse-polling': 'fail',
      'tools-call-audio': 'fail',
      'tools-call-elicitation': 'fail',
      'tools-call-embedded-resource': 'fail',
      'tools-call-image': 'fail',
      'tools-call-mixed-content': 'fail',
      'tools-call-sampling': 'fail',
      'tools-call-with-logging': 'fail',
      'tools-call-with-progress': 'fail',
    }),
  },
  {
    name: 'the SDK v2 test server',
    start: () => startV2HttpServer(),
    // server-sse-polling (pending in 0.1.16) asks for a priming event the SDK sends only to
    // 2025-11-25 clients, while the scenario's own requests claim 2025-03-26.
    direct2025: table(SCENARIOS_2025, { 'server-sse-polling': 'warning' }),
  },
];

describe.each(upstreams)('conformance 2025 (suite 0.1.16), $name', ({ start, direct2025 }) => {
  let direct: SuiteRun;
  let through: SuiteRun;
  beforeAll(async () => {
    const upstream = await start();
    closers.push(() => upstream.close());
    const gateway = await gatewayFor(upstream.url);
    direct = await runSuite('2025', upstream.url);
    through = await runSuite('2025', gateway);
  }, SUITE_TIMEOUT);

  it('directly, every scenario gets the verdict this upstream is known for', () => {
    expect(direct.verdicts).toEqual(direct2025);
  });

  it('through the gateway, every scenario gets the same verdict as directly', () => {
    const differ = differences(without(direct.verdicts, PER_HOP), without(through.verdicts, PER_HOP));
    expect(differ, why(differ, direct, through)).toEqual({});
    expect(Object.keys(through.verdicts)).toHaveLength(SCENARIOS_2025.length);
  });

  it(`${DNS} passes through the gateway: it refuses a foreign Host and Origin, whatever the upstream does`, () => {
    expect({ verdict: through.verdicts[DNS], problems: through.problems[DNS] }).toEqual({
      verdict: 'pass',
      problems: undefined,
    });
  });
});

// tools-call-with-progress through a gateway that holds the call for its grant longer than its
// progress interval: the gateway's own progress (1, 2, …) goes on the client's token first, then the
// server's (0, 50, 100), raised above it (approval-gate.ts progressShift). The suite checks that the
// first three values do not decrease, so the hold is made to send one or two of the gateway's own
// (interval 200 ms, the grant's redemption answered 250 ms late): the case where the server's 0
// came right after them. gateway-held-progress.test.ts checks every value, in both eras.
const PROGRESS = 'tools-call-with-progress';

describe.each([
  ['2025', {}],
  ['2026', { specVersion: '2026-07-28' }],
] as const)(`conformance %s, ${PROGRESS} while the call is held for its grant`, (suite, options) => {
  it('passes through the gateway, as it passes directly (above)', async () => {
    const upstream = await startV2HttpServer();
    closers.push(() => upstream.close());
    const server = uniq('conformance-held');
    await trustServer(cli, server);
    await setPolicyRule(cli, { server, tool: null, requiredApprovals: 0 });
    const t = testContext(actors, server, { progressIntervalMs: 200 });
    const gateway = await runHttp(t.ctx, new URL(upstream.url), '127.0.0.1', 0);
    closers.push(async () => {
      await gateway.close();
      await t.ctx.reporter.close(2000);
    });
    const redemption = t.console.slow(/^\/api\/v1\/grants\/[^/]+\/redeem$/);
    void redemption.reached.then(() => setTimeout(redemption.release, 250));
    const through = await runSuite(suite, gateway.url, { ...options, scenario: PROGRESS });
    expect({ verdicts: through.verdicts, problems: through.problems }).toEqual({
      verdicts: { [PROGRESS]: 'pass' },
      problems: {},
    });
    expect(t.console.calls.filter((c) => /\/redeem$/.test(c.path))).toHaveLength(1);
  }, 60_000);
});

// The 2026 suite (0.2.0-alpha.12, --suite all --spec-version 2026-07-28): its 40 server scenarios.
const SCENARIOS_2026 = [
  'caching',
  'completion-complete',
  'dns-rebinding-protection',
  'http-custom-header-server-validation',
  'http-header-validation',
  'input-required-result-basic-elicitation',
  'input-required-result-basic-list-roots',
  'input-required-result-basic-sampling',
  'input-required-result-capability-check',
  'input-required-result-ignore-extra-params',
  'input-required-result-missing-input-response',
  'input-required-result-multi-round',
  'input-required-result-multiple-input-requests',
  'input-required-result-non-tool-request',
  'input-required-result-request-state',
  'input-required-result-result-type',
  'input-required-result-tampered-state',
  'input-required-result-unsupported-methods',
  'input-required-result-validate-input',
  'json-schema-2020-12',
  'prompts-get-embedded-resource',
  'prompts-get-simple',
  'prompts-get-with-args',
  'prompts-get-with-image',
  'prompts-list',
  'resources-list',
  'resources-read-binary',
  'resources-read-text',
  'resources-templates-read',
  'sep-2164-resource-not-found',
  'server-sse-multiple-streams',
  'server-stateless',
  'tools-call-audio',
  'tools-call-embedded-resource',
  'tools-call-error',
  'tools-call-image',
  'tools-call-mixed-content',
  'tools-call-simple-text',
  'tools-call-with-progress',
  'tools-list',
];

describe('conformance 2026-07-28 (suite 0.2.0-alpha.12), the SDK v2 test server', () => {
  let upstream: string;
  let direct: SuiteRun;
  beforeAll(async () => {
    const server = await startV2HttpServer();
    closers.push(() => server.close());
    upstream = server.url;
    direct = await runSuite('2026', upstream, { specVersion: '2026-07-28' });
  }, SUITE_TIMEOUT);

  it('directly, passes every scenario its requirements name', () => {
    expect({ verdicts: direct.verdicts, problems: direct.problems }).toEqual({
      verdicts: table(SCENARIOS_2026, {}),
      problems: {},
    });
  });

  it(
    'through the gateway, every scenario gets the same verdict as directly',
    async () => {
      const through = await runSuite('2026', await gatewayFor(upstream), { specVersion: '2026-07-28' });
      const differ = differences(without(direct.verdicts, PER_HOP), without(through.verdicts, PER_HOP));
      expect(differ, why(differ, direct, through)).toEqual({});
      expect({ verdict: through.verdicts[DNS], problems: through.problems[DNS] }).toEqual({
        verdict: 'pass',
        problems: undefined,
      });
    },
    SUITE_TIMEOUT,
  );
});
