// What every session of one gateway process shares: who it acts for, the console, the reporter.
import type { CountersignEndpoint } from '../mcp/countersign-http';
import type { OutcomeReporter } from '../mcp/reporter';
import { PolicyCache } from './policy';
import { ReadGuard } from '../guards/read-guard';

export interface GatewayContext {
  server: string;
  principal: string;
  organization: string;
  agent?: string;
  /** How long a call needing approval is held at most. */
  approvalWaitMs: number;
  endpoint: CountersignEndpoint;
  reporter: OutcomeReporter;
  policy: PolicyCache;
  /** The guards on trusted reads, counted in this process (lib/guards/read-guard.ts). */
  reads: ReadGuard;
  /** Logs go to stderr in stdio mode: stdout carries only MCP messages. Never credentials or arguments. */
  log: (line: string) => void;
  /** Poll interval while waiting for a decision (default 500 ms growing to 2 s). */
  pollInitialMs?: number;
  /** Progress notifications while holding a call, when the client asked for them (default 1 s). */
  progressIntervalMs?: number;
  /**
   * 2026-07-28 leg: how long after an `input_required` round a call whose client never retried is
   * recorded as left at that round (default: as long as the round's requestState is valid, 1 h).
   */
  roundAbandonMs?: number;
  /**
   * 2026-07-28 leg in front of a 2025 server: how long a call held open upstream for its server's
   * requests waits for its client's retry after a round before it is cancelled (held-calls.ts).
   */
  heldCallMs?: number;
  /** HTTP mode: how long a 2025 session unused is kept before it is ended (`--session-idle`, idle-sessions.ts). */
  sessionIdleMs?: number;
  /** HTTP: false sends every call through SDK v2's path, in both eras (the tests compare both; modern-lean.ts). */
  modernLean?: boolean;
}

export function gatewayContext(
  options: Omit<GatewayContext, 'policy' | 'reads'> & { policyTtlMs?: number },
): GatewayContext {
  return {
    ...options,
    policy: new PolicyCache(options.endpoint, options.server, options.policyTtlMs),
    reads: new ReadGuard(() => options.reporter.makePending()),
  };
}

/** The console page of an approval, for people to decide on. */
export function approvalUrl(endpoint: CountersignEndpoint, id: string): string {
  const root = new URL(endpoint.url);
  if (!root.pathname.endsWith('/')) root.pathname += '/';
  return new URL(`approvals/${encodeURIComponent(id)}`, root).toString();
}
