// The lean path's one POST to the server (lean-upstream.ts), against a node:http server written
// here for each edge: credentials from the server's URL, a kept-alive connection the server closed,
// a client that gives up, a body larger than what is held unread, and each kind of answer read.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Pool } from 'undici';
import { poster, readAnswer, upstreamPool } from './lean-upstream';

const JSON_TYPE = { 'content-type': 'application/json' };
const SSE_TYPE = { 'content-type': 'text/event-stream' };
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const UP = 'gw-lean-7f3a';
const call = (id = UP) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'get_order' } });
const result = (id: unknown) => JSON.stringify({ jsonrpc: '2.0', id, result: { content: [] } });

type Handler = (req: IncomingMessage, res: ServerResponse, body: string, nth: number) => void;
const opened: { close(): Promise<void> }[] = [];

/** A server answering with `handler`; `nth` counts the requests on each connection, from 1. */
async function serve(handler: Handler, credentials = '') {
  const counts = new WeakMap<Socket, number>();
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((req, res) => {
    const nth = (counts.get(req.socket) ?? 0) + 1;
    counts.set(req.socket, nth);
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => handler(req, res, body, nth));
  });
  server.on('connection', (s: Socket) => {
    connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = new URL(`http://${credentials}127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
  const pool = upstreamPool(url);
  const close = async () => {
    await pool.destroy();
    for (const s of sockets) s.destroy();
    server.close();
  };
  opened.push({ close });
  return { url, post: poster(url, pool), connections: () => connections };
}

afterEach(async () => {
  for (const o of opened.splice(0)) await o.close();
});

const never = () => new AbortController().signal;
/** The pool has taken back the connection of the answer just read (after the current I/O). */
const settled = () => new Promise((r) => setImmediate(r));

describe('the lean path’s POST', () => {
  it('sends the server URL’s credentials when the call carries no Authorization, and the call’s own when it does', async () => {
    const seen: (string | undefined)[] = [];
    const { post } = await serve((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(200, JSON_TYPE).end(result(UP));
    }, 'svc%40acme:p%3Ass@');
    await (await post(HEADERS, call(), false, never())).body.text();
    await (await post({ ...HEADERS, authorization: 'Bearer agent-token' }, call(), false, never())).body.text();
    expect(seen).toEqual([`Basic ${Buffer.from('svc@acme:p:ss').toString('base64')}`, 'Bearer agent-token']);
  });

  it('resends a read once on a new connection when its kept-alive one was closed before any answer; a write fails', async () => {
    // The second request on a connection finds it closed: the server drops it unanswered.
    const dropping = async () => {
      const arrived: number[] = [];
      const { post } = await serve((req, res, _body, nth) => {
        arrived.push(nth);
        if (nth === 2) return void req.socket.destroy();
        res.writeHead(200, JSON_TYPE).end(result(UP));
      });
      await (await post(HEADERS, call(), false, never())).body.text();
      await settled();
      return { post, arrived };
    };
    const reads = await dropping();
    const read = await reads.post(HEADERS, call(), true, never());
    expect([read.statusCode, await read.body.text()]).toEqual([200, result(UP)]);
    expect(reads.arrived).toEqual([1, 2, 1]);

    const writes = await dropping();
    await expect(writes.post(HEADERS, call(), false, never())).rejects.toThrow('other side closed');
    expect(writes.arrived).toEqual([1, 2]);
  });

  it('a call given up before its answer: the POST rejects and the server’s request is closed', async () => {
    let closed: Promise<unknown> | undefined;
    const { post } = await serve((req) => void (closed = once(req.socket, 'close')));
    const controller = new AbortController();
    const sent = post(HEADERS, call(), false, controller.signal);
    await expect.poll(() => closed !== undefined).toBe(true);
    controller.abort(new Error('the client cancelled'));
    await expect(sent).rejects.toThrow('the client cancelled');
    await closed;
  });

  it('a call given up while it waits for a connection: the POST rejects at once, and it is never sent', async () => {
    const arrived: string[] = [];
    let answer = () => {};
    const { url } = await serve((_req, res, body) => {
      arrived.push((JSON.parse(body) as { id: string }).id);
      answer = () => res.writeHead(200, JSON_TYPE).end(result('held'));
    });
    // One connection, held by a call the server has not answered: the next one waits for it.
    const pool = new Pool(url.origin, { connections: 1 });
    opened.push({ close: () => pool.destroy() });
    const post = poster(url, pool);
    const held = post(HEADERS, call('held'), false, never());
    await expect.poll(() => arrived).toEqual(['held']);
    const controller = new AbortController();
    const waiting = post(HEADERS, call('waiting'), false, controller.signal);
    controller.abort(new Error('the client cancelled'));
    await expect(waiting).rejects.toThrow('the client cancelled');
    // The connection free again: the call given up does not go.
    answer();
    await (await held).body.text();
    await new Promise((r) => setTimeout(r, 200));
    expect(arrived).toEqual(['held']);
  });

  it('a call given up while its answer streams: the next read rejects and the server’s response is closed', async () => {
    let closed!: Promise<unknown>;
    const { post } = await serve((_req, res) => {
      closed = once(res, 'close');
      res.writeHead(200, SSE_TYPE).write(': working\n\n');
    });
    const controller = new AbortController();
    const answer = await post(HEADERS, call(), false, controller.signal);
    expect((await answer.body.next())?.toString()).toBe(': working\n\n');
    controller.abort(new Error('the client cancelled'));
    await expect(answer.body.next()).rejects.toThrow();
    await closed;
  });

  it('holds at most about 64 KiB unread: the connection is paused until the body is read, then all of it arrives in order', async () => {
    const chunk = (i: number) => `: ${String(i).padStart(6, '0')} ${'x'.repeat(16 * 1024 - 11)}\n`;
    const { post } = await serve((_req, res) => {
      res.writeHead(200, SSE_TYPE);
      let written = 0;
      const more = () => {
        while (written < 1024) if (!res.write(chunk(written++))) return void res.once('drain', more);
        res.end();
      };
      more();
    });
    const answer = await post(HEADERS, call(), false, never());
    // 16 MiB sent, nothing read yet.
    await expect.poll(() => answer.body.controller?.paused).toBe(true);
    expect(answer.body.unread).toBeLessThanOrEqual(64 * 1024 + 64 * 1024);
    const text = await answer.body.text();
    expect(text).toBe(Array.from({ length: 1024 }, (_, i) => chunk(i)).join(''));
  });
});

describe('the server’s answer, read', () => {
  it('a JSON body: its message, and a replay with the client’s id', async () => {
    const { post } = await serve((_req, res) => res.writeHead(200, JSON_TYPE).end(result(UP)));
    const read = await readAnswer(await post(HEADERS, call(), false, never()), UP);
    expect(read.message).toEqual({ jsonrpc: '2.0', id: UP, result: { content: [] } });
    const replay = await read.replay(7);
    expect([replay.status, replay.headers.get('content-type'), await replay.text()]).toEqual([
      200,
      'application/json',
      result(7),
    ]);
  });

  it('a stream that opens with its answer: taken, the rest read, the connection kept for the next call', async () => {
    const { post, connections } = await serve((_req, res) => {
      res.writeHead(200, SSE_TYPE).write(`id: 1\ndata: \n\nevent: message\ndata: ${result(UP)}\n\n`);
      setTimeout(() => res.end(': done\n\n'), 50);
    });
    for (let i = 0; i < 3; i++) {
      const read = await readAnswer(await post(HEADERS, call(), false, never()), UP);
      expect(read.message).toEqual({ jsonrpc: '2.0', id: UP, result: { content: [] } });
      read.taken();
      // The rest comes 50 ms later: read by `taken`, it frees the connection for the next call.
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(connections()).toBe(1);
  });

  it('a stream with a notification first: no message of its own; the replay is everything as it came, the id the client’s', async () => {
    const note = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1 } });
    const { post } = await serve((_req, res) => {
      res.writeHead(200, SSE_TYPE).write(`event: message\ndata: ${note}\n\n`);
      setTimeout(() => res.end(`event: message\ndata: ${result(UP)}\n\n`), 50);
    });
    const read = await readAnswer(await post(HEADERS, call(), false, never()), UP);
    expect(read.message).toBeUndefined();
    const replay = await read.replay('c-1');
    expect(await replay.text()).toBe(`event: message\ndata: ${note}\n\nevent: message\ndata: ${result('c-1')}\n\n`);
  });

  it('a 401: the replay keeps its status, status text, challenge and body', async () => {
    const { post } = await serve((_req, res) => {
      res.statusMessage = 'Who are you';
      res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer realm="mcp"' }).end('no token');
    });
    const read = await readAnswer(await post(HEADERS, call(), false, never()), UP);
    const replay = await read.replay(1);
    expect([replay.status, replay.statusText, replay.headers.get('www-authenticate'), await replay.text()]).toEqual([
      401,
      'Who are you',
      'Bearer realm="mcp"',
      'no token',
    ]);
  });
});
