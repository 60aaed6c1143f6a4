// Wire shapes of the tool catalog (docs/api.md "The tool catalog"): a tool's definition as a
// gateway sends it to POST /api/v1/policy/evaluate, the Tools list and accepting a held change.
// Pure: used by route handlers, the CLI and the OpenAPI reference alike.
import { z } from 'zod';
import { boundedString, isStorableText, toolAnnotationsSchema, toolSchema } from '@/lib/outcomes/schemas';
import { DEFINITION_PARTS, definitionBytes, pinnedDefinition } from './definition';
import { LINT_RULES, LINT_SEVERITIES } from './lint';

/** One definition's canonical JSON, at most: a tool with a larger one is held (`unreviewable`). */
export const TOOL_DEFINITION_MAX_BYTES = 256 * 1024;
/** How deep a schema may nest: canonical JSON and the lint walk them, and none needs more. */
export const TOOL_SCHEMA_MAX_DEPTH = 64;
const NAME_MAX = 200;
const TITLE_MAX = 1000;
const UNSTORABLE = 'contains text that cannot be stored (NUL or an unpaired surrogate)';

// Iterative, so any depth is measured without a stack overflow; keys and strings must be storable
// (PostgreSQL's jsonb refuses NUL and half a surrogate pair).
function jsonProblem(value: unknown): string | null {
  const stack: { v: unknown; depth: number }[] = [{ v: value, depth: 1 }];
  while (stack.length) {
    const { v, depth } = stack.pop()!;
    if (typeof v === 'string') {
      if (!isStorableText(v)) return UNSTORABLE;
      continue;
    }
    if (!v || typeof v !== 'object') continue;
    if (depth > TOOL_SCHEMA_MAX_DEPTH) return `nests more than ${TOOL_SCHEMA_MAX_DEPTH} levels deep`;
    for (const [k, child] of Object.entries(v)) {
      if (!isStorableText(k)) return UNSTORABLE;
      stack.push({ v: child, depth: depth + 1 });
    }
  }
  return null;
}

// A JSON Schema object as the server declared it, kept as parsed (a zod object would drop keys).
// Only its shape is checked here; its size, depth and text are `unreviewable`'s business.
const jsonSchemaObject = (what: string) =>
  z
    .unknown()
    .superRefine((v, ctx) => {
      if (v === null || v === undefined) return;
      if (typeof v !== 'object' || Array.isArray(v))
        ctx.addIssue({ code: 'custom', message: 'must be a JSON Schema object' });
    })
    .meta({ type: 'object', additionalProperties: true, description: what });

// MCP's annotations, with a title of any length: a long one holds the tool (`unreviewable`).
const catalogAnnotationsSchema = toolAnnotationsSchema.extend({ title: z.string().nullish() });

/**
 * A tool as `tools/list` gives it, with the parts the catalog pins. Only `name` is required, so a
 * gateway that sends names and annotations only is still answered; a tool is pinned only when its
 * `inputSchema` is sent (MCP requires one of every tool, so a full definition always has it).
 *
 * What is refused here (422 for the whole request) and what only holds the one tool:
 * - Refused: what breaks MCP's own shape of a tool, which a gateway's MCP client has already
 *   checked, so it is a gateway's bug, not a server's: a part of the wrong JSON type (a schema
 *   that is not an object, a description that is not a string, a hint that is not a boolean), an
 *   unknown field, and a name that is missing, empty, over 200 characters or not storable (the
 *   answer is given per name, so the name must be one the console can repeat). The request's own
 *   bounds (at most 1000 tools, each name once) are `policyEvaluateSchema`'s.
 * - Held (`unreviewable`): a definition MCP allows but the console will not keep for review: over
 *   TOOL_DEFINITION_MAX_BYTES as canonical JSON, a title or annotations.title over its bound, a
 *   schema nesting deeper than TOOL_SCHEMA_MAX_DEPTH, text PostgreSQL cannot store. A server can
 *   send any of these, and its gateway cannot mend them; refusing the request would make the
 *   gateway fail closed for every tool of that server, so one odd tool would shut out the rest.
 */
export const catalogToolSchema = toolSchema
  .extend({
    title: z.string().nullish(),
    description: z.string().nullish(),
    inputSchema: jsonSchemaObject('The tool’s input schema as its server declared it.').optional(),
    outputSchema: jsonSchemaObject('The tool’s output schema, if its server declared one.').optional(),
    annotations: catalogAnnotationsSchema.nullish(),
  })
  .strict();
export type CatalogToolInput = z.infer<typeof catalogToolSchema>;

/** Why a tool's definition cannot be reviewed: it is held, never stored and never accepted. */
export type Unreviewable = { reason: string; bytes: number | null; limit: number };

const textProblem = (what: string, v: string | null | undefined, max: number): Unreviewable | null => {
  if (v === null || v === undefined) return null;
  if (!isStorableText(v))
    return { reason: `definition cannot be reviewed: its ${what} ${UNSTORABLE}`, bytes: null, limit: max };
  if (v.length > max)
    return {
      reason: `definition too large to review: its ${what} is ${v.length} characters, over the limit of ${max}`,
      bytes: null,
      limit: max,
    };
  return null;
};

/**
 * Null when the definition can be pinned and reviewed; otherwise why not (see catalogToolSchema).
 * Checked in this order so a schema too deep to serialize is never serialized.
 */
export function unreviewable(tool: CatalogToolInput): Unreviewable | null {
  const problem =
    textProblem('title', tool.title, TITLE_MAX) ??
    textProblem('annotations.title', tool.annotations?.title, NAME_MAX) ??
    // Its length is counted in bytes with the rest, below.
    textProblem('description', tool.description, Infinity);
  if (problem) return problem;
  for (const part of ['inputSchema', 'outputSchema'] as const) {
    const p = jsonProblem(tool[part]);
    if (p === UNSTORABLE) return { reason: `definition cannot be reviewed: its ${part} ${p}`, bytes: null, limit: 0 };
    if (p)
      return { reason: `definition too large to review: its ${part} ${p}`, bytes: null, limit: TOOL_SCHEMA_MAX_DEPTH };
  }
  const def = pinnedDefinition(tool as Parameters<typeof pinnedDefinition>[0]);
  const bytes = definitionBytes(def);
  if (bytes <= TOOL_DEFINITION_MAX_BYTES) return null;
  // Name the part that takes the most room: that is the one to shorten.
  const sizes = DEFINITION_PARTS.map((p) => [p, def[p] === undefined ? 0 : JSON.stringify(def[p]).length] as const);
  const [largest] = [...sizes].sort((a, b) => b[1] - a[1])[0];
  return {
    reason: `definition too large to review: ${bytes} bytes as canonical JSON, over the limit of ${TOOL_DEFINITION_MAX_BYTES} (mostly its ${largest})`,
    bytes,
    limit: TOOL_DEFINITION_MAX_BYTES,
  };
}

const serverName = boundedString(NAME_MAX).min(1, 'is required');
const hashSchema = z
  .string()
  .regex(/^sha256:[0-9a-f]{64}$/, 'must be sha256: and 64 lower-case hex digits')
  .meta({ description: 'A definition’s canonical hash: `sha256:` + SHA-256 of its canonical JSON (RFC 8785).' });

// `GET /api/v1/tools?server=S`.
export const toolsQuerySchema = z.strictObject({ server: serverName });

// `POST /api/v1/tools/accept`: the held definition an admin saw, by its hash.
export const acceptToolSchema = z.strictObject({
  server: serverName,
  tool: boundedString(NAME_MAX).min(1, 'is required'),
  definitionHash: hashSchema,
});
export type AcceptToolInput = z.infer<typeof acceptToolSchema>;

// The answers.
const definitionSchema = z
  .looseObject({ name: z.string() })
  .meta({ description: 'The definition as pinned: name, title, description, inputSchema, outputSchema, annotations.' });
const requiredApprovals = z.union([z.literal(0), z.literal(1), z.literal(2)]);
export const toolDefinitionViewSchema = z.strictObject({
  name: z.string(),
  accepted: z
    .strictObject({
      definitionHash: hashSchema,
      definition: definitionSchema,
      acceptedAt: z.iso.datetime(),
      acceptedBy: z.string().nullable().meta({ description: 'The admin; null when accepted at its first sighting.' }),
    })
    .nullable(),
  held: z
    .strictObject({
      definitionHash: hashSchema,
      definition: definitionSchema,
      since: z.iso.datetime(),
      differs: z.array(z.enum(DEFINITION_PARTS)),
    })
    .nullable()
    .meta({ description: 'A definition that differs from the accepted one: hidden and refused until accepted.' }),
  requiredApprovals,
  blocked: z.boolean(),
});
export const lintFindingSchema = z.strictObject({
  rule: z.enum(LINT_RULES),
  severity: z.enum(LINT_SEVERITIES),
  tools: z.array(z.string()),
  message: z.string(),
});
export const toolCatalogSchema = z
  .strictObject({
    server: z.string(),
    trusted: z.boolean(),
    holdNewTools: z.boolean().meta({ description: 'Whether new tools wait for an admin too.' }),
    tools: z.array(toolDefinitionViewSchema),
    lint: z.array(lintFindingSchema),
  })
  .meta({ description: 'A server’s tools: accepted and held definitions, and the lint of them all.' });
export const acceptedToolSchema = z.strictObject({
  server: z.string(),
  tool: z.string(),
  definitionHash: hashSchema,
  acceptedAt: z.iso.datetime(),
});
