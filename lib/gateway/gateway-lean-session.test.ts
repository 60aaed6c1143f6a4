// The lean path inside a 2025 session (modern-lean.ts `inSession`) answers as SDK v2's path does:
// each case of the table (testing/lean-cases.ts) is sent, as a raw POST inside a session the client
// opened with `initialize`, to two gateways in front of one server, one with the lean path and one
// without (`modernLean: false`). Both answers must be the one the table writes down, and the same
// (an SSE stream with the session's id, as SDK v2's session transport answers a POST), with the
// same record; the server gets the call as often as the table says, on the client's own upstream
// session, never twice, under the lean path's own id where the table says it serves it. The server
// answers a session's call in each way the lean path takes as one answer: an SSE stream of one
// event, the same after a priming event, or a JSON body.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { closedAfterEach, consoleActors, type ConsoleActors } from '@/testing/gateway-fixtures';
import {
  answerOf,
  casesOf,
  leanGateways,
  expectCancelled,
  expectSameCalls,
  type SessionAnswers,
  type Sent,
} from '@/testing/lean-cases';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

let actors: ConsoleActors;
beforeAll(async () => {
  actors = await consoleActors();
});
const open = closedAfterEach();

const VERSION = '2025-11-25';

/** A client's 2025 session through a gateway, opened with `Bearer good`, its catalog listed. */
async function session(url: string) {
  let id: string | null = null;
  const post = (body: unknown, over: Record<string, string | undefined> = {}, signal?: AbortSignal) => {
    const all: Record<string, string | undefined> = {
      authorization: 'Bearer good',
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': VERSION,
      ...(id ? { 'mcp-session-id': id } : {}),
      ...over,
    };
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(all)) if (v !== undefined) headers[k] = v;
    return fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal });
  };
  const init = await post({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'lean-test', version: '1.0.0' } },
  });
  expect(init.status).toBe(200);
  await init.text();
  id = init.headers.get('mcp-session-id');
  expect(id).toBeTruthy();
  expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);
  const list = await post({ jsonrpc: '2.0', id: 'list-1', method: 'tools/list' });
  expect(list.status).toBe(200);
  await list.text();
  return {
    /** The session's id, towards this client. */
    id: id!,
    post,
    /** A `tools/call` as SDK v2's client sends it in the session; its answer, what varies per run masked. */
    async call(ref: string, c: Sent, signal?: AbortSignal) {
      const params = { name: c.name, arguments: c.arguments ?? {}, _meta: { 'countersign/requestRef': ref } };
      const res = await post(
        { jsonrpc: '2.0', id: 'call-1', method: 'tools/call', params },
        { authorization: `Bearer ${c.token ?? 'good'}`, ...c.headers },
        signal,
      );
      return { ...(await answerOf(res)), session: res.headers.get('mcp-session-id') };
    },
    cancel: (requestId: string) =>
      post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'changed my mind' } }),
  };
}

const gateways = (answers: SessionAnswers) => leanGateways(actors, open, session, answers);

describe.each(['sse', 'primed', 'json'] as const)('the lean path of a 2025 tools/call in a session (%s)', (answers) => {
  it.each(casesOf('2025'))('$name: answered as the SDK path answers it', async (c) => {
    const both = await gateways(answers);
    const { lean, sdk } = both;
    const got = [];
    const refs = [];
    for (const g of [lean, sdk]) {
      const ref = `ref-${randomUUID()}`;
      refs.push(ref);
      const answer = await g.call(ref, c.sent);
      expect(answer.status).toBe(c.status);
      expect(answer.challenge).toBe(c.challenge ?? null);
      expect(answer.messages.slice(-1)).toEqual(c.answer(ref, '2025'));
      if (answer.status === 200) expect(answer).toMatchObject({ type: 'text/event-stream', session: g.id });
      got.push({
        ...answer,
        session: undefined,
        messages: JSON.parse(JSON.stringify(answer.messages).replaceAll(ref, 'REF')),
      });
    }
    expect(got[0]).toEqual(got[1]);
    const leanCalls = await expectSameCalls(c, both, refs);
    // On the client's own upstream session, in the version it negotiated.
    if (c.upstream) expect(leanCalls[0].headers['mcp-protocol-version']).toBe(VERSION);
  });
});

describe('a lean call in a 2025 session, cancelled', () => {
  // `mutters` says something first: the lean path hands it to the SDK's path, whose cancel must name the lean path's id.
  it.each(['hangs', 'mutters'])(
    '%s, by its client’s notifications/cancelled while the server runs it: the cancel reaches the server, and the same record',
    async (tool) => {
      const both = await gateways('sse');
      const { up, lean, sdk } = both;
      const refs: string[] = [];
      for (const g of [lean, sdk]) {
        const ref = `ref-${randomUUID()}`;
        refs.push(ref);
        const gone = new AbortController();
        const answer = g.call(ref, { name: tool }, gone.signal).catch(() => null);
        const running = up.hung.length + 1;
        await vi.waitFor(() => expect(up.hung).toHaveLength(running), { timeout: 5000, interval: 20 });
        expect((await g.cancel('call-1')).status).toBe(202);
        await vi.waitFor(() => expect(up.hung.at(-1)).toBe('cancelled'), { timeout: 5000, interval: 20 });
        // The SDK's path never ends the request's stream: the client, who gave up, closes it.
        gone.abort();
        await answer;
      }
      await expectCancelled(both, refs, tool);
    },
    30_000,
  );
});

describe('a lean answer in a 2025 session, resumed', () => {
  it('is in the session’s event store: a GET with its priming event’s id gets it again, as the SDK path’s', async () => {
    const { up, lean, sdk } = await gateways('sse');
    for (const g of [lean, sdk]) {
      const call = { name: 'echo', arguments: { text: 'hi' } };
      const res = await g.post({ jsonrpc: '2.0', id: 'call-1', method: 'tools/call', params: call });
      const text = await res.text();
      // docs/gateway.md "Resuming a stream": a priming event first (an id, empty data, retry 1000).
      const priming = /^id: ([^\n]+)\nretry: 1000\ndata: \n\n/.exec(text)?.[1];
      expect(priming).toBeDefined();
      const again = await fetch(g.url, {
        method: 'GET',
        headers: {
          accept: 'text/event-stream',
          authorization: 'Bearer good',
          'mcp-session-id': g.id,
          'mcp-protocol-version': VERSION,
          'last-event-id': priming!,
        },
      });
      expect(again.status).toBe(200);
      expect((await answerOf(again)).messages).toEqual([
        {
          jsonrpc: '2.0',
          id: 'call-1',
          result: expect.objectContaining({ content: [{ type: 'text', text: 'said hi' }] }),
        },
      ]);
    }
    expect(up.calls.map((c) => typeof c.id === 'string' && c.id.startsWith('gw-lean-'))).toEqual([true, false]);
  });
});
