// stdio mode: the host starts the gateway instead of the server; the gateway starts the server's
// command as its child. stdout carries only MCP messages; logs go to stderr.
//
// Shutdown (MCP's stdio transport, "Shutdown"): the host closes the gateway's stdin, waits, then
// sends SIGTERM, then SIGKILL. The gateway does the same to its child at once, on a shorter clock,
// so that the child is gone before the host's SIGKILL could leave it behind. Started through
// `npm run`, the gateway runs under npm's shell, which npm's signals end without passing them on;
// the end of stdin, which the gateway shares with npm, is what reaches it there.
import type { Readable, Writable } from 'node:stream';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { childEnvironment } from '../config';
import type { GatewayContext } from './context';
import { Relay } from './relay';

/** How long the child has to exit once its stdin is closed, and again after SIGTERM. */
export const CHILD_GRACE_MS = 1000;

/**
 * The host's side: this process's stdin and stdout. The end of stdin (the host's first step of
 * shutdown) or a broken stdout closes it, and with it the relay and the child.
 */
export class HostStdio extends StdioServerTransport {
  private closed = false;
  private readonly ended = () => {
    if (!this.closed) this.log?.('stdin closed: stopping');
    void this.close();
  };
  private readonly broken = () => void this.close();

  constructor(
    private readonly log?: (line: string) => void,
    private readonly input: Readable = process.stdin,
    private readonly output: Writable = process.stdout,
  ) {
    super(input, output);
  }

  override async start(): Promise<void> {
    await super.start();
    this.input.once('end', this.ended);
    this.input.once('close', this.ended);
    this.output.on('error', this.broken);
  }

  override async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off('end', this.ended);
    this.input.off('close', this.ended);
    // The error listener stays: a write still under way may fail after this, and must not throw.
    await super.close();
  }
}

/**
 * The server's side: the SDK's transport over the child's stdio, closed as MCP's stdio shutdown
 * says (stdin closed, then SIGTERM, then SIGKILL), each step after CHILD_GRACE_MS.
 */
export class ChildServer extends StdioClientTransport {
  constructor(command: string[]) {
    const [cmd, ...args] = command;
    // The gateway's own environment, without Countersign's key: the server never needs it.
    const env = childEnvironment({}, { without: ['COUNTERSIGN_API_KEY'] });
    super({ command: cmd, args, env, stderr: 'inherit' });
  }

  override async close(): Promise<void> {
    const pid = this.pid;
    // Closes the child's stdin; the SDK's own later SIGTERM and SIGKILL find the child gone already.
    void super.close();
    if (pid === null) return;
    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      if (await exited(pid, CHILD_GRACE_MS)) return;
      try {
        process.kill(pid, signal);
      } catch {
        return; // gone in the meantime
      }
    }
    await exited(pid, CHILD_GRACE_MS);
  }
}

/**
 * Whether the process `pid` is gone within `ms`, asked of the system (the SDK's transport keeps its
 * child to itself). Node.js reaps an exited child at once, so a gone child is seen as gone.
 */
async function exited(pid: number, ms: number): Promise<boolean> {
  const deadline = performance.now() + ms;
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return true;
    }
    if (performance.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Relays between `down` (default: this process's stdin/stdout) and the child. Resolves once both
 * are started; `onclose` is called once either side closed and the child is gone.
 */
export async function runStdio(
  ctx: GatewayContext,
  command: string[],
  down: Transport = new HostStdio(ctx.log),
  onclose?: () => void,
): Promise<Relay> {
  const relay = new Relay(down, new ChildServer(command), ctx);
  relay.onclose = onclose;
  await relay.start();
  return relay;
}
