// The tool catalog of an MCP session: which tools exist, and their declared output schemas.
import type { Client, Tool } from '@modelcontextprotocol/client';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/client/validators/ajv';

export interface ToolCatalog {
  tools: ReadonlyMap<string, Tool>;
}

/**
 * Lists every tool (all pages). Calling `listTools()` also makes the SDK validate structured
 * results against each tool's `outputSchema`; we validate again ourselves because the SDK keeps
 * the validators of the last page only.
 */
export async function loadToolCatalog(
  client: Client,
  options: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<ToolCatalog> {
  const tools = new Map<string, Tool>();
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined, {
      timeout: options.timeoutMs,
      signal: options.signal,
    });
    for (const tool of page.tools) tools.set(tool.name, tool);
    cursor = page.nextCursor;
  } while (cursor);
  return { tools };
}

const validator = new AjvJsonSchemaValidator();
const compiled = new WeakMap<object, (value: unknown) => boolean>();
/** Whether structured content matches the tool's declared `outputSchema` (validators cached per schema). */
export function matchesOutputSchema(tool: { outputSchema?: object }, value: unknown): boolean {
  const schema = tool.outputSchema as object;
  let check = compiled.get(schema);
  if (!check) {
    const validate = validator.getValidator(schema as Parameters<typeof validator.getValidator>[0]);
    check = (v) => validate(v).valid;
    compiled.set(schema, check);
  }
  return check(value);
}
