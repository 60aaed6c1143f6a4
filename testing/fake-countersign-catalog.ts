// The tool catalog of the fake console (fake-countersign.ts): `POST /api/v1/policy/evaluate`
// with the pinning of docs/catalog.md kept small. The first definition seen of a tool is accepted;
// a later one that differs (canonical JSON of the six parts, so key order aside) is held until the
// test accepts it (`accept`, as an admin does on the Tools page). Policy as the console's own
// rules say (trust, admin rules); nothing is ever blocked here.
import { believedHints, requiredApprovalsFor, WHOLE_SERVER } from '@/lib/approvals/policy';
import type { ToolAnnotations } from '@/lib/outcomes/schemas';
import { canonicalJson } from '@/lib/json/canonical';
import type { FakePolicy } from './fake-countersign-approvals';
import { json, problem } from './fake-countersign-responses';

const PARTS = ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations'] as const;

/** The definition as pinned: the six parts, those absent or null left out. */
export function pinnedText(tool: Record<string, unknown>): string {
  const def: Record<string, unknown> = {};
  for (const part of PARTS) if (tool[part] !== undefined && tool[part] !== null) def[part] = tool[part];
  return canonicalJson(def);
}

export function fakeCatalog(options: FakePolicy) {
  /** Per server and tool name: the accepted definition, and the held one that differs from it. */
  const pins = new Map<string, { accepted: string; held: string | null }>();
  /** Every body the console was asked with, as sent. */
  const evaluated: { server: string; tools: Record<string, unknown>[] }[] = [];
  const pinKey = (server: string, name: string) => `${server}\u0000${name}`;

  function evaluate(body: unknown): Response {
    const b = body as { server?: unknown; tools?: unknown } | null;
    if (typeof b?.server !== 'string' || !Array.isArray(b.tools) || b.tools.length < 1 || b.tools.length > 1000)
      return problem(422, 'invalid_input', [{ path: 'tools', message: 'must name 1 to 1000 tools' }]);
    const server = b.server;
    const tools = b.tools as Record<string, unknown>[];
    evaluated.push({ server, tools });
    const trusted = options.trustedServers?.includes(server) ?? false;
    const rules = (options.rules ?? [])
      .filter((r) => r.server === server)
      .map((r) => ({ toolName: r.tool ?? WHOLE_SERVER, requiredApprovals: r.requiredApprovals }));
    const answers = tools.map((tool) => {
      const name = String(tool.name);
      const text = pinnedText(tool);
      const pin = pins.get(pinKey(server, name));
      let held = false;
      if (!pin) pins.set(pinKey(server, name), { accepted: text, held: null });
      else if (pin.accepted !== text) {
        pin.held = text;
        held = true;
      }
      const annotations = tool.annotations as ToolAnnotations | null | undefined;
      const verdict = requiredApprovalsFor({ toolName: name, annotations, serverTrusted: trusted, rules });
      return {
        name,
        readOnly: believedHints(annotations, trusted).readOnly,
        blocked: verdict.blocked,
        held,
        requiredApprovals: verdict.requiredApprovals,
        reason: held ? 'its definition changed since it was accepted' : verdict.basis,
      };
    });
    return json(200, { server, trusted, tools: answers });
  }

  return {
    evaluate,
    evaluated,
    /** An admin accepts the held definition of this tool (false: none is held). */
    accept(server: string, name: string): boolean {
      const pin = pins.get(pinKey(server, name));
      if (!pin?.held) return false;
      pin.accepted = pin.held;
      pin.held = null;
      return true;
    },
  };
}
