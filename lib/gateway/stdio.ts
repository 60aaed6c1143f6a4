// stdio mode: the host starts the gateway instead of the server; the gateway starts the server's
// command as its child. stdout carries only MCP messages; logs go to stderr.
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { childEnvironment } from '../config';
import type { GatewayContext } from './context';
import { Relay } from './relay';

export function stdioUpstream(command: string[]): StdioClientTransport {
  const [cmd, ...args] = command;
  // The gateway's own environment, without Countersign's key: the server never needs it.
  const env = childEnvironment({}, { without: ['COUNTERSIGN_API_KEY'] });
  return new StdioClientTransport({ command: cmd, args, env, stderr: 'inherit' });
}

/** Relays between `down` (default: this process's stdin/stdout) and the child. Resolves when either side closed. */
export async function runStdio(
  ctx: GatewayContext,
  command: string[],
  down: Transport = new StdioServerTransport(),
): Promise<Relay> {
  const relay = new Relay(down, stdioUpstream(command), ctx);
  await relay.start();
  return relay;
}
