// Wire shapes of the tool catalog (docs/api.md "The tool catalog"): a tool's definition as a
// gateway sends it to POST /api/v1/policy/evaluate, the Tools list and accepting a held change.
// Pure: used by route handlers, the CLI and the OpenAPI reference alike.
import { z } from 'zod';
import { boundedString, isStorableText, toolAnnotationsSchema, toolSchema } from '@/lib/outcomes/schemas';
import { DEFINITION_PARTS, definitionBytes, pinnedDefinition } from './definition';
import { LINT_RULES, LINT_SEVERITIES } from './lint';

/** One definition's canonical JSON, at most: a 1 MB description is refused, naming it. */
export const TOOL_DEFINITION_MAX_BYTES = 256 * 1024;
/** How deep a schema may nest: canonical JSON and the lint walk them, and none needs more. */
export const TOOL_SCHEMA_MAX_DEPTH = 64;
const NAME_MAX = 200;
const TITLE_MAX = 1000;

// Iterative, so any depth is refused without a stack overflow; keys and strings must be storable
// (PostgreSQL's jsonb refuses NUL and half a surrogate pair).
function jsonProblem(value: unknown): string | null {
  const stack: { v: unknown; depth: number }[] = [{ v: value, depth: 1 }];
  while (stack.length) {
    const { v, depth } = stack.pop()!;
    if (typeof v === 'string') {
      if (!isStorableText(v)) return 'must not contain NUL characters or unpaired surrogates';
      continue;
    }
    if (!v || typeof v !== 'object') continue;
    if (depth > TOOL_SCHEMA_MAX_DEPTH) return `must nest at most ${TOOL_SCHEMA_MAX_DEPTH} levels deep`;
    for (const [k, child] of Object.entries(v)) {
      if (!isStorableText(k)) return 'must not contain NUL characters or unpaired surrogates';
      stack.push({ v: child, depth: depth + 1 });
    }
  }
  return null;
}

// A JSON Schema object as the server declared it, kept as parsed (a zod object would drop keys).
const jsonSchemaObject = (what: string) =>
  z
    .unknown()
    .superRefine((v, ctx) => {
      if (v === null || v === undefined) return;
      if (typeof v !== 'object' || Array.isArray(v)) {
        ctx.addIssue({ code: 'custom', message: 'must be a JSON Schema object' });
        return;
      }
      const problem = jsonProblem(v);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .meta({ type: 'object', additionalProperties: true, description: what });

/**
 * A tool as `tools/list` gives it, with the parts the catalog pins. Only `name` is required, so a
 * gateway that sends names and annotations only is still answered; a tool is pinned only when its
 * `inputSchema` is sent (MCP requires one of every tool, so a full definition always has it).
 */
export const catalogToolSchema = toolSchema
  .extend({
    title: boundedString(TITLE_MAX).nullish(),
    description: boundedString(TOOL_DEFINITION_MAX_BYTES).nullish(),
    inputSchema: jsonSchemaObject('The tool’s input schema as its server declared it.').optional(),
    outputSchema: jsonSchemaObject('The tool’s output schema, if its server declared one.').optional(),
    annotations: toolAnnotationsSchema.nullish(),
  })
  .strict()
  .superRefine((tool, ctx) => {
    // A schema refused above (too deep, not storable) is not measured: it is already named.
    if (jsonProblem(tool.inputSchema) || jsonProblem(tool.outputSchema)) return;
    const def = pinnedDefinition(tool as Parameters<typeof pinnedDefinition>[0]);
    const bytes = definitionBytes(def);
    if (bytes <= TOOL_DEFINITION_MAX_BYTES) return;
    // Name the part that takes the most room: that is the one to shorten.
    const sizes = DEFINITION_PARTS.map((p) => [p, def[p] === undefined ? 0 : JSON.stringify(def[p]).length] as const);
    const [largest] = [...sizes].sort((a, b) => b[1] - a[1])[0];
    ctx.addIssue({
      code: 'custom',
      path: [largest],
      message: `makes the definition ${bytes} bytes as canonical JSON; at most ${TOOL_DEFINITION_MAX_BYTES} are kept`,
    });
  });
export type CatalogToolInput = z.infer<typeof catalogToolSchema>;

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
