// The gateway in stdio mode for tests (never imported by the app): in process, its host's side in
// memory, its child a real process (a test server of testing/ run by tsx, or any command), for a
// trusted server of the real console whose policy rule is given. Closed after the test through
// the test's `open` list (gateway-fixtures.ts closedAfterEach).
import path from 'node:path';
import { InMemoryTransport } from '@modelcontextprotocol/client';
import type { Transport } from '@modelcontextprotocol/server';
import { cli } from '@/lib/auth/actor';
import type { GatewayContext } from '@/lib/gateway/context';
import { runStdio } from '@/lib/gateway/stdio';
import { setPolicyRule } from '@/lib/server/policy/policy-rules';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { uniq } from './factories';
import { testContext, type ConsoleActors } from './gateway-fixtures';

/** The command that runs `script` (a file of testing/) with tsx, with `args`. */
export function tsxCommand(script: string, ...args: string[]): string[] {
  return [process.execPath, '--import', 'tsx', path.join(process.cwd(), 'testing', script), ...args];
}

export interface StdioGatewayOptions {
  /** The policy rule of the whole server: approvals a call needs, or blocked (default: 0, run at once). */
  approvals?: number | 'blocked';
  over?: Partial<GatewayContext>;
}

/** The gateway in front of `command`; `hostSide` is the host's end of its stdio, not started. */
export async function stdioGateway(
  actors: ConsoleActors,
  command: string[],
  open: (() => Promise<unknown>)[],
  { approvals = 0, over = {} }: StdioGatewayOptions = {},
) {
  const server = uniq('stdio-gateway');
  await trustServer(cli, server);
  await setPolicyRule(cli, { server, tool: null, requiredApprovals: approvals });
  const t = testContext(actors, server, over);
  const [hostSide, gatewaySide] = InMemoryTransport.createLinkedPair();
  const g = await runStdio(t.ctx, command, gatewaySide as Transport);
  open.push(async () => {
    await g.close();
    await t.ctx.reporter.close(2000);
  });
  return { ...t, server, g, hostSide };
}
