// The session event store (event-store.ts): what a replay after an id sends, for which stream, and
// what the bounds leave. Expected ids and messages are written out by hand.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { isPrimingEvent, SessionEvents } from './event-store';

const note = (n: number): JSONRPCMessage => ({ jsonrpc: '2.0', method: 'notifications/message', params: { n } });
// What SDK v2 stores for a priming event.
const priming = {} as JSONRPCMessage;
const answer = (id: number): JSONRPCMessage => ({ jsonrpc: '2.0', id, result: { content: [] } });

/** What a replay after `id` sends, as [id, message] pairs, and the stream it names. */
async function replay(store: SessionEvents, id: string) {
  const sent: [string, JSONRPCMessage][] = [];
  const stream = await store.replayEventsAfter(id, { send: async (i, m) => void sent.push([i, m]) });
  return { stream, sent };
}

async function storeAll(store: SessionEvents, events: [string, JSONRPCMessage][]) {
  const ids: string[] = [];
  for (const [stream, message] of events) ids.push(await store.storeEvent(stream, message));
  return ids;
}

describe('SessionEvents: replay', () => {
  it('gives each event its own id, in the order stored', async () => {
    const store = new SessionEvents();
    expect(
      await storeAll(store, [
        ['a', note(1)],
        ['b', note(2)],
        ['a', note(3)],
      ]),
    ).toEqual(['1', '2', '3']);
  });

  it("sends what came after the id on that id's stream only, and names the stream", async () => {
    const store = new SessionEvents();
    await storeAll(store, [
      ['post-1', priming],
      ['_GET_stream', note(1)],
      ['post-1', note(2)],
      ['post-2', note(3)],
      ['post-1', answer(7)],
    ]);
    expect(await replay(store, '1')).toEqual({
      stream: 'post-1',
      sent: [
        ['3', note(2)],
        ['5', answer(7)],
      ],
    });
    expect(await replay(store, '3')).toEqual({ stream: 'post-1', sent: [['5', answer(7)]] });
    expect(await replay(store, '2')).toEqual({ stream: '_GET_stream', sent: [] });
    expect(await replay(store, '4')).toEqual({ stream: 'post-2', sent: [] });
    expect(await replay(store, '5')).toEqual({ stream: 'post-1', sent: [] });
  });

  it('an event stored while a replay is being sent is sent too', async () => {
    const store = new SessionEvents();
    await storeAll(store, [
      ['s', priming],
      ['s', note(1)],
    ]);
    const sent: string[] = [];
    await store.replayEventsAfter('1', {
      send: async (id) => {
        sent.push(id);
        if (id === '2') await store.storeEvent('s', answer(9));
      },
    });
    expect(sent).toEqual(['2', '3']);
  });

  it('an id never given is unknown: no stream for it, and its replay is refused', async () => {
    const store = new SessionEvents();
    await storeAll(store, [['s', note(1)]]);
    for (const id of ['0', '2', 's', '', '1 ']) {
      expect(await store.getStreamIdForEventId(id)).toBeUndefined();
      await expect(replay(store, id)).rejects.toThrow('unknown event id');
    }
    expect(await store.getStreamIdForEventId('1')).toBe('s');
  });
});

describe('SessionEvents: bounds', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'], now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('keeps at most `events` per session, the oldest going first whatever their stream', async () => {
    const store = new SessionEvents({ events: 3, ageMs: 60_000 });
    await storeAll(store, [
      ['a', note(1)],
      ['b', note(2)],
      ['a', note(3)],
      ['b', note(4)],
      ['a', note(5)],
    ]);
    expect(store.held()).toEqual({ events: 3, messages: 3 });
    expect(await store.getStreamIdForEventId('1')).toBeUndefined();
    expect(await store.getStreamIdForEventId('2')).toBeUndefined();
    expect(await replay(store, '3')).toEqual({ stream: 'a', sent: [['5', note(5)]] });
    expect(await replay(store, '4')).toEqual({ stream: 'b', sent: [] });
  });

  it("ages messages out; a stream's last id stays while nothing after it was lost", async () => {
    const store = new SessionEvents({ events: 100, ageMs: 1000 });
    await storeAll(store, [
      ['a', note(1)],
      ['b', note(2)],
    ]); // ids 1, 2 at t=0
    vi.advanceTimersByTime(600);
    await storeAll(store, [['a', note(3)]]); // id 3 at t=600

    vi.advanceTimersByTime(400); // t=1000: 1 and 2 aged
    // 1 is gone (3 follows it on a); 2 was b's last: its id stays, its message not.
    expect(store.held()).toEqual({ events: 2, messages: 1 });
    expect(await store.getStreamIdForEventId('1')).toBeUndefined();
    expect(await replay(store, '2')).toEqual({ stream: 'b', sent: [] });
    expect(await replay(store, '3')).toEqual({ stream: 'a', sent: [] });

    vi.advanceTimersByTime(600); // t=1600: 3 aged, a's last
    expect(store.held()).toEqual({ events: 2, messages: 0 });
    vi.advanceTimersByTime(100);
    await storeAll(store, [['a', note(4)]]); // id 4 at t=1700
    // A client that last saw 3, during a quiet time on its stream, still gets what followed.
    expect(await replay(store, '3')).toEqual({ stream: 'a', sent: [['4', note(4)]] });

    vi.advanceTimersByTime(1000); // t=2700: 4 aged: 3 can no longer be resumed without it
    expect(await store.getStreamIdForEventId('3')).toBeUndefined();
    expect(await replay(store, '4')).toEqual({ stream: 'a', sent: [] });
    expect(await replay(store, '2')).toEqual({ stream: 'b', sent: [] });
    expect(store.held()).toEqual({ events: 2, messages: 0 });
  });

  it('a session flooded with events holds no more than its bound, and no message past its age', async () => {
    const stores = Array.from({ length: 1000 }, () => new SessionEvents({ events: 5, ageMs: 1000 }));
    for (const store of stores) for (let n = 0; n < 50; n++) await store.storeEvent(`s${n % 3}`, note(n));
    expect(stores.map((s) => s.held()).filter((h) => h.events !== 5 || h.messages !== 5)).toEqual([]);
    vi.advanceTimersByTime(1000);
    // Each of the three streams keeps its last id, without its message.
    expect(stores.map((s) => s.held()).filter((h) => h.events !== 3 || h.messages !== 0)).toEqual([]);
    expect(await replay(stores[0], '50')).toEqual({ stream: 's1', sent: [] });
  });
});

describe('isPrimingEvent', () => {
  const enc = (text: string) => new TextEncoder().encode(text);
  it.each([
    ['id: 1\ndata: \n\n', true],
    ['id: 7\nretry: 1000\ndata: \n\n', true],
    ['id: 1\ndata: {}\n\n', false],
    ['event: message\nid: 2\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n', false],
    ['event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress"}\n\n', false],
    [': keepalive\n\n', false],
    ['id: 1\ndata: \n\nevent: message\nid: 2\ndata: {}\n\n', false],
    [`id: ${'9'.repeat(300)}\ndata: \n\n`, false],
  ])('%j: %s', (text, expected) => {
    expect(isPrimingEvent(enc(text))).toBe(expected);
  });
});
