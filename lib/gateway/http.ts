// Streamable HTTP mode: MCP clients connect to http://HOST:PORT/mcp; each MCP session is a
// Downstream towards the client (the SDK's server transport, and a lean path for the plain POST
// of one request: http-downstream.ts) and an HttpUpstream towards the server's URL (keep-alive
// connections shared by all sessions), relayed by one Relay. The client's Authorization header is
// sent to the server as it came; the server's 401/403 with its WWW-Authenticate comes back as it
// was sent. Neither is kept. A request whose Host or Origin is not a name the gateway is reached
// by is refused before anything else (host-guard.ts).
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import type { GatewayContext } from './context';
import { carrying, newExchange, type Exchange, type UpstreamHead } from './exchange';
import { hostCheck, refuseHost } from './host-guard';
import { Downstream, HEAD_WAIT_MS, KEEP_ALIVE_MS, leanRequest } from './http-downstream';
import { modernLeg } from './http-modern';
import { HttpUpstream, upstreamAgent } from './http-upstream';
import { Relay } from './relay';

const MAX_BODY = 4 * 1024 * 1024;
/** `promise`, or null after `ms` (its timer cleared as soon as the promise settles: one per request). */
function within<T>(promise: Promise<T>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), ms).unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

interface Session {
  relay: Relay;
  transport: WebStandardStreamableHTTPServerTransport;
  down: Downstream;
  /** The last Authorization the client sent, for the server-initiated stream (GET). Memory only. */
  authorization: string | null;
}

export interface HttpGateway {
  server: Server;
  url: string;
  sessions: () => number;
  close(): Promise<void>;
}

export interface HttpOptions {
  /** false: every POST goes through the SDK's transport (the tests compare both paths). Default true. */
  lean?: boolean;
  /** Names besides the loopback ones that `Host` and `Origin` may carry (`--allowed-hosts`). */
  allowedHosts?: readonly string[];
}

export async function runHttp(
  ctx: GatewayContext,
  upstream: URL,
  host: string,
  port: number,
  options: HttpOptions = {},
): Promise<HttpGateway> {
  const sessions = new Map<string, Session>();
  const agent = upstreamAgent(upstream);
  const lean = options.lean ?? true;
  const checkHost = hostCheck(host, options.allowedHosts);
  const modern = modernLeg(ctx, upstream);
  // Lean answers silent for KEEP_ALIVE_MS turn into kept-alive SSE streams, and their wait for the
  // server's head is bounded (one timer for all: LeanAnswer.idle).
  const sweeper = setInterval(
    () => {
      const now = performance.now();
      for (const s of sessions.values()) s.down.sweep(now);
    },
    Math.round(KEEP_ALIVE_MS / 5),
  ).unref();

  function newSession(): Session {
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => void sessions.set(id, session),
      onsessionclosed: (id) => void sessions.delete(id),
    });
    const down = new Downstream(transport);
    const session: Session = { relay: undefined as unknown as Relay, transport, down, authorization: null };
    const up = new HttpUpstream(upstream, agent, () => session.authorization);
    session.relay = new Relay(down, up, ctx);
    session.relay.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    return session;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Before anything else, the body unread: a foreign Host or Origin gets nothing from the gateway.
    const foreign = checkHost(req.headers);
    if (foreign) return refuseHost(res, foreign);
    if (req.url !== '/mcp' && new URL(req.url ?? '/', 'http://gateway.invalid').pathname !== '/mcp')
      return plain(res, 404, 'Not found: the MCP endpoint is /mcp');
    const body = req.method === 'POST' ? await readBody(req) : null;
    if (body === 'too_large') return plain(res, 413, 'Request body too large');
    let parsed: unknown;
    if (typeof body === 'string') {
      try {
        parsed = JSON.parse(body);
      } catch {
        parsed = undefined;
      }
    }
    if (req.method === 'POST' && !req.headers['mcp-session-id']) {
      const request = webRequest(req, res, body);
      if (await modern.serves(req, request, parsed)) {
        const answer = await modern.answer(request, parsed, header(req, 'authorization'));
        if (!(answer instanceof Response)) return writeRefusal(res, answer);
        return pipe(answer, res);
      }
    }
    const sessionId = header(req, 'mcp-session-id');
    let session = sessionId ? sessions.get(sessionId) : undefined;
    let fresh = false;
    if (!session) {
      // A 2025 session in front of a 2026-07-28 server is SDK v2's (http-modern.ts).
      const bridged = sessionId
        ? await modern.inSession(webRequest(req, res, body), parsed, header(req, 'authorization'))
        : req.method === 'POST' && isInitialize(parsed)
          ? await modern.legacySession(webRequest(req, res, body), parsed, header(req, 'authorization'))
          : null;
      if (bridged) return pipe(bridged, res);
      if (sessionId) return plain(res, 404, 'Session not found');
      session = newSession();
      fresh = true;
      await session.relay.start();
    }
    const authorization = header(req, 'authorization');
    session.authorization = authorization;
    const exchange = newExchange(authorization);
    const request = lean && !fresh && req.method === 'POST' ? leanRequest(req.headers, parsed) : null;
    if (request && (await leanPost(session, request, exchange, res))) return;
    const answer = await session.transport.handleRequest(webRequest(req, res, body), {
      authInfo: carrying(exchange),
      ...(parsed !== undefined ? { parsedBody: parsed } : {}),
    });
    const hasRequest = (Array.isArray(parsed) ? parsed : [parsed]).some(
      (m) => m && typeof m === 'object' && 'method' in m && 'id' in m,
    );
    // Wait for the server's answer to this POST, to pass a refusal back as it was (bounded).
    const refusal =
      req.method === 'POST' && hasRequest && answer.ok ? await within(exchange.refusal, HEAD_WAIT_MS) : null;
    if (refusal) {
      await answer.body?.cancel().catch(() => undefined);
      if (fresh) void session.relay.close();
      return writeRefusal(res, refusal);
    }
    if (fresh && !session.transport.sessionId) void session.relay.close();
    return pipe(answer, res);
  }

  /** The lean path (http-downstream.ts); false when the SDK's transport is to answer instead. */
  async function leanPost(session: Session, request: JSONRPCRequest, exchange: Exchange, res: ServerResponse) {
    const answer = session.down.post(request, res, exchange);
    if (!answer) return false;
    // As on the SDK's path: the server's refusal of the request, if it refuses, goes back instead.
    // Bounded by the sweep (LeanAnswer.idle), not a timer per request.
    const refusal = await exchange.refusal;
    if (refusal) {
      answer.finished();
      writeRefusal(res, refusal);
    } else answer.start();
    return true;
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      ctx.log(`request failed: ${error instanceof Error ? error.name : 'Error'}`);
      if (!res.headersSent) plain(res, 500, 'Gateway error');
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    server,
    url: `http://${shown}:${address.port}/mcp`,
    sessions: () => sessions.size,
    async close() {
      clearInterval(sweeper);
      await modern.close();
      await Promise.allSettled([...sessions.values()].map((s) => s.relay.close()));
      server.closeAllConnections();
      agent.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The answer's status, headers and body as it comes, chunk by chunk (an SSE stream stays open while calls run), with backpressure. */
async function pipe(answer: Response, res: ServerResponse): Promise<void> {
  res.writeHead(answer.status, Object.fromEntries(answer.headers));
  if (!answer.body) return void res.end();
  const reader = answer.body.getReader();
  let gone = false;
  res.on('close', () => {
    gone = true;
    reader.cancel().catch(() => undefined);
  });
  for (;;) {
    const { value, done } = await reader.read();
    if (done || gone) break;
    if (!res.write(value)) await drained(res);
  }
  if (!gone) res.end();
}

function webRequest(req: IncomingMessage, res: ServerResponse, body: string | 'too_large' | null): Request {
  return new Request(new URL(req.url ?? '/mcp', `http://${req.headers.host ?? 'gateway.invalid'}`), {
    method: req.method,
    headers: toHeaders(req),
    body: typeof body === 'string' ? body : undefined,
    signal: clientGone(res),
  });
}

/**
 * Aborted when the client goes away before its answer was written. A 2026-07-28 client cancels a
 * request this way (it closes the request's stream; its era sends no notifications/cancelled over
 * HTTP), and SDK v2's handler then aborts the request's work (`ctx.mcpReq.signal`).
 */
function clientGone(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}

/** The server's 401/403 as it sent it: status, content type, WWW-Authenticate and body. */
function writeRefusal(res: ServerResponse, refusal: UpstreamHead): void {
  const headers: Record<string, string> = { 'content-type': refusal.headers.get('content-type') ?? 'text/plain' };
  const challenge = refusal.headers.get('www-authenticate');
  if (challenge) headers['www-authenticate'] = challenge;
  res.writeHead(refusal.status, headers);
  res.end(refusal.body);
}

const isInitialize = (m: unknown) =>
  typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'initialize';

function header(req: IncomingMessage, name: string): string | null {
  const v = req.headers[name];
  return typeof v === 'string' ? v : Array.isArray(v) ? (v[0] ?? null) : null;
}

// Hop-by-hop headers stay here; the client's Authorization is forwarded by the upstream fetch.
function toHeaders(req: IncomingMessage): Headers {
  const h = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined || ['connection', 'content-length', 'transfer-encoding', 'host'].includes(k)) continue;
    h.set(k, Array.isArray(v) ? v.join(', ') : v);
  }
  return h;
}

function readBody(req: IncomingMessage): Promise<string | 'too_large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        resolve('too_large');
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

function plain(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(text);
}
