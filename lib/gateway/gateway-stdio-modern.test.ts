// stdio in both eras (issue 42): SDK v2's client in legacy, auto and pinned 2026-07-28 modes
// through the gateway in stdio mode, in front of (a) testing/mcp-v2-server.ts over stdio (SDK v2,
// both eras, or with --modern-only 2026-07-28 only) and (b) @modelcontextprotocol/server-everything
// (2025 only). The real console in-process decides and records. Every client gets SDK v2's server
// with the gateway's answers in its era (2026-07-28: with `resultType`, without which SDK v2's
// client refuses the answer with INVALID_RESULT, the symptom). And as a process: after the
// client closes, the gateway and its server are gone within seconds. Bad input: an unknown
// protocol version; a child that floods list changes (testing/mcp-list-flood.ts), coalesced
// towards hosts of both eras.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { Client, type InMemoryTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { cli } from '@/lib/auth/actor';
import { childEnvironment } from '@/lib/config';
import { setPolicyRule } from '@/lib/server/policy/policy-rules';
import { stdioGateway, tsxCommand } from '@/testing/stdio-gateway';
import {
  approvalsOf,
  closedAfterEach,
  consoleActors,
  decide,
  recordsOf,
  type ConsoleActors,
} from '@/testing/gateway-fixtures';
import type { GatewayContext } from './context';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

const root = process.cwd();
const EVERYTHING = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');
const v2Command = tsxCommand('mcp-v2-server.ts', 'stdio');
const modernOnlyCommand = [...v2Command, '--modern-only'];
const everythingCommand = [process.execPath, EVERYTHING, 'stdio'];

let actors: ConsoleActors;
beforeAll(async () => {
  actors = await consoleActors();
});
const open = closedAfterEach();

type Mode = 'legacy' | 'auto' | { pin: '2026-07-28' };

/** The gateway in-process in front of `command`, for a server whose policy is `approvals` (default: none). */
const gateway = (command: string[], approvals: number | 'blocked' = 0, over: Partial<GatewayContext> = {}) =>
  stdioGateway(actors, command, open, { approvals, over });

async function connect(
  hostSide: InMemoryTransport,
  mode: Mode,
  options: { url?: boolean; autoFulfill?: boolean } = {},
): Promise<Client> {
  const client = new Client(
    { name: 'stdio-modern-test', version: '1.0.0' },
    {
      versionNegotiation: { mode },
      capabilities: { elicitation: { form: {}, ...(options.url ? { url: {} } : {}) } },
      ...(options.autoFulfill === false ? { inputRequired: { autoFulfill: false } } : {}),
    },
  );
  client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name: 'Ada' } }));
  await client.connect(hostSide);
  open.push(() => client.close());
  return client;
}

const modes = [
  { mode: 'legacy' as const, era: 'legacy' },
  { mode: 'auto' as const, era: 'modern' },
  { mode: { pin: '2026-07-28' as const }, era: 'modern' },
];

describe.each(modes)('a client in $mode mode, through the gateway over stdio', ({ mode, era }) => {
  it(`in front of the SDK v2 server (both eras): speaks the ${era} era; tools/list, a call and a call with the server's own round work, each recorded once`, async () => {
    const s = await gateway(v2Command);
    const c = await connect(s.hostSide, mode);
    expect(c.getProtocolEra()).toBe(era);
    expect(c.getServerVersion()?.name).toBe('countersign-v2-test-server');
    const { tools } = await c.listTools();
    expect(tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(['test_simple_text', 'test_input_required_result_elicitation']),
    );
    const ref = `ref-${randomUUID()}`;
    const simple = await c.callTool({
      name: 'test_simple_text',
      arguments: {},
      _meta: { 'countersign/requestRef': ref },
    });
    expect(simple.content).toEqual([{ type: 'text', text: 'This is a simple text response for testing.' }]);
    expect(simple._meta?.['countersign/requestRef']).toBe(ref);
    expect(simple._meta?.['countersign/eventId']).toMatch(/^evt_/);
    // 2025: the server asks with elicitation/create mid-call (relayed); 2026-07-28: an
    // input_required round, whose retry must reach the server as the client sent it.
    const asked = await c.callTool({
      name: 'test_input_required_result_elicitation',
      arguments: {},
      _meta: { 'countersign/requestRef': ref },
    });
    expect(asked.content).toEqual([{ type: 'text', text: 'Hello, Ada!' }]);
    const records = await recordsOf(ref, s.ctx.reporter);
    expect(records.map((r) => [r.toolName, r.delivery]).sort()).toEqual([
      ['test_input_required_result_elicitation', 'completed'],
      ['test_simple_text', 'completed'],
    ]);
  }, 60_000);

  it(`in front of server-everything (2025 only): speaks the ${era} era; tools/list and echo work, recorded once`, async () => {
    const s = await gateway(everythingCommand);
    const c = await connect(s.hostSide, mode);
    expect(c.getProtocolEra()).toBe(era);
    const { tools } = await c.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['echo', 'get-sum']));
    const ref = `ref-${randomUUID()}`;
    const echo = await c.callTool({
      name: 'echo',
      arguments: { message: 'through the gateway' },
      _meta: { 'countersign/requestRef': ref },
    });
    expect(echo.content).toEqual([{ type: 'text', text: 'Echo: through the gateway' }]);
    expect(echo._meta?.['countersign/requestRef']).toBe(ref);
    const records = await recordsOf(ref, s.ctx.reporter);
    expect(records.map((r) => [r.toolName, r.delivery])).toEqual([['echo', 'completed']]);
  }, 60_000);

  it(`a blocked tool is left out of tools/list and refused denied_by_policy in the ${era} era, never sent`, async () => {
    const s = await gateway(everythingCommand);
    await setPolicyRule(cli, { server: s.server, tool: 'echo', requiredApprovals: 'blocked' });
    const c = await connect(s.hostSide, mode);
    const { tools } = await c.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toContain('get-sum');
    expect(names).not.toContain('echo');
    const ref = `ref-${randomUUID()}`;
    const refused = await c.callTool({
      name: 'echo',
      arguments: { message: 'x' },
      _meta: { 'countersign/requestRef': ref },
    });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toBeUndefined();
    expect((refused._meta as Record<string, unknown>)['countersign/error']).toMatchObject({
      category: 'denied_by_policy',
      retry: 'no',
    });
    expect(await recordsOf(ref, s.ctx.reporter)).toMatchObject([
      { toolName: 'echo', delivery: 'never_sent', category: 'denied_by_policy' },
    ]);
  }, 60_000);
});

describe('a 2025 client over stdio in front of a server that speaks only 2026-07-28', () => {
  it("speaks the legacy era with the server's identity; a call and a call with the server's own round work, each recorded once", async () => {
    const s = await gateway(modernOnlyCommand);
    const c = await connect(s.hostSide, 'legacy');
    expect(c.getProtocolEra()).toBe('legacy');
    expect(c.getServerVersion()?.name).toBe('countersign-v2-test-server');
    const ref = `ref-${randomUUID()}`;
    const simple = await c.callTool({
      name: 'test_simple_text',
      arguments: {},
      _meta: { 'countersign/requestRef': ref },
    });
    expect(simple.content).toEqual([{ type: 'text', text: 'This is a simple text response for testing.' }]);
    // The server's round (input_required) reaches the 2025 client as elicitation/create mid-call.
    const asked = await c.callTool({
      name: 'test_input_required_result_elicitation',
      arguments: {},
      _meta: { 'countersign/requestRef': ref },
    });
    expect(asked.content).toEqual([{ type: 'text', text: 'Hello, Ada!' }]);
    const records = await recordsOf(ref, s.ctx.reporter);
    expect(records.map((r) => [r.toolName, r.delivery]).sort()).toEqual([
      ['test_input_required_result_elicitation', 'completed'],
      ['test_simple_text', 'completed'],
    ]);
  }, 60_000);
});

describe('a 2025 client whose call needs approval, over stdio', () => {
  it('declaring elicitation.url: asked with a URL elicitation to the request page; once approved the call runs once', async () => {
    const s = await gateway(everythingCommand, 1);
    const client = new Client(
      { name: 'stdio-2025-url', version: '1.0.0' },
      { versionNegotiation: { mode: 'legacy' }, capabilities: { elicitation: { form: {}, url: {} } } },
    );
    const ref = `ref-${randomUUID()}`;
    const asked: { mode?: unknown; url?: unknown }[] = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params as { mode?: unknown; url?: unknown });
      // The person opens the link and a reviewer approves; then the client says it is done.
      await decide(actors.reviewer, ref, 'approve');
      return { action: 'accept' };
    });
    await client.connect(s.hostSide);
    open.push(() => client.close());
    const r = await client.callTool({
      name: 'echo',
      arguments: { message: 'approved by link' },
      _meta: { 'countersign/requestRef': ref },
    });
    expect(r.content).toEqual([{ type: 'text', text: 'Echo: approved by link' }]);
    expect(asked).toHaveLength(1);
    expect(asked[0].mode).toBe('url');
    expect(asked[0].url).toMatch(/^http:\/\/countersign\.test\/approvals\/[^/]+$/);
    const approvals = await approvalsOf(ref);
    expect(approvals.map((a) => a.status)).toEqual(['redeemed']);
    const records = await recordsOf(ref, s.ctx.reporter);
    expect(records.map((r) => [r.toolName, r.delivery, r.grantId])).toEqual([
      ['echo', 'completed', approvals[0].grant?.id],
    ]);
  }, 60_000);
});

describe('a 2026-07-28 client whose call needs approval, over stdio', () => {
  it('gets input_required with a URL elicitation to the request page; the retry runs the call once approved', async () => {
    const s = await gateway(everythingCommand, 1);
    const c = await connect(s.hostSide, { pin: '2026-07-28' }, { url: true, autoFulfill: false });
    const ref = `ref-${randomUUID()}`;
    const params = { name: 'echo', arguments: { message: 'approved' }, _meta: { 'countersign/requestRef': ref } };
    const round = (await c.request({ method: 'tools/call', params }, { allowInputRequired: true })) as unknown as {
      resultType: string;
      inputRequests: Record<string, { method: string; params: { mode: string; url: string } }>;
      requestState: string;
    };
    expect(round.resultType).toBe('input_required');
    expect(Object.keys(round.inputRequests)).toEqual(['countersign_approval']);
    expect(round.inputRequests.countersign_approval.params.mode).toBe('url');
    expect(round.inputRequests.countersign_approval.params.url).toMatch(
      /^http:\/\/countersign\.test\/approvals\/[^/]+$/,
    );
    expect(await recordsOf(ref, s.ctx.reporter)).toEqual([]);
    await decide(actors.reviewer, ref, 'approve');
    const done = (await c.request(
      {
        method: 'tools/call',
        params: {
          ...params,
          inputResponses: { countersign_approval: { action: 'accept' } },
          requestState: round.requestState,
        },
      } as never,
      { allowInputRequired: true },
    )) as Record<string, unknown>;
    expect(done.content).toEqual([{ type: 'text', text: 'Echo: approved' }]);
    const approvals = await approvalsOf(ref);
    expect(approvals.map((a) => a.status)).toEqual(['redeemed']);
    const records = await recordsOf(ref, s.ctx.reporter);
    expect(records.map((r) => [r.toolName, r.delivery, r.grantId])).toEqual([
      ['echo', 'completed', approvals[0].grant?.id],
    ]);
  }, 60_000);

  it('a client without URL elicitation is held, and gets the tool error approval_required when the wait runs out', async () => {
    const s = await gateway(everythingCommand, 1, { approvalWaitMs: 400 });
    const c = await connect(s.hostSide, { pin: '2026-07-28' });
    const ref = `ref-${randomUUID()}`;
    const r = await c.callTool({ name: 'echo', arguments: { message: 'x' }, _meta: { 'countersign/requestRef': ref } });
    expect(r.isError).toBe(true);
    expect((r._meta as Record<string, unknown>)['countersign/error']).toMatchObject({
      category: 'approval_required',
      retry: 'after_approval',
      approvalUrl: expect.stringMatching(/^http:\/\/countersign\.test\/approvals\//),
    });
    expect(await recordsOf(ref, s.ctx.reporter)).toMatchObject([{ toolName: 'echo', delivery: 'never_sent' }]);
  }, 60_000);
});

describe.each([
  { mode: 'legacy' as const, host: 'a 2025 host' },
  { mode: { pin: '2026-07-28' as const }, host: 'a 2026-07-28 host following subscriptions/listen' },
])('a child that floods list changes, $host', ({ mode }) => {
  it('20,000 changes: the host is told a few (coalesced, the last one kept), and a call beside them completes', async () => {
    const s = await gateway(tsxCommand('mcp-list-flood.ts'));
    const c = await connect(s.hostSide, mode);
    let told = 0;
    c.setNotificationHandler('notifications/tools/list_changed', () => void told++);
    if (mode !== 'legacy') await c.listen({ toolsListChanged: true });
    const flood = c.callTool({ name: 'flood_changes', arguments: { count: 20_000 } });
    const echoed = await c.callTool({ name: 'echo', arguments: { text: 'beside' } });
    expect(echoed.content).toEqual([{ type: 'text', text: 'beside' }]);
    expect((await flood).content).toEqual([{ type: 'text', text: 'sent 20000' }]);
    await new Promise((r) => setTimeout(r, 1000));
    // The first change at once, then at most one per window: one more at least, for the changes dropped.
    expect(told).toBeGreaterThanOrEqual(2);
    expect(told).toBeLessThan(100);
  }, 60_000);
});

describe('bad input over stdio', () => {
  it('a first request claiming an unknown protocol version gets the error naming the supported versions, and the connection goes on', async () => {
    const s = await gateway(everythingCommand);
    const answers: Record<string, unknown>[] = [];
    s.hostSide.onmessage = (m) => void answers.push(m as Record<string, unknown>);
    await s.hostSide.start();
    await s.hostSide.send({
      jsonrpc: '2.0',
      id: 'discover-1',
      method: 'server/discover',
      params: {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2099-01-01',
          'io.modelcontextprotocol/clientCapabilities': {},
          'io.modelcontextprotocol/clientInfo': { name: 'bad', version: '1' },
        },
      },
    });
    await vi.waitFor(() => expect(answers).toHaveLength(1), { timeout: 10_000 });
    expect(answers[0]).toMatchObject({
      jsonrpc: '2.0',
      id: 'discover-1',
      error: { code: -32022, data: { supported: ['2026-07-28'], requested: '2099-01-01' } },
    });
    // Still served: the same connection then opens with a version the gateway speaks.
    const c = await connect(s.hostSide, { pin: '2026-07-28' });
    expect(c.getProtocolEra()).toBe('modern');
    expect((await c.listTools()).tools.map((t) => t.name)).toContain('echo');
  }, 60_000);
});

// ── as a process ──────────────────────────────────────────────────────────────────────────────

/** The process ids under `pid`, depth first. */
function descendants(pid: number): number[] {
  let children: number[];
  try {
    children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .map((l) => Number(l.trim()))
      .filter((n) => n > 0);
  } catch {
    children = []; // ps exits 1 when there are none
  }
  return children.flatMap((c) => [c, ...descendants(c)]);
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function survivors(pids: number[], ms: number): Promise<number[]> {
  const deadline = performance.now() + ms;
  for (;;) {
    const left = pids.filter(alive);
    if (left.length === 0 || performance.now() > deadline) return left;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('the gateway as a process (npm run -s gateway), a pinned 2026-07-28 client', () => {
  it.each([
    ['the SDK v2 server', v2Command, 'test_simple_text'],
    ['server-everything', everythingCommand, 'echo'],
  ])(
    'in front of %s: lists its tools; after the client closes, the gateway and its server are gone within seconds',
    async (_name, command, tool) => {
      // No console: a listing needs none, and the processes' end is what is watched.
      const env = childEnvironment({ COUNTERSIGN_URL: 'http://127.0.0.1:9', COUNTERSIGN_API_KEY: 'cs_live_stdio' });
      env.PATH = `${path.dirname(process.execPath)}${path.delimiter}${env.PATH ?? ''}`;
      const transport = new StdioClientTransport({
        command: 'npm',
        args: [
          'run',
          '-s',
          'gateway',
          '--',
          '--server',
          's',
          '--principal',
          'p',
          '--organization',
          'o',
          '--',
          ...command,
        ],
        env,
        cwd: root,
        stderr: 'pipe',
      });
      let stderr = '';
      transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const client = new Client(
        { name: 'stdio-process-test', version: '1.0.0' },
        { versionNegotiation: { mode: { pin: '2026-07-28' } } },
      );
      open.push(() => client.close());
      // The SDK's own transport: it probes on a sibling process (a second gateway), then starts this one.
      await client.connect(transport);
      expect(client.getProtocolEra()).toBe('modern');
      expect((await client.listTools()).tools.map((t) => t.name)).toContain(tool);
      const tree = [transport.pid!, ...descendants(transport.pid!)];
      open.push(async () => {
        for (const p of tree) if (alive(p)) process.kill(p, 'SIGKILL');
      });
      expect(tree.length).toBeGreaterThanOrEqual(3); // npm (its shell), the gateway, the server
      const closing = client.close();
      expect(await survivors(tree, 4000)).toEqual([]);
      await closing;
      expect(stderr).toContain('countersign-gateway: stdin closed: stopping');
      expect(stderr).toContain('server speaks the');
    },
    60_000,
  );
});
