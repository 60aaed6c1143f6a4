// stdio mode: the host starts the gateway instead of the server; the gateway starts the server's
// command as its child. stdout carries only MCP messages; logs go to stderr.
//
// Shutdown (MCP's stdio transport, "Shutdown"): the host closes the gateway's stdin, waits, then
// sends SIGTERM, then SIGKILL. The gateway does the same to its child at once, on a shorter clock,
// so that the child is gone before the host's SIGKILL could leave it behind. Started through
// `npm run`, the gateway runs under npm's shell, which npm's signals end without passing them on;
// the end of stdin, which the gateway shares with npm, is what reaches it there.
//
// Both eras of MCP (docs/gateway.md "Both eras"): stdio has one connection, and the host's first
// message says which era it speaks. Every host gets SDK v2's serveStdio with the factory the HTTP
// side uses (stdio-modern.ts), which pins the connection to the era that message opens (a 2025
// `initialize` or a claim-less message: the factory's 2025 instance; the 2026-07-28 envelope
// claim: its 2026-07-28 instance). The child is spoken to through SDK v2's client in whatever
// era it offers, so either host is served in front of either server.
// One child process, started before the first message (a command that cannot be started fails
// at once), and one transport to it, SDK v2's, closed by the ladder below. A 2025 child that
// exits on the era probe (server/discover) is started once more, and spoken to in 2025
// (stdio-modern.ts); never a third time.
import type { Readable, Writable } from 'node:stream';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import type { Transport } from '@modelcontextprotocol/server';
import { childEnvironment } from '../config';
import type { GatewayContext } from './context';
import { serveModern, type ModernStdio } from './stdio-modern';

/** How long the child has to exit once its stdin is closed, and again after SIGTERM. */
export const CHILD_GRACE_MS = 1000;

/**
 * The host's side: this process's stdin and stdout (SDK v2's transport). The end of stdin (the
 * host's first step of shutdown) or a broken stdout closes it, and with it the gateway and the
 * child.
 */
export class HostStdio extends StdioServerTransport {
  private closed = false;
  private readonly ended = () => {
    if (!this.closed) this.log?.('stdin closed: stopping');
    void this.close();
  };

  constructor(
    private readonly log?: (line: string) => void,
    private readonly input: Readable = process.stdin,
    output: Writable = process.stdout,
  ) {
    super(input, output);
  }

  override async start(): Promise<void> {
    // Before the SDK's own listeners, which close the transport on the same events: said first.
    this.input.once('end', this.ended);
    this.input.once('close', this.ended);
    await super.start();
  }

  override async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off('end', this.ended);
    this.input.off('close', this.ended);
    // SDK v2's transport keeps a listener on stdout: a write still under way may fail, and must not throw.
    await super.close();
  }
}

/**
 * The server's side: SDK v2's transport over the child's stdio, closed as MCP's stdio shutdown
 * says (stdin closed, then SIGTERM, then SIGKILL), each step after CHILD_GRACE_MS. Started once
 * (before the host's first message); a later `start()` (SDK v2's client's) finds it
 * started. Being a subclass, SDK v2's client probes the era on this very process rather than on a
 * sibling it would spawn from the same command (no second server process, with its side effects).
 */
export class ChildServer extends StdioClientTransport {
  private started?: Promise<void>;
  private closing?: Promise<void>;

  constructor(private readonly command: string[]) {
    const [cmd, ...args] = command;
    // The gateway's own environment, without Countersign's key: the server never needs it.
    const env = childEnvironment({}, { without: ['COUNTERSIGN_API_KEY'] });
    super({ command: cmd, args, env, stderr: 'inherit' });
  }

  override start(): Promise<void> {
    // Closed before it started (the gateway stopping while a new one was on its way): never spawned.
    if (this.closing && !this.started) return Promise.reject(new Error('the server was closed before it started'));
    return (this.started ??= super.start());
  }

  /** The same command, as a process of its own, not started. */
  again(): ChildServer {
    return new ChildServer(this.command);
  }

  /** Once: a second close (the SDK client's, then the gateway's) waits for the same ladder. */
  override close(): Promise<void> {
    return (this.closing ??= this.ladder());
  }

  private async ladder(): Promise<void> {
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

/** The gateway in stdio mode: the host, the child, and SDK v2's server between them. */
export class StdioGateway {
  private served?: ModernStdio;
  onclose?: () => void;
  private closing?: Promise<void>;
  private finished = false;
  private child: ChildServer;
  /** Whether the child was started again (once at most: a child that exited on the probe). */
  private restarted = false;

  constructor(
    readonly ctx: GatewayContext,
    readonly down: Transport,
    /** The child's transport. */
    up: ChildServer,
  ) {
    this.child = up;
  }

  /** The child's transport (the second one, once the first exited on the probe). */
  get up(): ChildServer {
    return this.child;
  }

  async start(): Promise<void> {
    this.watch(this.child);
    // A command that cannot be started fails here, before the host is listened to.
    await this.child.start();
    this.served = serveModern(
      this.ctx,
      this.down,
      this.child,
      () => void this.close(),
      () => this.again(),
    );
    await this.served.started;
  }

  private watch(child: ChildServer): void {
    child.onclose = () => void this.close();
    child.onerror = (e) => this.ctx.log(`server transport: ${e.message}`);
  }

  /** The child started anew, once, in place of one that exited (it is reaped first). */
  private async again(): Promise<ChildServer> {
    if (this.restarted || this.closing) throw new Error('the server is not started again');
    this.restarted = true;
    const gone = this.child;
    // Its end is known (the reason for this start): it no longer stops the gateway.
    gone.onclose = undefined;
    const child = gone.again();
    this.child = child;
    this.watch(child);
    await gone.close();
    await child.start();
    return child;
  }

  /** Closes both sides (the child by its ladder); `onclose` once the child is gone. */
  close(): Promise<void> {
    return (this.closing ??= this.shut());
  }

  private async shut(): Promise<void> {
    await this.served?.close();
    await Promise.allSettled([this.child.close(), this.down.close()]);
    this.finish();
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.onclose?.();
  }
}

/**
 * Serves the host `down` (default: this process's stdin/stdout) in front of the child. Resolves
 * once both are started; `onclose` is called once either side closed and the child is gone.
 */
export async function runStdio(
  ctx: GatewayContext,
  command: string[],
  down: Transport = new HostStdio(ctx.log),
  onclose?: () => void,
): Promise<StdioGateway> {
  const gateway = new StdioGateway(ctx, down, new ChildServer(command));
  gateway.onclose = onclose;
  await gateway.start();
  return gateway;
}
