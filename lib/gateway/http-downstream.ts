// The gateway's side towards the client in Streamable HTTP mode: the SDK's server transport, and
// beside it a lean path for the POST that carries most of the traffic (one JSON-RPC request, in
// an initialized session, with nothing unusual about it). The SDK's transport turns each POST
// into a WHATWG Request, a ReadableStream and a Response, re-validates the message with zod and
// arms a keep-alive timer per stream: under load that cost more CPU per call than the relay and
// the upstream request together (bench:gateway profile). The lean path hands the message to the
// relay as it came and writes the answer on the node:http response itself:
// - as JSON (the SDK's own JSON answer: `content-type: application/json`, the session id, the
//   message) when the request's answer is the first message for it;
// - as the SDK's SSE stream (the same headers, `event: message` frames and `: keepalive`
//   comments) when something related comes first (the gateway's progress while it holds a call
//   for approval), or when nothing came for KEEP_ALIVE_MS (as the SDK's stream would, it then
//   keeps the connection alive).
// Everything else (initialize, notifications, responses, batches, GET, DELETE, anything the lean
// check is not sure of) goes to the SDK's transport, which answers it, errors included, as ever.
import type { ServerResponse } from 'node:http';
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
  type JSONRPCRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { carried, type Exchange, type FromClient } from './exchange';
import { isErrorResponse, isResult } from './messages';

type Id = string | number;

/** The SDK's DEFAULT_SSE_KEEP_ALIVE_MS: the longest a client's connection stays silent. */
export const KEEP_ALIVE_MS = 15_000;
/** How long a POST's answer waits to learn whether the server refused the request (401/403). */
export const HEAD_WAIT_MS = 30_000;

const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

/**
 * The request of a POST the lean path may take, or null for the SDK's transport: exactly the
 * messages the SDK's JSONRPCRequestSchema accepts unchanged (a strict object; an integer or string
 * id; params an object whose `_meta`, if any, has a valid progress token and no related-task,
 * which the SDK's parse would rewrite) and that are not `initialize`; the headers the SDK requires
 * in their plain form. Anything else is not ours to judge: the SDK answers it as it would.
 */
export function leanRequest(
  headers: { accept?: string; 'content-type'?: string; 'mcp-protocol-version'?: string | string[] },
  body: unknown,
): JSONRPCRequest | null {
  const accept = headers.accept;
  if (!accept || !accept.includes('application/json') || !accept.includes('text/event-stream')) return null;
  if (headers['content-type'] !== 'application/json') return null;
  const version = headers['mcp-protocol-version'];
  if (version !== undefined && (typeof version !== 'string' || !SUPPORTED_PROTOCOL_VERSIONS.includes(version)))
    return null;
  if (!isPlainObject(body)) return null;
  for (const key in body) if (key !== 'jsonrpc' && key !== 'id' && key !== 'method' && key !== 'params') return null;
  const { jsonrpc, id, method, params } = body;
  if (jsonrpc !== '2.0' || !isId(id) || typeof method !== 'string' || method === 'initialize') return null;
  if (params !== undefined) {
    if (!isPlainObject(params)) return null;
    const meta = params._meta;
    if (meta !== undefined) {
      if (!isPlainObject(meta) || 'io.modelcontextprotocol/related-task' in meta) return null;
      if (meta.progressToken !== undefined && !isId(meta.progressToken)) return null;
    }
  }
  return body as unknown as JSONRPCRequest;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isId = (v: unknown) => typeof v === 'string' || (typeof v === 'number' && Number.isSafeInteger(v));

/** One lean POST's answer: held until the gateway knows it is not a refusal, then JSON or SSE. */
export class LeanAnswer {
  private open = false;
  private held: JSONRPCMessage[] = [];
  private sse = false;
  private keepAlive?: NodeJS.Timeout;
  done = false;
  readonly since = performance.now();

  constructor(
    private readonly res: ServerResponse,
    private readonly sessionId: string,
    readonly id: Id,
    /** Called once, when nothing more will be written. */
    private readonly released: () => void,
    /** The POST's exchange, whose wait for the server's refusal the sweep bounds (no timer per request). */
    private readonly exchange?: Exchange,
  ) {}

  /** The gateway passes the answer on (no refusal of the server's to pass back instead). */
  start(): void {
    this.open = true;
    const held = this.held;
    this.held = [];
    for (const m of held) this.write(m);
  }

  send(message: JSONRPCMessage): void {
    if (!this.open) this.held.push(message);
    else this.write(message);
  }

  private write(message: JSONRPCMessage): void {
    if (this.done) return;
    const response = (isResult(message) || isErrorResponse(message)) && message.id === this.id;
    if (!this.sse && response) {
      const body = JSON.stringify(message);
      this.res.writeHead(200, {
        'content-type': 'application/json',
        'mcp-session-id': this.sessionId,
        'content-length': Buffer.byteLength(body),
      });
      this.res.end(body);
      return this.finished();
    }
    this.toSse();
    this.res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    if (response) this.end();
  }

  /**
   * Called by the sweep. Still waiting for the server's head after HEAD_WAIT_MS: no refusal
   * (the answer starts). Silent for KEEP_ALIVE_MS: the SDK's stream, headers out and kept alive.
   */
  idle(now: number): void {
    if (!this.open && now - this.since >= HEAD_WAIT_MS) this.exchange?.settle(null);
    if (this.open && !this.sse && !this.done && now - this.since >= KEEP_ALIVE_MS) {
      this.toSse();
      this.res.write(': keepalive\n\n');
    }
  }

  private toSse(): void {
    if (this.sse) return;
    this.sse = true;
    this.res.writeHead(200, { ...SSE_HEADERS, 'mcp-session-id': this.sessionId });
    this.keepAlive = setInterval(() => this.res.write(': keepalive\n\n'), KEEP_ALIVE_MS).unref();
  }

  /** The stream ends (its answer sent, or the session closed), as the SDK's does. */
  end(): void {
    if (this.done) return;
    this.toSse();
    this.res.end();
    this.finished();
  }

  /** Nothing more is written: the answer is out, the client went away, or a refusal went instead. */
  finished(): void {
    clearInterval(this.keepAlive);
    if (this.done) return;
    this.done = true;
    this.released();
    // Out of the sweep from now on: its wait for the server's head (if still on) ends here.
    this.exchange?.settle(null);
  }
}

/**
 * The Transport the relay speaks to: sends for a lean POST's request go to its answer, all
 * others to the SDK's transport, which also brings every message of the SDK path in.
 */
export class Downstream implements Transport {
  onmessage?: (message: JSONRPCMessage, extra?: FromClient) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;
  private readonly lean = new Map<Id, LeanAnswer>();

  constructor(readonly sdk: WebStandardStreamableHTTPServerTransport) {
    sdk.onmessage = (m, extra) => this.onmessage?.(m, { exchange: carried(extra) });
    sdk.onerror = (e) => this.onerror?.(e);
    sdk.onclose = () => {
      for (const answer of [...this.lean.values()]) answer.end();
      this.onclose?.();
    };
  }

  get sessionId(): string | undefined {
    return this.sdk.sessionId;
  }

  start(): Promise<void> {
    return this.sdk.start();
  }

  close(): Promise<void> {
    return this.sdk.close();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const response = isResult(message) || isErrorResponse(message);
    const id = response ? (message.id as Id) : options?.relatedRequestId;
    const answer = id === undefined ? undefined : this.lean.get(id);
    if (answer) return answer.send(message);
    if (response || id === undefined) return this.sdk.send(message, options);
    // Related to a request whose answer stream is gone (answered, or its client went away): on the
    // session's own stream instead, where the SDK sends what relates to no request.
    try {
      await this.sdk.send(message, options);
    } catch {
      await this.sdk.send(message, { ...options, relatedRequestId: undefined });
    }
  }

  /**
   * Takes `request` the lean way, unless one with its id is under way already (then the SDK
   * answers it, as it would). The message goes to the relay at once; its answer is held until
   * `start()` of what this returns (the gateway then knows the server did not refuse).
   */
  post(request: JSONRPCRequest, res: ServerResponse, exchange?: Exchange): LeanAnswer | null {
    const sessionId = this.sdk.sessionId;
    const id = request.id;
    if (!sessionId || this.lean.has(id)) return null;
    const answer = new LeanAnswer(res, sessionId, id, () => this.lean.delete(id), exchange);
    this.lean.set(id, answer);
    res.once('close', () => answer.finished());
    this.onmessage?.(request, { exchange });
    return answer;
  }

  /** Called now and then (every few seconds): see LeanAnswer.idle. */
  sweep(now: number): void {
    for (const answer of this.lean.values()) answer.idle(now);
  }
}
