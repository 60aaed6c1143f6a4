// The wrapper against a server of SDK v2 that serves both eras (testing/mcp-v2-server.ts) over
// Streamable HTTP: by default it negotiates 2026-07-28 (`auto`), and a pin or `legacy` picks the
// era. Expected classifications are written from docs/design.md's table, not from the classifier.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Client,
  PROTOCOL_VERSION_META_KEY,
  StreamableHTTPClientTransport,
  type ClientOptions,
  type VersionNegotiationMode,
} from '@modelcontextprotocol/client';
import { fakeCountersign } from '../../testing/fake-countersign';
import { classifyOutcome } from '../outcomes/classify';
import { startV2HttpServer, V2_SERVER_NAME, type V2HttpServer } from '../../testing/mcp-v2-server';
import { withCountersign, type GuardedCallResult } from './countersign-client';
import { observeToolCall, observingFetch, prepareSession } from './observe';

let server: V2HttpServer;
const clients: Client[] = [];
beforeAll(async () => {
  server = await startV2HttpServer();
});
afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await server.close();
});

function client(options: ClientOptions = {}) {
  const c = new Client({ name: 'modern-agent', version: '1.0.0' }, options);
  clients.push(c);
  const connect = () => c.connect(new StreamableHTTPClientTransport(new URL(server.url), { fetch: observingFetch() }));
  return { client: c, connect };
}

function wrap(versionNegotiation?: VersionNegotiationMode) {
  const { client: c, connect } = client();
  const countersign = fakeCountersign({ decide: () => 'approve', trustedServers: [V2_SERVER_NAME] });
  const agent = withCountersign(c, {
    url: 'http://countersign.test',
    apiKey: 'cs_live_fake',
    fetch: countersign.fetch,
    server: V2_SERVER_NAME,
    trustedServer: true,
    organization: 'acme',
    principal: 'user_193',
    connect,
    ...(versionNegotiation ? { versionNegotiation } : {}),
    reporterOptions: { flushIntervalMs: 10 },
    approval: { pollInitialMs: 5, pollMaxMs: 20, maxWaitMs: 5000 },
  });
  return { agent, countersign };
}

const verdict = (r: Pick<GuardedCallResult, 'classification'>) => {
  const { boundary, delivery, category, retry } = r.classification;
  return { boundary, delivery, category, retry };
};

describe('withCountersign against a 2026-07-28 server', () => {
  it.each([
    ['the default (auto)', undefined],
    ['pinned to 2026-07-28', { pin: '2026-07-28' }],
  ] as const)('%s: the call is recorded with resultType complete, ok', async (_, mode) => {
    const { agent, countersign } = wrap(mode);
    const r = await agent.callTool(
      { name: 'test_simple_text', arguments: {} },
      { requestRef: 'req_modern_ok', summary: 'Say something' },
    );
    expect(r.record.observed).toEqual({
      sent: true,
      httpStatus: 200,
      resultType: 'complete',
      result: { isError: false, outputValidation: 'not_declared' },
    });
    expect(r.record.protocolVersion).toBe('2026-07-28');
    // A grant first: the tool declares no readOnlyHint.
    expect(r.approval?.grantId).toEqual(expect.any(String));
    // design.md: a result without isError, nothing declared: none, completed, ok, no.
    expect(verdict(r)).toEqual({ boundary: 'none', delivery: 'completed', category: 'ok', retry: 'no' });
    await agent.flush();
    expect(countersign.outcomes.map((o) => o.observed.resultType)).toEqual(['complete']);
    await agent.close();
  });

  it('versionNegotiation legacy: the same server in its 2025 era, no resultType', async () => {
    const { agent } = wrap('legacy');
    const r = await agent.callTool(
      { name: 'test_simple_text', arguments: {} },
      { requestRef: 'req_legacy_ok', summary: 'Say something' },
    );
    expect(r.record.observed).toEqual({
      sent: true,
      httpStatus: 200,
      result: { isError: false, outputValidation: 'not_declared' },
    });
    expect(r.record.protocolVersion).not.toBe('2026-07-28');
    expect(r.record.sessionId).toEqual(expect.any(String));
    expect(verdict(r)).toEqual({ boundary: 'none', delivery: 'completed', category: 'ok', retry: 'no' });
    await agent.close();
  });
});

describe('observeToolCall against a 2026-07-28 server: what it refuses', () => {
  async function ready(options: ClientOptions = { versionNegotiation: { mode: 'auto' } }) {
    const { client: c, connect } = client(options);
    const session = await prepareSession(c, { connect });
    if (!session.ok) throw new Error('no session');
    return { client: c, catalog: session.catalog };
  }

  it('-32022, an unsupported protocol version: its code is recorded, refused at admission (HTTP 400)', async () => {
    const { client: c, catalog } = await ready();
    // The request's own envelope names a version the server does not speak (user _meta wins).
    const o = await observeToolCall(
      c,
      { name: 'test_simple_text', arguments: {}, _meta: { [PROTOCOL_VERSION_META_KEY]: '2099-01-01' } } as never,
      { catalog },
    );
    expect(o.observed).toEqual({ sent: true, httpStatus: 400, jsonRpcErrorCode: -32022 });
    // design.md, first match: "any other HTTP 4xx" (before the JSON-RPC row -32022 shares).
    expect(
      verdict({ classification: classifyOutcome({ observed: o.observed, serverTrusted: true, annotations: null }) }),
    ).toEqual({ boundary: 'admission', delivery: 'rejected', category: 'protocol_error', retry: 'no' });
  });

  it('input_required the client does not fulfil (autoFulfill off): resultType input_required, answer then retry', async () => {
    const { client: c, catalog } = await ready({
      versionNegotiation: { mode: 'auto' },
      capabilities: { elicitation: { form: {} } },
      inputRequired: { autoFulfill: false },
    });
    const o = await observeToolCall(c, { name: 'test_input_required_result_elicitation', arguments: {} }, { catalog });
    expect(o.observed).toEqual({ sent: true, httpStatus: 200, resultType: 'input_required' });
    // design.md: JSON-RPC -32042 or resultType input_required: protocol, rejected, input_required, after_input.
    expect(
      verdict({ classification: classifyOutcome({ observed: o.observed, serverTrusted: true, annotations: null }) }),
    ).toEqual({ boundary: 'protocol', delivery: 'rejected', category: 'input_required', retry: 'after_input' });
  });

  it('input_required answered by the application’s own handler: the SDK runs the round, the call completes', async () => {
    const { client: c, connect } = client({
      versionNegotiation: { mode: 'auto' },
      capabilities: { elicitation: { form: {} } },
    });
    c.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name: 'Ada' } }));
    const session = await prepareSession(c, { connect });
    if (!session.ok) throw new Error('no session');
    const o = await observeToolCall(
      c,
      { name: 'test_input_required_result_elicitation', arguments: {} },
      { catalog: session.catalog },
    );
    expect(o.observed).toMatchObject({
      sent: true,
      httpStatus: 200,
      resultType: 'complete',
      result: { isError: false },
    });
  });
});
