// The lean path's replay of a streamed answer (lean-upstream.ts `streamed`): the gateway's id for
// the call is put back as the SDK client's wherever the server's reads cut it. Its answer in a 2025
// session (modern-lean.ts `sessionAnswer`), written out by hand from SDK v2's session transport.
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { streamed } from './lean-upstream';
import { sessionAnswer } from './modern-lean';

const FROM = '"gw-lean-0b7c"';
const TO = '7';
const EVENT = `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}\n\nevent: message\ndata: {"jsonrpc":"2.0","id":${FROM},"result":{"content":[]}}\n\n`;
const WANTED = `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}\n\nevent: message\ndata: {"jsonrpc":"2.0","id":7,"result":{"content":[]}}\n\n`;

async function through(chunks: string[]): Promise<string> {
  const source = Readable.toWeb(Readable.from(chunks.map((c) => Buffer.from(c)))) as ReadableStream<Uint8Array>;
  const body = streamed(source, FROM, TO);
  return new Response(body).text();
}

describe('a streamed answer replayed', () => {
  it('carries the client’s id, cut by a read at any point of the id', async () => {
    const at = EVENT.indexOf(FROM);
    for (let cut = at - 1; cut <= at + FROM.length + 1; cut++)
      expect(await through([EVENT.slice(0, cut), EVENT.slice(cut)])).toBe(WANTED);
  });

  it('one byte per read', async () => {
    expect(await through([...EVENT])).toBe(WANTED);
  });

  it('leaves a body without the id as it came', async () => {
    expect(await through(['data: {"a":1}\n\n', '"gw-lean-0b'])).toBe('data: {"a":1}\n\n"gw-lean-0b');
  });
});

describe('a lean answer in a 2025 session', () => {
  const message = { result: { content: [] }, jsonrpc: '2.0', id: 'call-1' };
  const DATA = '{"result":{"content":[]},"jsonrpc":"2.0","id":"call-1"}';
  /** An event store that numbers its events, and what it was given. */
  const numbered = () => {
    const kept: { stream: string; message: unknown }[] = [];
    const store = {
      storeEvent: async (stream: string, m: unknown) => (kept.push({ stream, message: m }), `e${kept.length}`),
      replayEventsAfter: async () => '',
    };
    return { store, kept };
  };

  it('is one `message` event with the session’s id, as the session’s transport sends it', async () => {
    const answer = await sessionAnswer({ id: 'sess-1', version: '2025-11-25' }, message);
    expect(answer).toEqual({
      status: 200,
      headers: {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
        'mcp-session-id': 'sess-1',
      },
      body: `event: message\ndata: ${DATA}\n\n`,
    });
  });

  it('with an event store: a priming event with its retry, then the event under its stored id', async () => {
    const { store, kept } = numbered();
    const answer = await sessionAnswer(
      { id: 'sess-1', version: '2025-11-25', events: { store, retryMs: 1000 } },
      message,
    );
    expect(answer.body).toBe(`id: e1\nretry: 1000\ndata: \n\nevent: message\nid: e2\ndata: ${DATA}\n\n`);
    expect(kept.map((k) => k.message)).toEqual([{}, message]);
    expect(kept[0].stream).toBe(kept[1].stream);
  });

  it('with an event store, to a client before 2025-11-25: no priming event (its version allows no empty data)', async () => {
    const { store } = numbered();
    const answer = await sessionAnswer({ id: 'sess-1', version: '2025-06-18', events: { store } }, message);
    expect(answer.body).toBe(`event: message\nid: e1\ndata: ${DATA}\n\n`);
  });
});
