// The gateway process: flags and environment in, one mode running, records flushed on exit.
import { OutcomeReporter } from '../mcp/reporter';
import { gatewayContext, type GatewayContext } from './context';
import { parseFlags, USAGE, type GatewayFlags } from './flags';
import { runHttp } from './http';
import { runStdio } from './stdio';
import type { GatewayConfig } from '../config';

/** How long records still buffered at exit are tried: HTTP mode. */
const HTTP_FLUSH_MS = 5000;
/**
 * stdio mode, after the child is gone: shorter, so that the gateway exits by itself before a host
 * following MCP's stdio shutdown sends SIGKILL (the SDK's client does so a few seconds after
 * closing stdin).
 */
const STDIO_FLUSH_MS = 2000;

export interface RunOptions {
  argv: readonly string[];
  /** COUNTERSIGN_URL and COUNTERSIGN_API_KEY (lib/config `gatewayConfig()`). */
  env: GatewayConfig;
  log?: (line: string) => void;
}

export type RunResult =
  { code: 2; message: string } | { code: 0; stop: () => Promise<void>; done: Promise<void>; url?: string };

export function contextFor(
  flags: GatewayFlags,
  env: GatewayConfig,
  log: (line: string) => void,
): GatewayContext | string {
  const url = env.COUNTERSIGN_URL?.trim();
  const apiKey = env.COUNTERSIGN_API_KEY?.trim();
  if (!url) return 'COUNTERSIGN_URL is required (the console, e.g. https://countersign.example.com)';
  try {
    new URL(url);
  } catch {
    return 'COUNTERSIGN_URL must be a URL';
  }
  if (!apiKey) return 'COUNTERSIGN_API_KEY is required (scopes outcomes:write, approvals:request, grants:redeem)';
  const endpoint = { url, apiKey };
  const reporter = new OutcomeReporter({
    ...endpoint,
    onEvent: (e) => log(`reporter: ${e.kind} (${e.records} record${e.records === 1 ? '' : 's'})`),
  });
  return gatewayContext({
    server: flags.server,
    principal: flags.principal,
    organization: flags.organization,
    ...(flags.agent ? { agent: flags.agent } : {}),
    approvalWaitMs: flags.approvalWait * 1000,
    ...(flags.sessionIdle !== undefined ? { sessionIdleMs: flags.sessionIdle * 1000 } : {}),
    endpoint,
    reporter,
    log,
  });
}

export async function runGateway(options: RunOptions): Promise<RunResult> {
  const log = options.log ?? ((line: string) => process.stderr.write(`countersign-gateway: ${line}\n`));
  const parsed = parseFlags(options.argv);
  if (!parsed.ok) return { code: 2, message: `${parsed.message}\n${USAGE}` };
  const ctx = contextFor(parsed.flags, options.env, log);
  if (typeof ctx === 'string') return { code: 2, message: ctx };
  const flush = async (ms: number) => {
    const result = await ctx.reporter.close(ms);
    if (!result.ok) log(`${result.buffered} record(s) could not be sent before exit`);
  };
  if (parsed.flags.upstream) {
    const { upstream, host, port, allowedHosts } = parsed.flags;
    const gateway = await runHttp(ctx, upstream, host, port, allowedHosts ? { allowedHosts } : {});
    log(`listening on ${gateway.url}, forwarding to ${parsed.flags.upstream.origin}`);
    let stopped: () => void;
    const done = new Promise<void>((resolve) => (stopped = resolve));
    return {
      code: 0,
      url: gateway.url,
      done,
      stop: async () => {
        await gateway.close();
        await flush(HTTP_FLUSH_MS);
        stopped();
      },
    };
  }
  let closed: () => void;
  const done = new Promise<void>((resolve) => (closed = resolve));
  // Told before the gateway starts: the host may close stdin at once.
  const gateway = await runStdio(ctx, parsed.flags.command!, undefined, () => void flush(STDIO_FLUSH_MS).then(closed));
  return { code: 0, done, stop: () => gateway.close().then(() => done) };
}
