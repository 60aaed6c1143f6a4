// POST /api/v1/otlp/v1/traces at its edges: spans missing what a record needs (counted and named
// in partialSuccess), tool arguments and results that must never reach the database, bodies that
// are not OTLP, huge and compressed bodies, and credentials that may not write.
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cli } from '@/lib/auth/actor';
import { createApiKey } from '@/lib/server/credentials/credentials';
import { uniq } from '@/testing/factories';
import { expectProblem, type Reply } from '@/testing/api-harness';
import {
  deserialize,
  makeSpans,
  outcomeRowsContaining,
  serialize,
  startOtlpConsole,
  storedOtelRecords,
  type Console,
} from '@/testing/otlp';
import type { Attributes } from '@opentelemetry/api';
import { SpanKind } from '@opentelemetry/api';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

let console_: Console;
const keys = { write: '', read: '', org: '' };
beforeAll(async () => {
  console_ = await startOtlpConsole();
  for (const [name, scopes, organization] of [
    ['write', ['outcomes:write'], undefined],
    ['read', ['outcomes:read'], undefined],
    ['org', ['outcomes:write'], 'acme'],
  ] as const) {
    const created = await createApiKey(cli, { name: uniq('otlp'), scopes: [...scopes], organization });
    if (!created.ok) throw new Error('set-up: API key');
    keys[name] = created.value.secret;
  }
});
afterAll(() => console_.close());

async function post(
  body: BodyInit,
  headers: Record<string, string>,
  token = keys.write,
): Promise<Reply & { bytes: Uint8Array }> {
  const res = await fetch(`${console_.origin}/api/v1/otlp/v1/traces`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, ...headers },
    body,
  });
  const bytes = new Uint8Array(await res.arrayBuffer());
  const text = new TextDecoder().decode(bytes);
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // protobuf
  }
  return { status: res.status, headers: res.headers, text, json, bytes };
}
const PROTO = { 'content-type': 'application/x-protobuf' };

const span = (ref: string, over: Attributes = {}, drop: string[] = []): Attributes => {
  const a: Attributes = {
    'mcp.method.name': 'tools/call',
    'gen_ai.tool.name': 'refund_payment',
    'countersign.request_ref': ref,
    'countersign.principal': 'user_193',
    'countersign.organization': 'acme',
    'countersign.server': 'otel-billing-mcp',
    ...over,
  };
  for (const k of drop) delete a[k];
  return a;
};

describe('rejected spans are counted and named; the rest is stored', () => {
  it('missing required attributes, non-MCP spans skipped', async () => {
    const ref = uniq('otel-missing');
    const spans = makeSpans([
      { attributes: span(`${ref}-ok`) },
      { attributes: span(`${ref}-a`, {}, ['countersign.principal']) },
      { attributes: span(`${ref}-b`, {}, ['countersign.principal']) },
      { attributes: span(`${ref}-c`, {}, ['gen_ai.tool.name', 'countersign.organization']) },
      { attributes: span(`${ref}-d`, {}, ['countersign.server']) }, // no server.address either
      { attributes: span(`${ref}-e`, { 'countersign.args_digest': 'sha256:nothex' }) },
      { attributes: span(`${ref}-skip`, { 'mcp.method.name': 'tools/list' }) },
      { attributes: span(`${ref}-server`), kind: SpanKind.SERVER },
    ]);
    const r = await post(serialize(spans), PROTO);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/x-protobuf');
    const { partialSuccess } = deserialize(r.bytes);
    expect(partialSuccess?.rejectedSpans).toBe(5);
    const message = partialSuccess?.errorMessage ?? '';
    expect(message).toContain('5 spans rejected');
    expect(message).toContain('missing required attribute countersign.principal (2 spans');
    expect(message).toContain('missing required attributes countersign.organization, gen_ai.tool.name (1 span');
    expect(message).toContain('missing required attribute countersign.server (or server.address)');
    expect(message).toContain('countersign.args_digest: must be "sha256:" followed by 64 lowercase hex digits');
    expect(message).toContain('2 spans skipped');
    expect((await storedOtelRecords(ref)).map((s) => s.request_ref)).toEqual([`${ref}-ok`]);
  });

  it('server.address stands in for countersign.server', async () => {
    const ref = uniq('otel-address');
    const spans = makeSpans([
      { attributes: span(ref, { 'server.address': 'billing.example.test' }, ['countersign.server']) },
    ]);
    const r = await post(serialize(spans), PROTO);
    expect(deserialize(r.bytes).partialSuccess?.rejectedSpans ?? 0).toBe(0);
    expect((await storedOtelRecords(ref)).map((s) => s.server)).toEqual(['billing.example.test']);
  });

  it('false and 0 are values, not absences', async () => {
    const ref = uniq('otel-false');
    const attrs = {
      'countersign.tool.read_only_hint': false,
      'countersign.tool.open_world_hint': false,
      'jsonrpc.request.id': 0,
    };
    const r = await post(serialize(makeSpans([{ attributes: span(ref, attrs) }])), PROTO);
    expect(deserialize(r.bytes).partialSuccess?.rejectedSpans ?? 0).toBe(0);
    const [stored] = await storedOtelRecords(ref);
    expect(JSON.parse(stored.whole)).toMatchObject({
      tool_annotations: { readOnlyHint: false, openWorldHint: false },
      mcp_request_id: 0,
    });
  });

  it('a key limited to one organization: spans of another are rejected, naming the attribute', async () => {
    const ref = uniq('otel-org');
    const spans = makeSpans([
      { attributes: span(`${ref}-1`) },
      { attributes: span(`${ref}-2`, { 'countersign.organization': 'globex' }) },
    ]);
    const r = await post(serialize(spans), PROTO, keys.org);
    const { partialSuccess } = deserialize(r.bytes);
    expect(partialSuccess?.rejectedSpans).toBe(1);
    expect(partialSuccess?.errorMessage).toContain('countersign.organization: this API key may only write');
    expect((await storedOtelRecords(ref)).map((s) => s.request_ref)).toEqual([`${ref}-1`]);
  });

  it('answers JSON in JSON', async () => {
    const r = await post(JSON.stringify({ resourceSpans: [] }), { 'content-type': 'application/json' });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.json).toEqual({ partialSuccess: {} });
  });
});

it('gen_ai.tool.call.arguments and .result never reach the database', async () => {
  const ref = uniq('otel-args');
  const marker = `secret-${uniq('arg')}`;
  const spans = makeSpans([
    {
      attributes: span(ref, {
        'gen_ai.tool.call.arguments': JSON.stringify({ card: '4111111111111111', note: marker }),
        'gen_ai.tool.call.result': `{"content":"${marker}"}`,
      }),
    },
  ]);
  const r = await post(serialize(spans), PROTO);
  expect(deserialize(r.bytes).partialSuccess?.rejectedSpans ?? 0).toBe(0);
  expect(await storedOtelRecords(ref)).toHaveLength(1);
  expect(await outcomeRowsContaining(marker)).toBe(0);
  expect(await outcomeRowsContaining('4111111111111111')).toBe(0);
});

describe('bodies that are not OTLP: 400', () => {
  const cases: [string, BodyInit, Record<string, string>][] = [
    ['truncated protobuf', new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01]), PROTO],
    ['a protobuf field of the wrong shape', new Uint8Array([0x0a, 0x02, 0x0a, 0x05]), PROTO],
    ['not JSON', '{"resourceSpans": [', { 'content-type': 'application/json' }],
    ['a JSON array', '[1, 2]', { 'content-type': 'application/json' }],
    ['resourceSpans not a list', '{"resourceSpans": 5}', { 'content-type': 'application/json' }],
    [
      'a span id that is not a string',
      '{"resourceSpans":[{"scopeSpans":[{"spans":[{"spanId":7}]}]}]}',
      { 'content-type': 'application/json' },
    ],
    ['JSON that is not UTF-8', new Uint8Array([0x7b, 0xff, 0x7d]), { 'content-type': 'application/json' }],
    ['another content type', 'hello', { 'content-type': 'text/plain' }],
    ['gzip that is not gzip', 'hello', { ...PROTO, 'content-encoding': 'gzip' }],
    ['an unsupported encoding', 'hello', { ...PROTO, 'content-encoding': 'br' }],
  ];
  it.each(cases)('%s', async (_name, body, headers) => {
    const r = await post(body, headers);
    expectProblem(r, [400]);
  });
});

describe('size', () => {
  it('10 MB: 413', async () => {
    const r = await post(new Uint8Array(10 * 1024 * 1024), PROTO);
    expectProblem(r, [413]);
  });
  it('a small gzip body that decompresses past 1 MiB: 413', async () => {
    const bomb = gzipSync(new Uint8Array(10 * 1024 * 1024));
    expect(bomb.byteLength).toBeLessThan(1024 * 1024);
    const r = await post(new Uint8Array(bomb), { ...PROTO, 'content-encoding': 'gzip' });
    expectProblem(r, [413]);
    expect(r.json.detail).toContain('once decompressed');
  });
  it('gzip within the limit is stored', async () => {
    const ref = uniq('otel-gz');
    const body = gzipSync(serialize(makeSpans([{ attributes: span(ref) }])));
    const r = await post(new Uint8Array(body), { ...PROTO, 'content-encoding': 'gzip' });
    expect(r.status).toBe(200);
    expect(await storedOtelRecords(ref)).toHaveLength(1);
  });
});

describe('credentials', () => {
  const body = () => serialize(makeSpans([{ attributes: span(uniq('otel-cred')) }]));
  it('a key without outcomes:write: 403', async () => {
    expectProblem(await post(body(), PROTO, keys.read), [403]);
  });
  it('no valid key: 401', async () => {
    expectProblem(await post(body(), PROTO, 'cs_live_nope'), [401]);
  });
});
