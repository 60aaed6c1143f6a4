// A tool's definition as the catalog pins it (docs/catalog.md "Pinning"): the six fields of MCP's
// `tools/list` that tell a model and a reviewer what the tool is, its canonical hash, and which of
// them differ between two definitions. No I/O.
import { createHash } from 'node:crypto';
import { canonicalJson } from '@/lib/json/canonical';

/** The parts of a definition compared, in the order the Tools page and `differs` list them. */
export const DEFINITION_PARTS = ['title', 'description', 'inputSchema', 'outputSchema', 'annotations'] as const;
export type DefinitionPart = (typeof DEFINITION_PARTS)[number];

/** A definition as pinned: `name` and whichever of the other parts the server gave (never null). */
export type PinnedDefinition = {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: unknown;
  outputSchema?: unknown;
  annotations?: Record<string, unknown>;
};

/** What a caller sends: the same parts, null meaning absent (JSON producers write either). */
export type DefinitionInput = {
  name: string;
  title?: string | null;
  description?: string | null;
  inputSchema?: unknown;
  outputSchema?: unknown;
  annotations?: Record<string, unknown> | null;
};

const present = (v: unknown) => v !== undefined && v !== null;

/**
 * The definition restricted to the six parts, null and absent alike left out (at the top and in the
 * annotations, whose hints are optional booleans; never deeper, where a schema's `null` means null).
 */
export function pinnedDefinition(tool: DefinitionInput): PinnedDefinition {
  const def: PinnedDefinition = { name: tool.name };
  if (present(tool.title)) def.title = tool.title!;
  if (present(tool.description)) def.description = tool.description!;
  if (present(tool.inputSchema)) def.inputSchema = tool.inputSchema;
  if (present(tool.outputSchema)) def.outputSchema = tool.outputSchema;
  if (present(tool.annotations)) {
    const a = Object.fromEntries(Object.entries(tool.annotations!).filter(([, v]) => present(v)));
    if (Object.keys(a).length) def.annotations = a;
  }
  return def;
}

/** `sha256:` + the hex SHA-256 of the definition's canonical JSON (RFC 8785): key order aside. */
export function definitionHash(def: PinnedDefinition): string {
  return `sha256:${createHash('sha256').update(canonicalJson(def), 'utf8').digest('hex')}`;
}

/** The bytes of the definition's canonical JSON (UTF-8): what its size bound counts. */
export const definitionBytes = (def: PinnedDefinition) => Buffer.byteLength(canonicalJson(def), 'utf8');

/** Which parts of `to` differ from `from`, in DEFINITION_PARTS order; all present ones when `from` is null. */
export function definitionDiffers(from: PinnedDefinition | null, to: PinnedDefinition): DefinitionPart[] {
  return DEFINITION_PARTS.filter((part) => {
    const a = from?.[part];
    const b = to[part];
    if (!from) return b !== undefined;
    return canonicalJson(a ?? null) !== canonicalJson(b ?? null);
  });
}
