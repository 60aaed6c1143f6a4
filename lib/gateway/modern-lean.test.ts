// The lean path's replay of a streamed answer (lean-upstream.ts `streamed`): the gateway's id for
// the call is put back as the SDK client's wherever the server's reads cut it.
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { streamed } from './lean-upstream';

const FROM = '"gw-lean-0b7c"';
const TO = '7';
const EVENT = `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}\n\nevent: message\ndata: {"jsonrpc":"2.0","id":${FROM},"result":{"content":[]}}\n\n`;
const WANTED = `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}\n\nevent: message\ndata: {"jsonrpc":"2.0","id":7,"result":{"content":[]}}\n\n`;

async function through(chunks: string[]): Promise<string> {
  const body = streamed(Readable.from(chunks.map((c) => Buffer.from(c))), FROM, TO);
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
