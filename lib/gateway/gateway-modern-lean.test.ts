// The lean path of the 2026-07-28 leg (modern-lean.ts) answers as SDK v2's path does: each case of
// the table (testing/lean-cases.ts) is sent as the same raw HTTP request to two gateways in front of
// one server, one with the lean path and one without (`modernLean: false`), and both answers must
// be the one the table writes down, and the same, with the same record; the server gets the call as
// often as the table says, from either (never twice), and under the lean path's own id where the
// table says the lean path serves it. gateway-lean-session.test.ts does the same inside 2025 sessions.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { closedAfterEach, consoleActors, type ConsoleActors } from '@/testing/gateway-fixtures';
import { answerOf, casesOf, leanGateways, expectCancelled, expectSameCalls, type Sent } from '@/testing/lean-cases';

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

/** The gateways, each having learnt the server's era for both credentials and listed its catalog. */
const gateways = () =>
  leanGateways(actors, open, async (url) => {
    for (const token of ['good', 'lapsed']) await list(url, token);
    return {};
  });

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

describe('the lean path of a 2026-07-28 tools/call', () => {
  it.each(casesOf('2026'))('$name: answered as the SDK path answers it', async (c) => {
    const both = await gateways();
    const { lean, sdk } = both;
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
    await expectSameCalls(c, both, refs);
  });

  it('a call its client cancels while the server runs it: the cancel reaches the server, and the same record', async () => {
    const both = await gateways();
    const { up, lean, sdk } = both;
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
    await expectCancelled(both, refs);
  }, 30_000);
});
