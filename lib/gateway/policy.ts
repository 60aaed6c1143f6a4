// What the console's policy requires of each tool (`POST /api/v1/policy/evaluate`), cached for a
// few seconds so an admin's change applies within seconds. When the console cannot be reached the
// last answer stays in force (trusted reads keep going through); with none ever, the server's own
// readOnlyHint is all there is: such reads go through, every other call fails closed
// (modern-call.ts, approval-gate.ts).
//
// Each tool is sent as `tools/list` gave it (the six parts the console's catalog pins: name,
// title, description, input and output schemas, annotations; docs/catalog.md), so the console can
// hold a tool whose definition changed since it was accepted. A held tool is hidden and refused
// like a blocked one, until an admin accepts the new definition.
import { createHash } from 'node:crypto';
import type { Tool } from '@modelcontextprotocol/server';
import { canonicalJson } from '../json/canonical';
import { callApi, type CountersignEndpoint } from '../mcp/countersign-http';
import { BUDGET_BOUNDS, BUDGET_KEYS, DEFAULT_BUDGETS, type GuardBudgets } from '../guards/budgets';

export interface ToolPolicy {
  name: string;
  readOnly: boolean;
  blocked: boolean;
  /** Its definition differs from the one an admin accepted: out of reach until the new one is accepted. */
  held: boolean;
  requiredApprovals: number;
  reason: string;
  /** The guards' budgets for this tool, resolved by the console; a gateway counts trusted reads against them. */
  budgets: GuardBudgets;
}

export interface PolicySnapshot {
  trusted: boolean;
  tools: ReadonlyMap<string, ToolPolicy>;
  /** The tools not shown and not callable (blocked or held), and the same sorted and joined (to compare sets). */
  hidden: readonly string[];
  hiddenKey: string;
  at: number;
}

const BATCH = 1000;

export class PolicyCache {
  private snapshot: PolicySnapshot | null = null;
  private key = '';
  /**
   * Each tool list's key, made once per list (a session keeps its list until its catalog changes):
   * a digest of every definition's canonical JSON, so any change of one (a description, a
   * schema) asks the console again, and a change of key order alone does not.
   */
  private readonly keys = new WeakMap<readonly Tool[], string>();
  private refreshing: { key: string; answer: Promise<PolicySnapshot | null> } | null = null;

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
      const hash = createHash('sha256');
      for (const t of tools) hash.update(definitionText(t)).update('\u0000');
      key = `${tools.length}:${hash.digest('base64url')}`;
      this.keys.set(tools, key);
    }
    return key;
  }

  /** Whether the cached answer is still fresh for this list of tools. */
  fresh(): boolean {
    return !!this.snapshot && this.now() - this.snapshot.at < this.ttlMs;
  }

  // Concurrent askers of one list share one request. One asking about another list (a definition
  // changed meanwhile) waits for it, then asks about its own: an answer about the old definitions
  // would show a tool the console is about to hold.
  private async refresh(tools: readonly Tool[], key: string): Promise<PolicySnapshot | null> {
    for (;;) {
      const running = this.refreshing;
      if (!running) break;
      const answer = await running.answer;
      if (running.key === key) return answer;
      const fresh = this.cached(tools);
      if (fresh) return fresh;
    }
    const answer = this.ask(tools)
      .then((snapshot) => {
        if (snapshot) {
          this.snapshot = snapshot;
          this.key = key;
        }
        return this.snapshot;
      })
      .finally(() => {
        if (this.refreshing?.answer === answer) this.refreshing = null;
      });
    this.refreshing = { key, answer };
    return answer;
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
          tools: list.slice(i, i + BATCH).map(definitionOf),
        },
      });
      if (res.kind !== 'response' || res.status !== 200) return null;
      const body = res.body as { trusted?: unknown; tools?: unknown };
      if (!Array.isArray(body?.tools)) return null;
      trusted = body.trusted === true;
      for (const t of body.tools as ToolPolicy[])
        if (typeof t?.name === 'string')
          byName.set(t.name, {
            ...t,
            blocked: t.blocked === true,
            held: t.held === true,
            budgets: budgetsOf(t.budgets),
          });
    }
    const hidden = [...byName.values()].filter((t) => t.blocked || t.held).map((t) => t.name);
    return { trusted, tools: byName, hidden, hiddenKey: [...hidden].sort().join('\u0000'), at: this.now() };
  }
}

// A console older than the budgets sends none; a value out of bounds is not one the console
// could have stored. Either way that budget is the default, as the console's own fallback.
function budgetsOf(raw: unknown): GuardBudgets {
  const given = (raw ?? {}) as Partial<Record<keyof GuardBudgets, unknown>>;
  const budgets = { ...DEFAULT_BUDGETS };
  for (const key of BUDGET_KEYS) {
    const v = given[key];
    if (Number.isInteger(v) && (v as number) >= BUDGET_BOUNDS[key].min && (v as number) <= BUDGET_BOUNDS[key].max)
      budgets[key] = v as number;
  }
  return budgets;
}

/** The parts of a tool's definition the console pins, as the server gave them (absent ones left out). */
export const DEFINITION_KEYS = ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations'] as const;

export function definitionOf(tool: Tool): Record<string, unknown> {
  const def: Record<string, unknown> = {};
  for (const key of DEFINITION_KEYS) if (tool[key] !== undefined) def[key] = tool[key];
  return def;
}

// Canonical, so that the same definition with its keys in another order is the same key; a
// definition JSON cannot hold (never from a parsed list) falls back to its name and a marker.
function definitionText(tool: Tool): string {
  try {
    return canonicalJson(definitionOf(tool));
  } catch {
    return `${String(tool.name)}\u0001unserializable`;
  }
}
