// A gateway over HTTP (127.0.0.1) in front of the SDK v2 test server with one more tool,
// `wait_for_release`: to a call with a progress token it reports progress 1, waits for `release()`,
// reports progress 2, then answers "released". Its server is trusted, and every tool runs without
// approval. Closed after the test through `open`, released first.
import type { McpServer } from '@modelcontextprotocol/server';
import { cli } from '@/lib/auth/actor';
import type { GatewayContext } from '@/lib/gateway/context';
import { runHttp } from '@/lib/gateway/http';
import { setPolicyRule } from '@/lib/server/policy/policy-rules';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { uniq } from './factories';
import { testContext, type ConsoleActors } from './gateway-fixtures';
import { buildV2Server, startV2HttpServer, type Era } from './mcp-v2-server';

export async function releaseGateway(
  actors: ConsoleActors,
  open: (() => Promise<unknown>)[],
  label: string,
  over: Partial<GatewayContext> = {},
) {
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  const build = (era: Era): McpServer => {
    const server = buildV2Server(era);
    server.registerTool('wait_for_release', { description: 'Progress, a wait, progress, an answer' }, async (ctx) => {
      const progressToken = ctx.mcpReq._meta?.progressToken;
      const progress = async (n: number) => {
        if (progressToken !== undefined)
          await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress: n } });
      };
      await progress(1);
      await released;
      await progress(2);
      return { content: [{ type: 'text', text: 'released' }] };
    });
    return server;
  };
  const upstream = await startV2HttpServer(0, '127.0.0.1', build);
  const name = uniq(label);
  await trustServer(cli, name);
  await setPolicyRule(cli, { server: name, tool: null, requiredApprovals: 0 });
  const t = testContext(actors, name, over);
  const gateway = await runHttp(t.ctx, new URL(upstream.url), '127.0.0.1', 0);
  open.push(async () => {
    release();
    await gateway.close();
    await upstream.close();
    await t.ctx.reporter.close(2000);
  });
  return { url: gateway.url, upstream, release };
}
