// A 2025 session of the HTTP gateway that nobody uses is ended (docs/gateway.md "Idle sessions"):
// its client's next request gets 404, as the 2025 spec says of a session the server ended, and
// the server behind saw its upstream session deleted. A session with requests, a call in flight
// (its stream open or broken) or a GET stream open is kept however long that lasts. The server
// behind is the SDK v2 test server, with a tool that waits to be released.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { closedAfterEach, consoleActors, type ConsoleActors } from '@/testing/gateway-fixtures';
import { releaseGateway } from '@/testing/release-gateway';
import { ACCEPT, rawSession, rpc } from '@/testing/raw-mcp-session';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

let actors: ConsoleActors;
beforeAll(async () => {
  actors = await consoleActors();
});
const open = closedAfterEach();

const IDLE_MS = 400;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(20)) if (check()) return true;
  return check();
}

async function setUp(idleMs = IDLE_MS) {
  const lines: string[] = [];
  const { url, upstream, release } = await releaseGateway(actors, open, 'idle', {
    sessionIdleMs: idleMs,
    log: (line) => void lines.push(line),
  });
  /** Sessions the gateway said it ended, all sweeps together. */
  const ended = () =>
    lines.reduce((n, line) => n + Number(/^ended (\d+) idle 2025 sessions?$/.exec(line)?.[1] ?? 0), 0);
  // Upstream sessions of the clients' own: the gateway's shared one, opened when it first asked
  // the server its era, is not one of them.
  const behind = () => upstream.sessions() - 1;
  return { url, upstream, behind, release, ended };
}

const headersOf = (sessionId: string) => ({
  accept: ACCEPT,
  'content-type': 'application/json',
  'mcp-protocol-version': '2025-11-25',
  'mcp-session-id': sessionId,
});

/** A request of the session: its HTTP status (the body read). */
async function ping(url: string, sessionId: string, id = 9): Promise<number> {
  const res = await fetch(url, { method: 'POST', headers: headersOf(sessionId), body: rpc(id, 'ping') });
  await res.text();
  return res.status;
}

describe('gateway, Streamable HTTP: a 2025 session left idle', () => {
  it('is ended: its next request gets 404, the server saw its session deleted, the client starts anew', async () => {
    const { url, behind, ended } = await setUp();
    const client = new Client({ name: 'idle-client', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } });
    const transport = new StreamableHTTPClientTransport(new URL(url));
    await client.connect(transport);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('wait_for_release');
    const sessionId = transport.sessionId!;
    expect(sessionId).toBeTruthy();
    expect(behind()).toBe(1);

    // The client crashes: its GET stream goes, no DELETE is sent.
    await client.close();
    expect(await until(() => ended() === 1 && behind() === 0, IDLE_MS * 6)).toBe(true);
    const res = await fetch(url, { method: 'POST', headers: headersOf(sessionId), body: rpc(5, 'tools/list') });
    expect(res.status).toBe(404);
    await res.body?.cancel();

    const again = new Client({ name: 'idle-client', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } });
    open.push(() => again.close());
    await again.connect(new StreamableHTTPClientTransport(new URL(url)));
    expect((await again.listTools()).tools.map((t) => t.name)).toContain('wait_for_release');
    expect(behind()).toBe(1);
  });

  it("a client's DELETE ends its upstream session too", async () => {
    const { url, behind } = await setUp(60_000);
    const session = await rawSession(url, 'unused');
    expect(behind()).toBe(1);
    const res = await fetch(url, { method: 'DELETE', headers: headersOf(session.sessionId) });
    expect(res.status).toBe(200);
    expect(behind()).toBe(0);
    expect(await ping(url, session.sessionId)).toBe(404);
  });

  it('a session in use is kept, and ended once its requests stop', async () => {
    const { url, behind, ended } = await setUp();
    const session = await rawSession(url, 'unused');
    for (let i = 0; i < 15; i++) {
      await sleep(IDLE_MS / 4);
      expect(await ping(url, session.sessionId, i)).toBe(200);
    }
    expect(ended()).toBe(0);
    expect(behind()).toBe(1);
    expect(await until(() => ended() === 1 && behind() === 0, IDLE_MS * 6)).toBe(true);
    expect(await ping(url, session.sessionId)).toBe(404);
  });

  it('a session with a GET stream open is kept while it is open', async () => {
    const { url, behind, ended } = await setUp();
    const session = await rawSession(url, 'unused');
    const away = new AbortController();
    // Not awaited: the head of a stream on which nothing is sent comes late.
    const stream = fetch(url, {
      method: 'GET',
      headers: { ...headersOf(session.sessionId), accept: 'text/event-stream' },
      signal: away.signal,
    }).catch(() => null);
    open.push(async () => away.abort());
    await sleep(IDLE_MS * 4);
    expect(ended()).toBe(0);
    expect(behind()).toBe(1);
    away.abort();
    await stream;
    expect(await until(() => ended() === 1 && behind() === 0, IDLE_MS * 6)).toBe(true);
  });

  it('a session whose call outlives the idle time is kept, its answer delivered', async () => {
    const { url, behind, release, ended } = await setUp();
    const session = await rawSession(url, 'unused');
    const call = fetch(url, {
      method: 'POST',
      headers: headersOf(session.sessionId),
      body: rpc(2, 'tools/call', { name: 'wait_for_release', arguments: {} }),
    });
    await sleep(IDLE_MS * 4);
    expect(ended()).toBe(0);
    release();
    const answer = await (await call).text();
    expect(answer).toContain('"text":"released"');
    expect(behind()).toBe(1);
    expect(await ping(url, session.sessionId)).toBe(200);
  });

  it('a session whose call goes on after its stream broke is kept; the client resumes and gets the answer', async () => {
    const { url, release, ended } = await setUp();
    const session = await rawSession(url, 'unused');
    const away = new AbortController();
    const call = await fetch(url, {
      method: 'POST',
      headers: headersOf(session.sessionId),
      body: rpc(2, 'tools/call', { name: 'wait_for_release', arguments: {}, _meta: { progressToken: 'p' } }),
      signal: away.signal,
    });
    expect(call.status).toBe(200);
    // The id of an event seen (the priming one), to come back with.
    const reader = call.body!.getReader();
    let text = '';
    while (!/^id: (.+)$/m.test(text)) text += new TextDecoder().decode((await reader.read()).value);
    const lastId = /^id: (.+)$/m.exec(text)![1];
    away.abort();
    await sleep(IDLE_MS * 4);
    expect(ended()).toBe(0);
    release();
    let resumed: Response | undefined;
    for (let tries = 0; tries < 100; tries++) {
      resumed = await fetch(url, {
        method: 'GET',
        headers: { ...headersOf(session.sessionId), accept: 'text/event-stream', 'last-event-id': lastId },
      });
      if (resumed.status !== 409) break;
      await resumed.body?.cancel();
      await sleep(20);
    }
    expect(resumed!.status).toBe(200);
    expect(await resumed!.text()).toContain('"text":"released"');
  });

  it('a session whose call was cancelled by its client is idle again (a cancelled request gets no answer)', async () => {
    const { url, behind, ended } = await setUp();
    const session = await rawSession(url, 'unused');
    const away = new AbortController();
    const call = fetch(url, {
      method: 'POST',
      headers: headersOf(session.sessionId),
      body: rpc(2, 'tools/call', { name: 'wait_for_release', arguments: {}, _meta: { progressToken: 'p' } }),
      signal: away.signal,
    }).catch(() => null);
    open.push(async () => away.abort());
    await sleep(IDLE_MS * 2);
    expect(ended()).toBe(0);
    const cancelled = await session.post(
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2 } }),
    );
    expect(cancelled.status).toBe(202);
    expect(await until(() => ended() === 1 && behind() === 0, IDLE_MS * 6)).toBe(true);
    away.abort();
    await call;
  });

  it('thousands of sessions opened and abandoned are all ended, upstream too', async () => {
    // Idle time long enough for a loaded machine to send each session's second request in time.
    const { url, behind, ended } = await setUp(3000);
    const COUNT = 2000;
    const ids: string[] = [];
    const openOne = async () => void ids.push((await rawSession(url, 'unused')).sessionId);
    // The first alone: the gateway asks the server its era once (concurrent first asks would each
    // open a shared session of the gateway's own, which are not the clients').
    await openOne();
    let left = COUNT - 1;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (left-- > 0) await openOne();
      }),
    );
    expect(ids).toHaveLength(COUNT);
    expect(new Set(ids).size).toBe(COUNT);
    expect(await until(() => ended() === COUNT && behind() === 0, 60_000)).toBe(true);
    for (const id of ids.slice(0, 20)) expect(await ping(url, id)).toBe(404);
  }, 120_000);
});
