// Progress of a call held for its grant (docs/gateway.md "Approvals in the protocol"), both eras:
// while the gateway waits for the grant it sends its own progress on the client's token (1, 2,
// …, k); once the call is forwarded, the server's progress on the same token (0, 50, 100 of 100)
// is sent on raised to k + 1 + p, its total with it, so the client's progress keeps increasing.
// A 2025 client (SDK v1) and a 2026-07-28 client (SDK v2, pinned), both served by SDK v2;
// upstream, the SDK v2 test server of both eras; the real console in-process granting the write
// at once (0 approvals), its redemption answered late so that the hold outlasts a few intervals.
// A 2026-07-28 server that answers the call with its own `input_required` round: the retry's
// progress is raised as the first request's was (the round's requestState carries the raise).
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { cli } from '@/lib/auth/actor';
import { setPolicyRule } from '@/lib/server/policy/policy-rules';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { uniq } from '@/testing/factories';
import { closedAfterEach, consoleActors, recordsOf, testContext, type ConsoleActors } from '@/testing/gateway-fixtures';
import { startV2HttpServer } from '@/testing/mcp-v2-server';
import { acceptedContent, inputRequired, McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { runHttp } from './http';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

let actors: ConsoleActors;
beforeAll(async () => {
  actors = await consoleActors();
});
const open = closedAfterEach();

interface Progress {
  progress: number;
  total?: number;
  message?: string;
}
type CallWithProgress = (url: string, ref: string, onprogress: (p: Progress) => void) => Promise<unknown>;

const params = (ref: string) => ({
  name: 'test_tool_with_progress',
  arguments: {},
  _meta: { 'countersign/requestRef': ref },
});

const eras: [string, CallWithProgress][] = [
  [
    '2025 (a session on SDK v2)',
    async (url, ref, onprogress) => {
      const client = new Client({ name: 'progress-2025', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      open.push(() => client.close());
      return client.callTool(params(ref), undefined, { onprogress });
    },
  ],
  [
    '2026-07-28 (SDK v2)',
    async (url, ref, onprogress) => {
      const client = new ModernClient(
        { name: 'progress-2026', version: '1.0.0' },
        { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: {} },
      );
      await client.connect(new ModernTransport(new URL(url)));
      open.push(() => client.close());
      return client.callTool(params(ref), { onprogress });
    },
  ],
];

const WAITING = 'Waiting for approval in Countersign';

describe.each(eras)('a %s client whose call is held for its grant, with a progress token', (_era, callWithProgress) => {
  it("gets the gateway's progress, then the server's raised above it: increasing throughout", async () => {
    const upstream = await startV2HttpServer();
    open.push(() => upstream.close());
    const server = uniq('held-progress');
    await trustServer(cli, server);
    await setPolicyRule(cli, { server, tool: null, requiredApprovals: 0 });
    const t = testContext(actors, server, { progressIntervalMs: 30 });
    const gateway = await runHttp(t.ctx, new URL(upstream.url), '127.0.0.1', 0);
    open.push(async () => {
      await gateway.close();
      await t.ctx.reporter.close(2000);
    });
    const redemption = t.console.slow(/^\/api\/v1\/grants\/[^/]+\/redeem$/);
    void redemption.reached.then(() => setTimeout(redemption.release, 200));

    const ref = uniq('req');
    const seen: Progress[] = [];
    const result = (await callWithProgress(gateway.url, ref, (p) => seen.push(p))) as { content?: unknown };
    expect(result.content).toEqual([{ type: 'text', text: 'Tool with progress executed successfully' }]);

    const own = seen.filter((p) => p.message === WAITING);
    const k = own.length;
    expect(k).toBeGreaterThan(0); // the hold outlasted the interval: the case in question
    expect(own.map((p) => p.progress)).toEqual(Array.from({ length: k }, (_, i) => i + 1));
    expect(seen.slice(k).map((p) => [p.progress, p.total])).toEqual([
      [k + 1, k + 101],
      [k + 51, k + 101],
      [k + 101, k + 101],
    ]);
    expect((await recordsOf(ref, t.ctx.reporter)).map((r) => [r.delivery, r.category])).toEqual([['completed', 'ok']]);
  }, 30_000);
});

describe("a 2026-07-28 server's own round, its call held for its grant first", () => {
  it("the server's progress in the retry is raised as in the first request: never stepping back", async () => {
    // Progress 1 of 2 in the first request, which ends with a round; 2 of 2 in the retry that answers it.
    const upstream = await startV2HttpServer(0, '127.0.0.1', () => {
      const server = new McpServer({ name: 'two-legs', version: '1.0.0' });
      server.registerTool('confirm_then_run', { description: 'Asks to confirm, then runs' }, async (ctx) => {
        const token = ctx.mcpReq._meta?.progressToken;
        const answer = acceptedContent(ctx.mcpReq.inputResponses, 'confirm', z.object({ ok: z.boolean() }));
        const step = answer ? 2 : 1;
        if (token !== undefined)
          await ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: { progressToken: token, progress: step, total: 2, message: `leg ${step}` },
          });
        if (answer) return { content: [{ type: 'text', text: 'ran' }] };
        return inputRequired({
          inputRequests: {
            confirm: inputRequired.elicit({
              message: 'Run it?',
              requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
            }),
          },
        });
      });
      return server;
    });
    open.push(() => upstream.close());
    const server = uniq('held-progress-rounds');
    await trustServer(cli, server);
    await setPolicyRule(cli, { server, tool: null, requiredApprovals: 0 });
    const t = testContext(actors, server, { progressIntervalMs: 30 });
    const gateway = await runHttp(t.ctx, new URL(upstream.url), '127.0.0.1', 0);
    open.push(async () => {
      await gateway.close();
      await t.ctx.reporter.close(2000);
    });
    const redemption = t.console.slow(/^\/api\/v1\/grants\/[^/]+\/redeem$/);
    void redemption.reached.then(() => setTimeout(redemption.release, 200));

    const client = new ModernClient(
      { name: 'progress-rounds', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: { elicitation: { form: {} } } },
    );
    client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { ok: true } }));
    await client.connect(new ModernTransport(new URL(gateway.url)));
    open.push(() => client.close());
    const seen: Progress[] = [];
    const result = await client.callTool(
      { name: 'confirm_then_run', arguments: {} },
      {
        // The client's SDK reports its own rounds on the same callback: only what came on the wire is kept.
        onprogress: (p) => {
          if (!p.message?.startsWith('Fulfilling input required')) seen.push(p);
        },
      },
    );
    expect(result.content).toEqual([{ type: 'text', text: 'ran' }]);
    const k = seen.filter((p) => p.message === WAITING).length;
    expect(k).toBeGreaterThan(0); // the redemption outlasted the interval: the case in question
    expect(seen.slice(k)).toEqual([
      { progress: k + 2, total: k + 3, message: 'leg 1' },
      { progress: k + 3, total: k + 3, message: 'leg 2' },
    ]);
  }, 30_000);
});
