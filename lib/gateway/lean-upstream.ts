// The lean paths' one POST of a call to the server (modern-lean.ts), on a kept-alive node:http
// connection (hand-written: SDK v2's client and its fetch per call cost more than the call,
// bench:gateway), and what is read of its answer: the one response to the call, from a JSON body or
// from an SSE stream that carries only it (the answer of SDK v1's and SDK v2's 2025 transports);
// and, for any other answer, the server's answer as the SDK client's fetch would have had it, to
// replay on the SDK's path (modern-exchange.ts `handed`) with what was already read put back.
import {
  Agent as HttpAgent,
  request as httpRequest,
  type Agent,
  type IncomingHttpHeaders,
  type IncomingMessage,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import { isJsonContentType } from '@modelcontextprotocol/server';

/** Keep-alive connections to the server for the lean paths, one pool per gateway. */
export function upstreamAgent(url: URL): Agent {
  const options = { keepAlive: true, keepAliveMsecs: 1000, maxFreeSockets: 256, scheduling: 'lifo' as const };
  return url.protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options);
}

export type Post = (
  headers: Record<string, string>,
  body: string,
  /** Whether it may go twice: retried once on a fresh connection when a kept-alive one was found closed. */
  resendable: boolean,
  signal: AbortSignal,
) => Promise<IncomingMessage>;

/** One POST to the server's MCP endpoint. */
export function poster(url: URL, agent: Agent): Post {
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const target = {
    protocol: url.protocol,
    hostname,
    port: url.port,
    path: `${url.pathname}${url.search}`,
    ...(url.username || url.password
      ? { auth: `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` }
      : {}),
    agent,
  };
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const post: Post = (headers, body, resendable, signal) =>
    new Promise<IncomingMessage>((resolve, reject) => {
      const req = send({ ...target, method: 'POST', headers, signal });
      req.on('response', resolve);
      req.on('error', (error: NodeJS.ErrnoException) => {
        if (
          resendable &&
          req.reusedSocket &&
          (error.code === 'ECONNRESET' || error.code === 'EPIPE') &&
          !signal.aborted
        )
          return void post(headers, body, false, signal).then(resolve, reject);
        reject(error);
      });
      req.end(body);
    });
  return post;
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
export async function readAnswer(res: IncomingMessage, upId: string): Promise<Read> {
  const token = JSON.stringify(upId);
  const type = one(res.headers['content-type']) ?? null;
  if (res.statusCode === 200 && isJsonContentType(type)) {
    const text = await readAll(res);
    const message = parse(text);
    return {
      ...(isRecord(message) && message.id === upId ? { message } : {}),
      replay: async (id) => replayed(res, text.split(token).join(JSON.stringify(id))),
      taken: () => undefined,
    };
  }
  if (res.statusCode !== 200 || !type?.toLowerCase().startsWith('text/event-stream'))
    return { replay: async (id) => replayed(res, streamed(res, token, JSON.stringify(id))), taken: () => undefined };

  const chunks = res[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const read: Buffer[] = [];
  const decoder = new TextDecoder();
  let text = '';
  let message: Record<string, unknown> | undefined;
  reading: for (;;) {
    const next = await chunks.next();
    if (next.done) break;
    read.push(next.value);
    text += decoder.decode(next.value, { stream: true });
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
  // What was read and what follows, as it came.
  const rest = Readable.from(
    (async function* () {
      yield* read;
      for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value;
    })(),
  );
  return {
    ...(message ? { message } : {}),
    replay: async (id) => replayed(res, streamed(rest, token, JSON.stringify(id))),
    taken: () => void rest.resume(),
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
function replayed(res: IncomingMessage, body: string | ReadableStream<Uint8Array>): Response {
  const headers = new Headers();
  for (const [k, v] of Object.entries(res.headers as IncomingHttpHeaders))
    if (v !== undefined && k !== 'content-length' && k !== 'transfer-encoding')
      headers.set(k, Array.isArray(v) ? v.join(', ') : v);
  const status = res.statusCode ?? 502;
  const empty = status === 204 || status === 304;
  return new Response(empty ? null : body, { status, statusText: res.statusMessage, headers });
}

/** The server's body as it streams, the gateway's id for the call (`from`) put back as the SDK client's (`to`). */
export function streamed(res: Readable, from: string, to: string): ReadableStream<Uint8Array> {
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
  return (Readable.toWeb(res) as ReadableStream<Uint8Array>).pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform: (chunk, controller) => swap(tail + decoder.decode(chunk, { stream: true }), controller, false),
      flush: (controller) => swap(tail + decoder.decode(), controller, true),
    }),
  );
}

function readAll(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
    res.on('aborted', () => reject(new Error('aborted')));
    res.on('close', () => {
      if (!res.complete) reject(new Error('aborted'));
    });
  });
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
