// The OpenAPI 3.1 document of /api/v1 (docs/api.md, "The API described"), generated from the route
// registry (./routes.ts): request schemas are the zod schemas that validate the requests, turned
// into JSON Schema by zod itself; answers and problems likewise. Pure and deterministic.
import { z } from 'zod';
import { apiRoutes } from './routes';
import { problemCodes, problemSchema, problemTitles, retryAfterStatuses } from './problems';
import { securityOf, securitySchemes, whoMay } from './security';
import { methods, type Answer, type Operation, type RouteEntry } from './types';

type Json = Record<string, unknown>;

/** JSON Schema (2020-12, OpenAPI 3.1's dialect) of a zod schema: of what it accepts, or of what an answer is. */
export function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    io,
    target: 'draft-2020-12',
    // Refinements (cross-field rules) have no JSON Schema: the field-level rules are documented, the rest in prose.
    unrepresentable: 'any',
  }) as Json;
  return rest;
}

const operationId = (method: string, path: string) =>
  method.toLowerCase() +
  path
    .split('/')
    .filter(Boolean)
    .map((part) => part.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string = '') => c.toUpperCase()))
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');

function parameters(entry: RouteEntry, op: Operation): Json[] {
  const out: Json[] = [];
  for (const [name, schema] of Object.entries(entry.params ?? {})) {
    const s = jsonSchema(schema, 'input');
    out.push({ name, in: 'path', required: true, description: s.description, schema: s });
  }
  if (op.query) {
    const q = jsonSchema(op.query, 'input') as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, s] of Object.entries(q.properties ?? {}))
      out.push({ name, in: 'query', required: q.required?.includes(name) ?? false, schema: s });
  }
  for (const h of op.headers ?? [])
    out.push({
      name: h.name,
      in: 'header',
      required: h.required,
      description: h.description,
      schema: jsonSchema(h.schema, 'input'),
    });
  return out;
}

function requestBody(op: Operation): Json | undefined {
  const schema = op.body ?? op.decodedBody;
  if (!schema) return undefined;
  const content: Json = {
    'application/json': {
      schema: jsonSchema(schema, 'input'),
      ...(op.bodyExample === undefined ? {} : { example: op.bodyExample }),
    },
  };
  for (const [type, description] of Object.entries(op.bodyAlternatives ?? {}))
    content[type] = { schema: { type: 'string', contentMediaType: type, description } };
  return { required: true, content };
}

function answer(a: Answer): Json {
  const content: Json = { [a.contentType ?? 'application/json']: { schema: jsonSchema(a.schema, 'output') } };
  for (const [type, description] of Object.entries(a.alternatives ?? {}))
    content[type] = { schema: { type: 'string', contentMediaType: type, description } };
  const headers = Object.fromEntries(
    Object.entries(a.headers ?? {}).map(([name, description]) => [name, { description, schema: { type: 'string' } }]),
  );
  return { description: a.description, content, ...(a.headers ? { headers } : {}) };
}

function problem(status: number, codes: string[]): Json {
  const headers: Json = {};
  if (retryAfterStatuses.has(status))
    headers['Retry-After'] = { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } };
  if (status === 401) headers['WWW-Authenticate'] = { description: 'Bearer', schema: { type: 'string' } };
  return {
    description: `${problemTitles[status] ?? 'Problem'} (code ${codes.join(' or ')}).`,
    ...(Object.keys(headers).length ? { headers } : {}),
    content: {
      'application/problem+json': {
        schema: jsonSchema(problemSchema(status, codes), 'output'),
        example: { type: `/problems/${codes[0]}`, title: problemTitles[status], status, code: codes[0], detail: '…' },
      },
    },
  };
}

function operation(entry: RouteEntry, method: string, op: Operation): Json {
  const responses: Json = {};
  for (const a of op.answers) responses[String(a.status)] = answer(a);
  for (const [status, codes] of problemCodes(op)) responses[String(status)] = problem(status, codes);
  const body = requestBody(op);
  return {
    operationId: operationId(method, entry.path),
    summary: op.summary,
    description: [op.description, whoMay(op.action)].filter(Boolean).join('\n\n'),
    tags: [op.tag],
    security: securityOf(op.action),
    ...(op.action ? { 'x-countersign-action': op.action } : {}),
    parameters: parameters(entry, op),
    ...(body ? { requestBody: body } : {}),
    responses,
  };
}

export function buildOpenApiDocument(routes: readonly RouteEntry[] = apiRoutes): Json {
  const paths: Json = {};
  for (const entry of routes) {
    const item: Json = {};
    for (const method of methods) {
      const op = entry.operations[method];
      if (op) item[method.toLowerCase()] = operation(entry, method, op);
    }
    paths[entry.path] = item;
  }
  const tags = [...new Set(routes.flatMap((r) => Object.values(r.operations).map((o) => o!.tag)))];
  return {
    openapi: '3.1.1',
    info: {
      title: 'Countersign API',
      version: '1',
      description:
        'Outcome records of MCP tool calls, approvals and grants for writes, incidents and the audit chain. Errors are application/problem+json with a stable `code`; bodies over 1 MiB get 413.',
    },
    servers: [{ url: '/api/v1' }],
    tags: tags.map((name) => ({ name })),
    paths,
    components: { securitySchemes },
  };
}

let built: Json | undefined;
/** The document, built once per process. */
export const openApiDocument = (): Json => (built ??= buildOpenApiDocument());
