// The generated reference: a valid OpenAPI 3.1 document, with hand-written expectations for a few
// operations taken from docs/api.md (methods, parameters, problems, who may call).
import { compileErrors, validate } from '@readme/openapi-parser';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from './document';

type Op = {
  security: Record<string, string[]>[];
  parameters: { name: string; in: string; required: boolean }[];
  requestBody?: { required: boolean; content: Record<string, { schema: { required?: string[] } }> };
  responses: Record<string, { content?: Record<string, { schema: { properties?: { code?: { enum?: string[] } } } }> }>;
};
const doc = buildOpenApiDocument() as { openapi: string; paths: Record<string, Record<string, Op>> } & Record<
  string,
  unknown
>;
const op = (path: string, method: string) => {
  const found = doc.paths[path]?.[method];
  if (!found) throw new Error(`${method} ${path} is not documented`);
  return found;
};
const statuses = (o: Op) => Object.keys(o.responses).sort();
const codesAt = (o: Op, status: string) =>
  o.responses[status].content?.['application/problem+json'].schema.properties?.code?.enum;

describe('the OpenAPI document', () => {
  it('validates as OpenAPI 3.1', async () => {
    // validate() dereferences in place: give it a copy.
    const result = await validate(structuredClone(doc) as never);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
    expect(doc.openapi).toMatch(/^3\.1\./);
  });

  it('the validator refuses a broken document (so the test above can fail)', async () => {
    const broken = structuredClone(doc) as { paths: Record<string, Record<string, Record<string, unknown>>> };
    delete broken.paths['/outcomes'].get.responses;
    broken.paths['/outcomes'].post.operationId = broken.paths['/outcomes'].get.operationId;
    expect((await validate(broken as never)).valid).toBe(false);
  });

  it('documents each path with the methods docs/api.md gives it', () => {
    const methods = (path: string) => Object.keys(doc.paths[path] ?? {}).sort();
    expect(methods('/outcomes')).toEqual(['get', 'post']);
    expect(methods('/outcomes/{id}')).toEqual(['get']);
    expect(methods('/approvals')).toEqual(['get', 'post']);
    expect(methods('/approvals/{id}/decisions')).toEqual(['post']);
    expect(methods('/grants/{grantId}/redeem')).toEqual(['post']);
    expect(methods('/otlp/v1/traces')).toEqual(['post']);
    expect(methods('/openapi.json')).toEqual(['get']);
  });

  it('POST /outcomes: the batch body, 422 for schema violations and reused event ids, the write scope only', () => {
    const o = op('/outcomes', 'post');
    expect(o.requestBody?.required).toBe(true);
    expect(o.requestBody?.content['application/json'].schema.required).toEqual(['records']);
    expect(statuses(o)).toEqual(['200', '400', '401', '403', '413', '422', '429', '503']);
    expect(codesAt(o, '422')).toEqual(['idempotency_key_reused', 'invalid_input']);
    expect(o.security).toEqual([{ apiKey: ['outcomes:write'] }]);
  });

  it('GET /outcomes: every filter an optional query parameter; readers by scope or any role', () => {
    const o = op('/outcomes', 'get');
    const query = o.parameters.filter((p) => p.in === 'query');
    for (const name of ['requestRef', 'delivery', 'category', 'tool', 'server', 'from', 'to', 'cursor', 'limit'])
      expect(query.find((p) => p.name === name)).toMatchObject({ required: false });
    expect(o.requestBody).toBeUndefined();
    expect(statuses(o)).toEqual(['200', '400', '401', '403', '422', '429', '503']);
    expect(o.security).toEqual([
      { apiKey: ['outcomes:read'] },
      { personalToken: ['reviewer'] },
      { session: ['reviewer'] },
      { personalToken: ['support'] },
      { session: ['support'] },
      { personalToken: ['admin'] },
      { session: ['admin'] },
    ]);
  });

  it('POST /approvals: the Idempotency-Key header is required; 400, 409 and 422 name their codes; 200 is a guard refusal', () => {
    const o = op('/approvals', 'post');
    expect(o.parameters).toEqual([expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: true })]);
    expect(statuses(o)).toEqual(['200', '201', '400', '401', '403', '409', '413', '422', '429', '503']);
    expect(codesAt(o, '400')).toEqual(['idempotency_key_required', 'invalid_input']);
    expect(codesAt(o, '422')).toEqual([
      'arguments_digest_mismatch',
      'arguments_required',
      'arguments_too_large',
      'idempotency_key_reused',
      'invalid_input',
    ]);
    expect(o.security).toEqual([{ apiKey: ['approvals:request'] }]);
  });

  it('decisions: people only (reviewer or admin), the id a required path parameter, 404 and 409', () => {
    const o = op('/approvals/{id}/decisions', 'post');
    expect(o.parameters).toEqual([expect.objectContaining({ name: 'id', in: 'path', required: true })]);
    expect(o.security).toEqual([
      { personalToken: ['reviewer'] },
      { session: ['reviewer'] },
      { personalToken: ['admin'] },
      { session: ['admin'] },
    ]);
    expect(statuses(o)).toEqual(['200', '400', '401', '403', '404', '409', '413', '422', '429', '503']);
  });

  it('redeem: 410 gone and 409 conflict; the grants scope only', () => {
    const o = op('/grants/{grantId}/redeem', 'post');
    expect(codesAt(o, '410')).toEqual(['gone']);
    expect(codesAt(o, '409')).toEqual(['conflict']);
    expect(o.security).toEqual([{ apiKey: ['grants:redeem'] }]);
  });

  it('audit: admins only; the document itself needs no credential', () => {
    expect(op('/audit/verify', 'get').security).toEqual([{ personalToken: ['admin'] }, { session: ['admin'] }]);
    const self = op('/openapi.json', 'get');
    expect(self.security).toEqual([]);
    expect(statuses(self)).toEqual(['200', '400']);
  });

  it('OTLP: protobuf or JSON in, 400 when it does not decode, 413 when too large, 429/503 with Retry-After', () => {
    const o = op('/otlp/v1/traces', 'post');
    expect(Object.keys(o.requestBody?.content ?? {}).sort()).toEqual(['application/json', 'application/x-protobuf']);
    expect(statuses(o)).toEqual(['200', '400', '401', '403', '413', '429', '503']);
    const limited = o.responses['429'] as { headers?: Record<string, unknown> };
    expect(Object.keys(limited.headers ?? {})).toEqual(['Retry-After']);
    expect(o.security).toEqual([{ apiKey: ['outcomes:write'] }]);
  });

  it('the three ways to authenticate', () => {
    const schemes = (doc.components as { securitySchemes: Record<string, Record<string, string>> }).securitySchemes;
    expect(schemes.apiKey).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'cs_live_…' });
    expect(schemes.personalToken).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'cs_pat_…' });
    expect(schemes.session).toMatchObject({ type: 'apiKey', in: 'cookie' });
  });
});
