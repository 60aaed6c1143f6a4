// The gateway's side towards the server in Streamable HTTP mode: a Transport speaking the
// protocol as the SDK's StreamableHTTPClientTransport does (the same headers, session and
// protocol-version handling, the same errors, the GET stream after `notifications/initialized`
// with its reconnection), over node:http on keep-alive connections shared by every session, and
// without re-validating the server's messages: they pass on as the server sent them (the client's
// own SDK validates them). The WHATWG fetch and stream layers the SDK's transport goes through
// cost more CPU per call than the server answering it.
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { Exchange } from './exchange';
import { isInitialized, isMessage } from './messages';
import { eventStreamReader } from './sse';

const RECONNECT = { initialMs: 1000, maxMs: 30_000, grow: 1.5, maxRetries: 2 };

/** Keep-alive connections to the server, one pool per gateway. */
export function upstreamAgent(url: URL): HttpAgent {
  const options = { keepAlive: true, keepAliveMsecs: 1000, maxFreeSockets: 256, scheduling: 'lifo' as const };
  return url.protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options);
}

export class HttpUpstream implements Transport {
  onmessage?: (message: JSONRPCMessage, extra?: FromServer) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;
  sessionId?: string;
  private protocolVersion?: string;
  private closed = false;
  private readonly open = new Set<IncomingMessage | import('node:http').ClientRequest>();
  private reconnectTimer?: NodeJS.Timeout;
  private serverRetryMs?: number;
  /** The URL as request options, made once (node:http would convert the URL on every request). */
  private readonly target: { protocol: string; hostname: string; port: string; path: string; auth?: string };

  constructor(
    private readonly url: URL,
    private readonly agent: HttpAgent,
    /** The Authorization header to send when no client request is being relayed (the GET stream). */
    private readonly sessionAuthorization: () => string | null,
  ) {
    const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    this.target = { protocol: url.protocol, hostname, port: url.port, path: `${url.pathname}${url.search}` };
    if (url.username || url.password)
      this.target.auth = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  }

  async start(): Promise<void> {}

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    for (const r of this.open) r.destroy();
    this.open.clear();
    this.onclose?.();
  }

  async send(message: JSONRPCMessage, options?: UpstreamSendOptions): Promise<void> {
    const exchange = options?.exchange;
    const body = JSON.stringify(message);
    const request = 'method' in message && 'id' in message ? message : null;
    const call = request?.method === 'tools/call';
    try {
      const res = await this.request(
        'POST',
        exchange ? exchange.authorization : this.sessionAuthorization(),
        body,
        undefined,
        options?.resendable ?? !call,
      );
      const sessionId = header(res.headers, 'mcp-session-id');
      if (sessionId) this.sessionId = sessionId;
      const status = res.statusCode ?? 0;
      if (status < 200 || status > 299) {
        const text = await readAll(res).catch(() => null);
        if (exchange && (status === 401 || status === 403))
          exchange.settle({ status, headers: webHeaders(res.headers), body: text ?? '' });
        throw new StreamableHTTPError(status, `Error POSTing to endpoint: ${text}`);
      }
      exchange?.settle(null);
      if (status === 202) {
        res.resume();
        if (isInitialized(message)) this.startStream().catch((e: Error) => this.onerror?.(e));
        return;
      }
      const hasRequests = (Array.isArray(message) ? message : [message]).some(
        (m: { method?: unknown; id?: unknown }) => 'method' in m && m.id !== undefined,
      );
      if (!hasRequests) return void res.resume();
      const type = mediaType(header(res.headers, 'content-type'));
      if (type === 'text/event-stream') return this.readStream(res, false, request?.id);
      if (type === 'application/json') {
        const data: unknown = JSON.parse(await readAll(res));
        for (const m of Array.isArray(data) ? data : [data]) this.deliver(m);
        return;
      }
      res.resume();
      throw new StreamableHTTPError(-1, `Unexpected content type: ${header(res.headers, 'content-type')}`);
    } catch (error) {
      this.onerror?.(error as Error);
      throw error;
    } finally {
      exchange?.settle(null);
    }
  }

  // The server's stream for messages of its own (GET); 405 means it offers none.
  private async startStream(resumptionToken?: string): Promise<void> {
    if (this.closed) return;
    const res = await this.request('GET', this.sessionAuthorization(), null, resumptionToken);
    const status = res.statusCode ?? 0;
    if (status < 200 || status > 299) {
      res.resume();
      if (status === 405) return;
      throw new StreamableHTTPError(status, `Failed to open SSE stream: ${res.statusMessage ?? ''}`);
    }
    this.readStream(res, true);
  }

  private reconnect(lastEventId: string | undefined, attempt = 0): void {
    if (this.closed) return;
    if (attempt >= RECONNECT.maxRetries) {
      this.onerror?.(new Error(`Maximum reconnection attempts (${RECONNECT.maxRetries}) exceeded.`));
      return;
    }
    const delay =
      this.serverRetryMs ?? Math.min(RECONNECT.initialMs * Math.pow(RECONNECT.grow, attempt), RECONNECT.maxMs);
    this.reconnectTimer = setTimeout(() => {
      this.startStream(lastEventId).catch((error: unknown) => {
        this.onerror?.(
          new Error(`Failed to reconnect SSE stream: ${error instanceof Error ? error.message : String(error)}`),
        );
        this.reconnect(lastEventId, attempt + 1);
      });
    }, delay);
  }

  // Server-sent events (sse.ts), each `message` event's data a JSON-RPC message. `related`: the
  // request this stream answers (a POST's), which what it carries relates to.
  private readStream(res: IncomingMessage, reconnectable: boolean, related?: RequestId): void {
    this.open.add(res);
    res.setEncoding('utf8');
    let lastEventId: string | undefined;
    let primed = false;
    let responded = false;
    res.on(
      'data',
      eventStreamReader({
        message: (text) => {
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch (error) {
            return void this.onerror?.(error as Error);
          }
          if (this.deliver(parsed, related) === 'response') responded = true;
        },
        id: (value) => {
          lastEventId = value;
          primed = true;
        },
        retry: (ms) => {
          this.serverRetryMs = ms;
        },
      }),
    );
    const ended = (error?: Error) => {
      if (!this.open.delete(res)) return;
      if (error) this.onerror?.(new Error(`SSE stream disconnected: ${error}`));
      if ((reconnectable || primed) && !responded) this.reconnect(lastEventId);
    };
    res.on('end', () => ended());
    res.on('error', (e) => ended(e));
    res.on('aborted', () => ended(new Error('aborted')));
  }

  /** A message from the server, passed on as it came when it has the shape of one. */
  private deliver(m: unknown, related?: RequestId): 'response' | 'other' | null {
    if (!isMessage(m)) {
      this.onerror?.(new Error('The server sent something that is not a JSON-RPC message'));
      return null;
    }
    const response = 'result' in m || 'error' in m;
    this.onmessage?.(
      m as JSONRPCMessage,
      related === undefined || response ? undefined : { relatedRequestId: related },
    );
    // As the SDK's client: only a result ends the stream's need to resume (an error does not).
    return 'result' in m ? 'response' : 'other';
  }

  private request(
    method: 'POST' | 'GET',
    authorization: string | null,
    body: string | null,
    lastEventId?: string,
    resendable = true,
  ): Promise<IncomingMessage> {
    if (this.closed) return Promise.reject(new Error('Transport closed'));
    const headers: Record<string, string | number> = {
      accept: body === null ? 'text/event-stream' : 'application/json, text/event-stream',
    };
    if (this.sessionId) headers['mcp-session-id'] = this.sessionId;
    if (this.protocolVersion) headers['mcp-protocol-version'] = this.protocolVersion;
    if (authorization) headers.authorization = authorization;
    if (lastEventId) headers['last-event-id'] = lastEventId;
    if (body !== null) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = Buffer.byteLength(body);
    }
    return this.attempt(method, headers, body, resendable);
  }

  private attempt(
    method: 'POST' | 'GET',
    headers: Record<string, string | number>,
    body: string | null,
    retry: boolean,
  ): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const send = this.url.protocol === 'https:' ? httpsRequest : httpRequest;
      const req = send({ ...this.target, method, headers, agent: this.agent });
      this.open.add(req);
      req.on('response', (res) => {
        this.open.delete(req);
        resolve(res);
      });
      req.on('error', (error: NodeJS.ErrnoException) => {
        this.open.delete(req);
        // A kept-alive connection the server closed as we reused it (it had gone idle, or the
        // server went away): the request met a closed socket before any answer, so it is sent
        // again once on a new connection, as a fresh connection would have carried it (the
        // pattern Node's documentation gives for this race). A server that crashed while handling
        // the request looks the same, so only what may safely run twice is resent: everything but
        // a tools/call, and a call to a trusted read-only tool (UpstreamSendOptions.resendable).
        // A write that meets this is reported as the lost connection it is: unknown.
        if (retry && req.reusedSocket && !this.closed && (error.code === 'ECONNRESET' || error.code === 'EPIPE'))
          return void this.attempt(method, headers, body, false).then(resolve, reject);
        reject(error);
      });
      req.on('close', () => {
        if (this.open.delete(req)) reject(new Error('Transport closed'));
      });
      req.end(body ?? undefined);
    });
  }
}

/** What a send may say beyond the SDK's options. */
export type UpstreamSendOptions = TransportSendOptions & {
  /** May be sent again on a new connection if a reused one turns out closed (default: not a tools/call). */
  resendable?: boolean;
  /** The client's HTTP request this send belongs to: its Authorization goes up, the server's refusal back. */
  exchange?: Exchange;
};

/** What a message from the server carries beside it. */
export interface FromServer extends MessageExtraInfo {
  /** The request whose answer stream (the server's SSE answer to that POST) carried the message. */
  relatedRequestId?: RequestId;
}

function header(headers: IncomingHttpHeaders, name: string): string | null {
  const v = headers[name];
  return typeof v === 'string' ? v : Array.isArray(v) ? (v[0] ?? null) : null;
}

const mediaType = (contentType: string | null) => contentType?.split(';')[0].trim().toLowerCase() ?? null;

function webHeaders(headers: IncomingHttpHeaders): Headers {
  const h = new Headers();
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(', ') : v);
  return h;
}

function readAll(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}
