// Streamable HTTP mode: MCP clients connect to http://HOST:PORT/mcp and are served by SDK v2's
// server with the gateway's factory (modern-server.ts), in their era (http-modern.ts): a
// 2026-07-28 request by itself, a 2025 client in its session. Towards the server, SDK v2's client
// in whatever era the server offers (upstream-client.ts). The client's Authorization header is
// sent to the server as it came; the server's 401/403 with its WWW-Authenticate comes back as it
// was sent. Neither is kept. A request whose Host or Origin is not a name the gateway is reached
// by is refused before anything else (host-guard.ts).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GatewayContext } from './context';
import type { UpstreamHead } from './exchange';
import { hostCheck, refuseHost } from './host-guard';
import { modernLeg } from './http-modern';
import type { LeanAnswer } from './modern-lean';

const MAX_BODY = 4 * 1024 * 1024;

export interface HttpGateway {
  server: Server;
  url: string;
  close(): Promise<void>;
}

export interface HttpOptions {
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
  const checkHost = hostCheck(host, options.allowedHosts);
  const modern = modernLeg(ctx, upstream);

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
    const authorization = header(req, 'authorization');
    const signal = clientGone(res);
    // A plain call (2026-07-28, or inside a 2025 session) is answered from the node request straight
    // to the node response: a web Request and Response per call cost more than the call does (bench:gateway).
    const lean = await modern.lean(req, parsed, authorization, signal);
    if (lean && 'answer' in lean) return writeLean(res, lean.answer);
    const request = webRequest(req, body, signal);
    let answer: Response | UpstreamHead | null;
    if (req.headers['mcp-session-id'] !== undefined) {
      answer = await modern.inSession(request, parsed, authorization, lean?.exchange);
      if (!answer) return plain(res, 404, 'Session not found');
    } else if (lean || (await modern.serves(req, request, parsed))) {
      answer = await modern.answer(request, parsed, authorization, lean?.exchange);
    } else if (req.method === 'POST' && isInitialize(parsed)) {
      answer = await modern.legacySession(request, parsed, authorization);
    } else {
      // Neither a 2026-07-28 request nor a 2025 session's: what a 2025 server answers a request without its session.
      return jsonRpcError(res, 400, parsed, -32000, 'Bad Request: Mcp-Session-Id header is required');
    }
    if (!(answer instanceof Response)) return writeRefusal(res, answer);
    return pipe(answer, res);
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
    async close() {
      await modern.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The answer's status, headers and body as it comes, chunk by chunk (an SSE stream stays open while calls run), with backpressure. */
async function pipe(answer: Response, res: ServerResponse): Promise<void> {
  res.writeHead(answer.status, Object.fromEntries(answer.headers));
  if (!answer.body) return void res.end();
  // An event stream's head goes at once: its first event may be long in coming (a GET stream's, say).
  if (answer.headers.get('content-type')?.startsWith('text/event-stream')) res.flushHeaders();
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

function webRequest(req: IncomingMessage, body: string | 'too_large' | null, signal: AbortSignal): Request {
  return new Request(new URL(req.url ?? '/mcp', `http://${req.headers.host ?? 'gateway.invalid'}`), {
    method: req.method,
    headers: toHeaders(req),
    body: typeof body === 'string' ? body : undefined,
    signal,
  });
}

/** The lean path's answer, its length given (one write, not chunked); nothing for a client that is gone (no body). */
function writeLean(res: ServerResponse, answer: LeanAnswer): void {
  if (answer.body === null) return void res.end();
  res.writeHead(answer.status, { ...answer.headers, 'content-length': Buffer.byteLength(answer.body) });
  res.end(answer.body);
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

function jsonRpcError(res: ServerResponse, status: number, parsed: unknown, code: number, message: string): void {
  const id = typeof parsed === 'object' && parsed !== null ? (parsed as { id?: unknown }).id : undefined;
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      jsonrpc: '2.0',
      id: typeof id === 'string' || typeof id === 'number' ? id : null,
      error: { code, message },
    }),
  );
}

function plain(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(text);
}
