// What the console's policy requires of each tool (`POST /api/v1/policy/evaluate`), cached for a
// few seconds so an admin's change applies within seconds. When the console cannot be reached the
// last answer stays in force (trusted reads keep going through); with none ever, the server's own
// readOnlyHint is all there is: such reads go through, every other call fails closed (call.ts,
// approval-gate.ts).
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { annotationsOf } from '../mcp/record';
import { callApi, type CountersignEndpoint } from '../mcp/countersign-http';

export interface ToolPolicy {
  name: string;
  readOnly: boolean;
  blocked: boolean;
  requiredApprovals: number;
  reason: string;
}

export interface PolicySnapshot {
  trusted: boolean;
  tools: ReadonlyMap<string, ToolPolicy>;
  /** The blocked tools' names, and the same sorted and joined (to compare sets). */
  blocked: readonly string[];
  blockedKey: string;
  at: number;
}

const BATCH = 1000;

export class PolicyCache {
  private snapshot: PolicySnapshot | null = null;
  private key = '';
  /** Each tool list's key, made once per list (a session keeps its list until its catalog changes). */
  private readonly keys = new WeakMap<readonly Tool[], string>();
  private refreshing: Promise<PolicySnapshot | null> | null = null;

  constructor(
    private readonly endpoint: CountersignEndpoint,
    private readonly server: string,
    private readonly ttlMs = 3000,
    private readonly now: () => number = Date.now,
  ) {}

  /** The last answer, however old (null when none ever came). */
  last(): PolicySnapshot | null {
    return this.snapshot;
  }

  /** The policy for these tools: fresh within the TTL, else asked again (the last one if that fails). */
  async get(tools: readonly Tool[]): Promise<PolicySnapshot | null> {
    return this.cached(tools) ?? this.refresh(tools, this.keyFor(tools));
  }

  /** The answer for these tools when it is fresh, without asking (null otherwise). */
  cached(tools: readonly Tool[]): PolicySnapshot | null {
    if (!this.snapshot || this.now() - this.snapshot.at >= this.ttlMs) return null;
    return this.keyFor(tools) === this.key ? this.snapshot : null;
  }

  private keyFor(tools: readonly Tool[]): string {
    let key = this.keys.get(tools);
    if (key === undefined) {
      key = tools.map((t) => `${t.name}\u0000${JSON.stringify(annotationsOf(t))}`).join('\u0001');
      this.keys.set(tools, key);
    }
    return key;
  }

  /** Whether the cached answer is still fresh for this list of tools. */
  fresh(): boolean {
    return !!this.snapshot && this.now() - this.snapshot.at < this.ttlMs;
  }

  private refresh(tools: readonly Tool[], key: string): Promise<PolicySnapshot | null> {
    this.refreshing ??= this.ask(tools)
      .then((snapshot) => {
        if (snapshot) {
          this.snapshot = snapshot;
          this.key = key;
        }
        return this.snapshot;
      })
      .finally(() => {
        this.refreshing = null;
      });
    return this.refreshing;
  }

  private async ask(tools: readonly Tool[]): Promise<PolicySnapshot | null> {
    const byName = new Map<string, ToolPolicy>();
    let trusted = false;
    // A server that lists no tools has nothing to evaluate: an empty answer, asked of no one.
    const list = tools;
    for (let i = 0; i < list.length; i += BATCH) {
      const res = await callApi(this.endpoint, 'POST', '/api/v1/policy/evaluate', {
        body: {
          server: this.server,
          tools: list.slice(i, i + BATCH).map((t) => ({ name: t.name, annotations: annotationsOf(t) })),
        },
      });
      if (res.kind !== 'response' || res.status !== 200) return null;
      const body = res.body as { trusted?: unknown; tools?: unknown };
      if (!Array.isArray(body?.tools)) return null;
      trusted = body.trusted === true;
      for (const t of body.tools as ToolPolicy[]) if (typeof t?.name === 'string') byName.set(t.name, t);
    }
    const blocked = [...byName.values()].filter((t) => t.blocked).map((t) => t.name);
    return { trusted, tools: byName, blocked, blockedKey: [...blocked].sort().join('\u0000'), at: this.now() };
  }
}
