// The lean paths' one POST of a call to the server (modern-lean.ts), on a kept-alive connection of
// undici's (hand-written on its dispatcher: SDK v2's client and its fetch per call cost more than
// the call, and node:http's client with a stream per answer twice undici's, bench:gateway), and
// what is read of its answer: the one response to the call, from a JSON body or from an SSE stream
// that carries only it (the answer of SDK v1's and SDK v2's 2025 transports); and, for any other
// answer, the server's answer as the SDK client's fetch would have had it, to replay on the SDK's
// path (modern-exchange.ts `handed`) with what was already read put back.
import type { IncomingHttpHeaders } from 'node:http';
import { isJsonContentType } from '@modelcontextprotocol/server';
import { errors, Pool, type Dispatcher } from 'undici';

/** Keep-alive connections to the server for the lean paths, one pool per gateway. */
export function upstreamPool(url: URL): Pool {
  return new Pool(url.origin, { keepAliveTimeout: 4000, keepAliveMaxTimeout: 600_000 });
}

/** The server's answer to one POST: its status line, its headers and its body as it comes. */
export interface Answer {
  statusCode: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  body: AnswerBody;
}

export type Post = (
  headers: Record<string, string>,
  body: string,
  /** Whether it may go twice: retried once when the connection failed before any answer. */
  resendable: boolean,
  signal: AbortSignal,
) => Promise<Answer>;

/** One POST to the server's MCP endpoint. */
export function poster(url: URL, pool: Pool): Post {
  const path = `${url.pathname}${url.search}`;
  // Credentials in the server's URL, sent for a request that carries no Authorization of its own.
  const basic =
    url.username || url.password
      ? `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`
      : null;
  const post: Post = (headers, body, resendable, signal) =>
    new Promise<Answer>((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const sent = basic && !headers.authorization ? { ...headers, authorization: basic } : headers;
      const answer = new AnswerBody();
      let started = false;
      const reason = () => (signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      // A request still waiting for a connection has no controller yet: given up at once, it is
      // aborted when it gets one.
      const abort = () => (answer.controller ? answer.controller.abort(reason()) : reject(reason()));
      signal.addEventListener('abort', abort, { once: true });
      const done = () => signal.removeEventListener('abort', abort);
      pool.dispatch(
        { origin: url.origin, path, method: 'POST', headers: sent, body },
        {
          onRequestStart: (controller) => {
            answer.controller = controller;
            if (signal.aborted) controller.abort(reason());
          },
          onResponseStart: (_controller, statusCode, headers, statusText) => {
            if (statusCode < 200) return;
            started = true;
            resolve({ statusCode, statusText: statusText ?? '', headers, body: answer });
          },
          onResponseData: (_controller, chunk) => answer.push(chunk),
          onResponseEnd: () => (done(), answer.end()),
          onResponseError: (_controller, error) => {
            done();
            if (started) return answer.fail(error);
            if (resendable && error instanceof errors.SocketError && !signal.aborted)
              return void post(headers, body, false, signal).then(resolve, reject);
            reject(error);
          },
        },
      );
    });
  return post;
}

/**
 * An answer's body, read chunk by chunk as the connection delivers it (no stream per answer): the
 * connection is paused while more than HIGH bytes wait to be read.
 */
export class AnswerBody {
  controller: Dispatcher.DispatchController | undefined;
  private readonly chunks: Buffer[] = [];
  /** Bytes received and not yet read. */
  unread = 0;
  private ended = false;
  private error: Error | null = null;
  private reader: { resolve(chunk: Buffer | null): void; reject(error: Error): void } | null = null;
  private dropped = false;
  private static readonly HIGH = 64 * 1024;

  push(chunk: Buffer): void {
    if (this.dropped) return;
    const reader = this.reader;
    if (reader) return ((this.reader = null), reader.resolve(chunk));
    this.chunks.push(chunk);
    this.unread += chunk.length;
    if (this.unread > AnswerBody.HIGH) this.controller?.pause();
  }

  end(): void {
    this.ended = true;
    const reader = this.reader;
    this.reader = null;
    reader?.resolve(null);
  }

  fail(error: Error): void {
    this.error = error;
    const reader = this.reader;
    this.reader = null;
    reader?.reject(error);
  }

  /** The next chunk, or null at the end; rejects when the answer failed. */
  next(): Promise<Buffer | null> {
    const chunk = this.chunks.shift();
    if (chunk) {
      this.unread -= chunk.length;
      if (this.controller?.paused && this.unread <= AnswerBody.HIGH) this.controller.resume();
      return Promise.resolve(chunk);
    }
    if (this.error) return Promise.reject(this.error);
    if (this.ended) return Promise.resolve(null);
    return new Promise((resolve, reject) => (this.reader = { resolve, reject }));
  }

  /** The rest of the body as text. */
  async text(): Promise<string> {
    const read: Buffer[] = [];
    for (let chunk = await this.next(); chunk; chunk = await this.next()) read.push(chunk);
    return read.length === 1 ? read[0].toString('utf8') : Buffer.concat(read).toString('utf8');
  }

  /** The rest read and let go, for the connection to be kept. */
  drop(): void {
    this.dropped = true;
    this.chunks.length = 0;
    this.unread = 0;
    if (this.controller?.paused) this.controller.resume();
  }

  /** The rest as a web stream, after `before` (what was already read); cancelling it ends the request. */
  stream(before: Buffer[] = []): ReadableStream<Uint8Array> {
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        const chunk = before.shift() ?? (await this.next());
        if (chunk) controller.enqueue(new Uint8Array(chunk));
        else controller.close();
      },
      cancel: () => {
        this.drop();
        if (!this.ended) this.controller?.abort(new Error('the replay was cancelled'));
      },
    });
  }
}

/** The server's answer to a call sent under the gateway's id. */
export interface Read {
  /** The JSON-RPC response to the call, when that is all the answer carries. */
  message?: Record<string, unknown>;
  /** The answer as the SDK client's fetch would have had it, the SDK client's id (`id`) in place of the gateway's. */
  replay(id: unknown): Promise<Response>;
  /** The message answered by the lean path: the rest of the body is read to its end, for the connection to be kept. */
  taken(): void;
}

/**
 * Reads the answer as far as needed: a JSON body whole, an SSE stream up to its first message
 * (priming events and comments carry none). Throws when the body fails while it is read.
 */
export async function readAnswer(res: Answer, upId: string): Promise<Read> {
  const token = JSON.stringify(upId);
  const swap = (text: string, id: unknown) => text.split(token).join(JSON.stringify(id));
  const type = one(res.headers['content-type']) ?? null;
  if (res.statusCode === 200 && isJsonContentType(type)) {
    const text = await res.body.text();
    const message = parse(text);
    return {
      ...(isRecord(message) && message.id === upId ? { message } : {}),
      replay: async (id) => replayed(res, swap(text, id)),
      taken: () => undefined,
    };
  }
  if (res.statusCode !== 200 || !type?.toLowerCase().startsWith('text/event-stream'))
    return {
      replay: async (id) => replayed(res, streamed(res.body.stream(), token, JSON.stringify(id))),
      taken: () => res.body.drop(),
    };

  const read: Buffer[] = [];
  const decoder = new TextDecoder();
  let text = '';
  let message: Record<string, unknown> | undefined;
  let ended = false;
  reading: for (;;) {
    const chunk = await res.body.next();
    if (!chunk) {
      ended = true;
      break;
    }
    read.push(chunk);
    text += decoder.decode(chunk, { stream: true });
    const events = text.split(/\r?\n\r?\n/);
    text = events.pop() ?? '';
    for (const event of events) {
      const data = eventData(event);
      if (data === null) continue;
      const sent = data === undefined ? undefined : parse(data);
      if (isRecord(sent) && sent.id === upId && ('result' in sent || 'error' in sent)) message = sent;
      // The response, or anything else the SDK client would act on (a notification, a request).
      break reading;
    }
  }
  return {
    ...(message ? { message } : {}),
    // What was read and what follows, as it came.
    replay: async (id) =>
      replayed(
        res,
        ended
          ? swap(Buffer.concat(read).toString('utf8'), id)
          : streamed(res.body.stream(read), token, JSON.stringify(id)),
      ),
    taken: () => res.body.drop(),
  };
}

/**
 * An SSE event's data: null for one that carries no message (a comment, a priming event), undefined
 * for one the SDK client would not read as a plain message (another event type).
 */
function eventData(event: string): string | null | undefined {
  let type: string | undefined;
  const data: string[] = [];
  for (const line of event.split(/\r?\n/)) {
    if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
    else if (line.startsWith('event:')) type = line.slice(6).trim();
  }
  if (!data.length || (data.length === 1 && data[0] === '')) return null;
  return type === undefined || type === 'message' ? data.join('\n') : undefined;
}

/** The server's answer as the SDK client's fetch would have it. */
function replayed(res: Answer, body: string | ReadableStream<Uint8Array>): Response {
  const headers = new Headers();
  for (const [k, v] of Object.entries(res.headers))
    if (v !== undefined && k !== 'content-length' && k !== 'transfer-encoding')
      headers.set(k, Array.isArray(v) ? v.join(', ') : v);
  const status = res.statusCode;
  const empty = status === 204 || status === 304;
  return new Response(empty ? null : body, { status, statusText: res.statusText, headers });
}

/** The server's body as it streams, the gateway's id for the call (`from`) put back as the SDK client's (`to`). */
export function streamed(body: ReadableStream<Uint8Array>, from: string, to: string): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let tail = '';
  const swap = (text: string, controller: TransformStreamDefaultController<Uint8Array>, end: boolean) => {
    // Held back: what could be the start of `from`, cut by the read.
    let cut = end ? text.length : Math.max(0, text.length - (from.length - 1));
    const last = text.lastIndexOf(from);
    if (last >= 0) cut = Math.max(cut, last + from.length);
    tail = text.slice(cut);
    const out = text.slice(0, cut).split(from).join(to);
    if (out) controller.enqueue(encoder.encode(out));
  };
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform: (chunk, controller) => swap(tail + decoder.decode(chunk, { stream: true }), controller, false),
      flush: (controller) => swap(tail + decoder.decode(), controller, true),
    }),
  );
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
