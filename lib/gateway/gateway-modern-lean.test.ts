// The lean path of the 2026-07-28 leg (modern-lean.ts) answers as SDK v2's path does: each case of
// the table (testing/lean-cases.ts) is sent as the same raw HTTP request to two gateways in front of
// one server, one with the lean path and one without (`modernLean: false`), and both answers must
// be the one the table writes down, and the same, with the same record; the server gets the call as
// often as the table says, from either (never twice), and under the lean path's own id where the
// table says the lean path serves it. gateway-lean-session.test.ts does the same inside 2025 sessions.
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
import { answerOf, casesOf, leanUpstream, seen, type Sent } from '@/testing/lean-cases';
import { runHttp } from './http';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

let actors: ConsoleActors;
beforeAll(async () => {
  actors = await consoleActors();
});
const open = closedAfterEach();

/** A 2026-07-28 `tools/call` as SDK v2's client sends it; its answer, what varies per run masked. */
async function send(url: string, ref: string, c: Sent, signal?: AbortSignal) {
  const body = {
    jsonrpc: '2.0',
    id: 'call-1',
    method: 'tools/call',
    params: {
      name: c.name,
      arguments: c.arguments ?? {},
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'lean-test', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': c.capabilities ?? {},
        'countersign/requestRef': ref,
      },
    },
  };
  const headers: Record<string, string> = {};
  const all: Record<string, string | undefined> = {
    authorization: `Bearer ${c.token ?? 'good'}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'tools/call',
    'mcp-name': c.name,
    ...c.headers,
  };
  for (const [k, v] of Object.entries(all)) if (v !== undefined) headers[k] = v;
  return answerOf(await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal }));
}

async function gateways() {
  const server = uniq('lean');
  await trustServer(cli, server);
  await setPolicyRule(cli, { server, tool: null, requiredApprovals: 0 });
  await setPolicyRule(cli, { server, tool: 'blocked_tool', requiredApprovals: 'blocked' });
  const up = await leanUpstream();
  open.push(up.close);
  const start = async (modernLean: boolean) => {
    const t = testContext(actors, server, { modernLean });
    const g = await runHttp(t.ctx, new URL(up.url), '127.0.0.1', 0);
    open.push(async () => {
      await g.close();
      await t.ctx.reporter.close(2000);
    });
    // The server's era learnt for both credentials, and its catalog listed: what the lean path needs.
    for (const token of ['good', 'lapsed']) await list(g.url, token);
    return { url: g.url, ctx: t.ctx };
  };
  return { up, lean: await start(true), sdk: await start(false) };
}

async function list(url: string, token: string) {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/list',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 'list-1',
      method: 'tools/list',
      params: {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'lean-test', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  });
  expect(res.status).toBe(200);
  await res.text();
}

const masked = (rows: Awaited<ReturnType<typeof recordDetailsOf>>) => rows.map((r) => ({ ...r, eventId: '*' }));

describe('the lean path of a 2026-07-28 tools/call', () => {
  it.each(casesOf('2026'))('$name: answered as the SDK path answers it', async (c) => {
    const { up, lean, sdk } = await gateways();
    const answers = [];
    const refs = [];
    for (const g of [lean, sdk]) {
      const ref = `ref-${randomUUID()}`;
      refs.push(ref);
      const answer = await send(g.url, ref, c.sent);
      expect(answer.status).toBe(c.status);
      expect(answer.challenge).toBe(c.challenge ?? null);
      expect(answer.messages.slice(-1)).toEqual(c.answer(ref, '2026'));
      answers.push({ ...answer, messages: JSON.parse(JSON.stringify(answer.messages).replaceAll(ref, 'REF')) });
    }
    expect(answers[0]).toEqual(answers[1]);
    const [leanCalls, sdkCalls] = refs.map((ref) => up.calls.filter((s) => s.ref === ref));
    expect(leanCalls).toHaveLength(c.upstream);
    expect(sdkCalls).toHaveLength(c.upstream);
    // The lean path's own id upstream: it served the call; the SDK client numbers its requests.
    const leanServed = leanCalls.some((s) => typeof s.id === 'string' && s.id.startsWith('gw-lean-'));
    if (c.upstream) expect(leanServed).toBe(c.lean);
    expect(sdkCalls.every((s) => typeof s.id === 'number')).toBe(true);
    // What the server got is the same, but for the id and the call's request reference.
    expect(seen(leanCalls, refs[0])).toEqual(seen(sdkCalls, refs[1]));
    // The same record, if any.
    await lean.ctx.reporter.flush();
    await sdk.ctx.reporter.flush();
    const [leanRecords, sdkRecords] = await Promise.all(refs.map((ref) => recordDetailsOf(ref)));
    expect(masked(leanRecords)).toEqual(masked(sdkRecords));
  });

  it('a call its client cancels while the server runs it: the cancel reaches the server, and the same record', async () => {
    const { up, lean, sdk } = await gateways();
    const refs: string[] = [];
    for (const g of [lean, sdk]) {
      const ref = `ref-${randomUUID()}`;
      refs.push(ref);
      const cancel = new AbortController();
      const answer = send(g.url, ref, { name: 'hangs' }, cancel.signal);
      const running = up.hung.length + 1;
      await vi.waitFor(() => expect(up.hung).toHaveLength(running), { timeout: 5000, interval: 20 });
      cancel.abort();
      await expect(answer).rejects.toThrow();
      await vi.waitFor(() => expect(up.hung.at(-1)).toBe('cancelled'), { timeout: 5000, interval: 20 });
    }
    expect(up.calls.find((s) => s.ref === refs[0])?.id).toMatch(/^gw-lean-/);
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
