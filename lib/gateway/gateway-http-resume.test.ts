// A 2025 client resumes its call's SSE stream through the gateway (Streamable HTTP, 127.0.0.1)
// after losing it: it reconnects with Last-Event-ID and gets what the gateway sent while it was
// away (docs/gateway.md "Resuming a stream"). The server behind is the SDK v2 test server, with a
// tool that reports progress, waits to be released, then reports again and answers.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { closedAfterEach, consoleActors, type ConsoleActors } from '@/testing/gateway-fixtures';
import { releaseGateway } from '@/testing/release-gateway';
import { ACCEPT, rawSession, rpc } from '@/testing/raw-mcp-session';
import { RECONNECT_MS } from './event-store';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

let actors: ConsoleActors;
beforeAll(async () => {
  actors = await consoleActors();
});
const open = closedAfterEach();

interface SseEvent {
  id?: string;
  retry?: string;
  data: string;
}

/** Reads SSE events from a body as they come; `next()` resolves with the next one (null at the end). */
function sseEvents(body: ReadableStream<Uint8Array>) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  return {
    async next(): Promise<SseEvent | null> {
      for (;;) {
        const end = buffered.indexOf('\n\n');
        if (end >= 0) {
          const frame = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          if (frame.startsWith(':')) continue; // a keep-alive comment
          const event: SseEvent = { data: '' };
          for (const line of frame.split('\n')) {
            const at = line.indexOf(': ');
            const [field, value] = at < 0 ? [line, ''] : [line.slice(0, at), line.slice(at + 2)];
            if (field === 'id' || field === 'retry') event[field] = value;
            else if (field === 'data') event.data += value;
          }
          return event;
        }
        const { value, done } = await reader.read();
        if (done) return null;
        buffered += decoder.decode(value, { stream: true });
      }
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const setUp = () => releaseGateway(actors, open, 'resume', { progressIntervalMs: undefined });

describe('gateway, Streamable HTTP, a 2025 session', () => {
  it('a client that lost its call stream reconnects with Last-Event-ID and gets the events it missed', async () => {
    const { url, release } = await setUp();
    const session = await rawSession(url, 'unused');
    const headers = {
      accept: ACCEPT,
      'content-type': 'application/json',
      'mcp-protocol-version': '2025-11-25',
      'mcp-session-id': session.sessionId,
    };

    const away = new AbortController();
    const call = await fetch(url, {
      method: 'POST',
      headers,
      body: rpc(2, 'tools/call', { name: 'wait_for_release', arguments: {}, _meta: { progressToken: 'p' } }),
      signal: away.signal,
    });
    expect(call.status).toBe(200);
    const seen = sseEvents(call.body!);
    // The priming event (an id, no data, when to come back), then the first progress.
    const priming = await seen.next();
    expect(priming).toEqual({ id: expect.any(String), retry: String(RECONNECT_MS), data: '' });
    const first = await seen.next();
    expect({ id: typeof first?.id, message: JSON.parse(first!.data) }).toEqual({
      id: 'string',
      message: { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'p', progress: 1 } },
    });

    // The connection drops; the call goes on, its second progress and its answer sent while away.
    away.abort();
    release();

    // Reconnecting as the spec says: a GET with the last id seen. Until the gateway has noticed the
    // drop the stream is still its old connection's (409), so the client tries again.
    let resumed: Response | undefined;
    for (let tries = 0; tries < 100; tries++) {
      resumed = await fetch(url, {
        method: 'GET',
        headers: { ...headers, accept: 'text/event-stream', 'last-event-id': first!.id! },
      });
      if (resumed.status !== 409) break;
      await resumed.body?.cancel();
      await sleep(20);
    }
    expect(resumed!.status).toBe(200);
    const missed: unknown[] = [];
    const again = sseEvents(resumed!.body!);
    for (let e = await again.next(); e; e = await again.next()) {
      expect(e.id).toEqual(expect.any(String));
      missed.push(JSON.parse(e.data));
    }
    expect(missed).toMatchObject([
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'p', progress: 2 } },
      { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'released' }] } },
    ]);
    expect(missed).toHaveLength(2);
  });

  it("a GET stream's head comes at once, before anything is sent on it", async () => {
    const { url } = await setUp();
    const session = await rawSession(url, 'unused');
    const started = Date.now();
    const res = await fetch(url, {
      method: 'GET',
      headers: {
        accept: 'text/event-stream',
        'mcp-protocol-version': '2025-11-25',
        'mcp-session-id': session.sessionId,
      },
    });
    // Not held until the first event or the keep-alive comment, 15 s later.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect([res.status, res.headers.get('content-type')]).toEqual([200, 'text/event-stream']);
    await res.body?.cancel();
  });

  it('an id the session never gave cannot be resumed', async () => {
    const { url } = await setUp();
    const session = await rawSession(url, 'unused');
    const res = await fetch(url, {
      method: 'GET',
      headers: {
        accept: 'text/event-stream',
        'mcp-protocol-version': '2025-11-25',
        'mcp-session-id': session.sessionId,
        'last-event-id': 'not-an-id',
      },
    });
    expect(res.status).toBe(400);
    await res.body?.cancel();
  });
});
