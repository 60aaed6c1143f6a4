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
import { cli } from '@/lib/auth/actor';
import { setPolicyRule } from '@/lib/server/policy/policy-rules';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { uniq } from '@/testing/factories';
import {
  closedAfterEach,
  consoleActors,
  recordDetailsOf,
  testContext,
  type ConsoleActors,
} from '@/testing/gateway-fixtures';
import { answerOf, casesOf, leanUpstream, seen, type SessionAnswers, type Sent } from '@/testing/lean-cases';
import { runHttp } from './http';

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
    id: id!,
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

async function gateways(answers: SessionAnswers) {
  const server = uniq('lean25');
  await trustServer(cli, server);
  await setPolicyRule(cli, { server, tool: null, requiredApprovals: 0 });
  await setPolicyRule(cli, { server, tool: 'blocked_tool', requiredApprovals: 'blocked' });
  const up = await leanUpstream(answers);
  open.push(up.close);
  const start = async (modernLean: boolean) => {
    const t = testContext(actors, server, { modernLean });
    const g = await runHttp(t.ctx, new URL(up.url), '127.0.0.1', 0);
    open.push(async () => {
      await g.close();
      await t.ctx.reporter.close(2000);
    });
    return { session: await session(g.url), ctx: t.ctx };
  };
  return { up, lean: await start(true), sdk: await start(false) };
}

const masked = (rows: Awaited<ReturnType<typeof recordDetailsOf>>) => rows.map((r) => ({ ...r, eventId: '*' }));

describe.each(['sse', 'primed', 'json'] as const)('the lean path of a 2025 tools/call in a session (%s)', (answers) => {
  it.each(casesOf('2025'))('$name: answered as the SDK path answers it', async (c) => {
    const { up, lean, sdk } = await gateways(answers);
    const got = [];
    const refs = [];
    for (const g of [lean, sdk]) {
      const ref = `ref-${randomUUID()}`;
      refs.push(ref);
      const answer = await g.session.call(ref, c.sent);
      expect(answer.status).toBe(c.status);
      expect(answer.challenge).toBe(c.challenge ?? null);
      expect(answer.messages.slice(-1)).toEqual(c.answer(ref, '2025'));
      if (answer.status === 200) expect(answer).toMatchObject({ type: 'text/event-stream', session: g.session.id });
      got.push({
        ...answer,
        session: undefined,
        messages: JSON.parse(JSON.stringify(answer.messages).replaceAll(ref, 'REF')),
      });
    }
    expect(got[0]).toEqual(got[1]);
    const [leanCalls, sdkCalls] = refs.map((ref) => up.calls.filter((s) => s.ref === ref));
    expect(leanCalls).toHaveLength(c.upstream);
    expect(sdkCalls).toHaveLength(c.upstream);
    const leanServed = leanCalls.some((s) => typeof s.id === 'string' && s.id.startsWith('gw-lean-'));
    if (c.upstream) expect(leanServed).toBe(c.lean);
    expect(sdkCalls.every((s) => typeof s.id === 'number')).toBe(true);
    // What the server got is the same (its session's protocol version included), but for the id and the reference.
    expect(seen(leanCalls, refs[0])).toEqual(seen(sdkCalls, refs[1]));
    if (c.upstream) expect(leanCalls[0].headers['mcp-protocol-version']).toBe(VERSION);
    await lean.ctx.reporter.flush();
    await sdk.ctx.reporter.flush();
    const [leanRecords, sdkRecords] = await Promise.all(refs.map((ref) => recordDetailsOf(ref)));
    expect(masked(leanRecords)).toEqual(masked(sdkRecords));
  });
});

describe('a lean call in a 2025 session, cancelled', () => {
  it('by its client’s notifications/cancelled while the server runs it: the cancel reaches the server, and the same record', async () => {
    const { up, lean, sdk } = await gateways('sse');
    const refs: string[] = [];
    for (const g of [lean, sdk]) {
      const ref = `ref-${randomUUID()}`;
      refs.push(ref);
      const gone = new AbortController();
      const answer = g.session.call(ref, { name: 'hangs' }, gone.signal).catch(() => null);
      const running = up.hung.length + 1;
      await vi.waitFor(() => expect(up.hung).toHaveLength(running), { timeout: 5000, interval: 20 });
      expect((await g.session.cancel('call-1')).status).toBe(202);
      await vi.waitFor(() => expect(up.hung.at(-1)).toBe('cancelled'), { timeout: 5000, interval: 20 });
      // The SDK's path never ends the request's stream: the client, who gave up, closes it.
      gone.abort();
      await answer;
    }
    expect(up.calls.find((s) => s.ref === refs[0])?.id).toMatch(/^gw-lean-/);
    expect(up.calls.filter((s) => refs.includes(s.ref as string))).toHaveLength(2);
    await lean.ctx.reporter.flush();
    await sdk.ctx.reporter.flush();
    const read = async (ref: string) => {
      await vi.waitFor(async () => expect(await recordDetailsOf(ref)).toHaveLength(1), { timeout: 5000, interval: 50 });
      return masked(await recordDetailsOf(ref));
    };
    const [leanRecords, sdkRecords] = [await read(refs[0]), await read(refs[1])];
    // docs/gateway.md "Cancellation": recorded cancelled, its outcome unknown.
    expect(leanRecords).toMatchObject([{ toolName: 'hangs', category: 'cancelled' }]);
    expect(leanRecords).toEqual(sdkRecords);
  }, 30_000);
});
