// The 2025 sessions of the HTTP gateway, ended once idle (docs/gateway.md "Idle sessions"): most
// clients never send DELETE, and each session holds a server instance, an event store and its own
// upstream session. One sweep timer for all of them; a session with a request in flight, or a
// stream open (a call's, a GET's), is never idle, however long it lasts.
import {
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResponse,
  type RequestId,
  type WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import { StreamableHTTPClientTransport, type Client } from '@modelcontextprotocol/client';

/** Default for `--session-idle` (docs/gateway.md "Idle sessions" says why this long). */
export const SESSION_IDLE_MS = 30 * 60_000;
/** The sweep runs at half the idle time, at most this far apart: a session ends within 1.5× its idle time. */
const SWEEP_MAX_MS = 60_000;
/** Sessions ended at once by one sweep (each may send a DELETE upstream). */
const ENDING_AT_ONCE = 16;

type Transport = WebStandardStreamableHTTPServerTransport;

/**
 * What a session's transport is doing: the client's requests not yet answered (seen as they are
 * delivered to the server and as its answers are sent, so a call whose stream broke still counts),
 * the requests being served and the streams open.
 */
export class Activity {
  private readonly calls = new Set<RequestId>();
  private open = 0;
  private last = Date.now();

  /** Follows `transport`, whose server is already connected to it. */
  constructor(transport: Transport) {
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      this.last = Date.now();
      if (isJSONRPCRequest(message)) this.calls.add(message.id);
      // A cancelled request gets no answer.
      else if (isJSONRPCNotification(message) && message.method === 'notifications/cancelled') {
        const id = (message.params as { requestId?: RequestId } | undefined)?.requestId;
        if (id !== undefined) this.calls.delete(id);
      }
      deliver?.(message, extra);
    };
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      if (isJSONRPCResponse(message) && message.id !== undefined) {
        this.calls.delete(message.id);
        this.last = Date.now();
      }
      return send(message, options);
    };
  }

  /** Milliseconds since the session was last used; 0 while in use. */
  idleFor(now: number): number {
    return this.open > 0 || this.calls.size > 0 ? 0 : now - this.last;
  }

  /** The session is in use until the returned function is called (once is enough). */
  enter(): () => void {
    this.open++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.open--;
      this.last = Date.now();
    };
  }

  /** A stream's answer, the session in use until it ends, is cancelled, or its client is gone. */
  streaming(response: Response, gone: AbortSignal): Response {
    if (!response.body) return response;
    const leave = this.enter();
    if (gone.aborted) leave();
    else gone.addEventListener('abort', leave, { once: true });
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = await reader.read().catch(() => ({ done: true, value: undefined }) as const);
        if (!next.done) return controller.enqueue(next.value);
        leave();
        controller.close();
      },
      cancel(reason) {
        leave();
        return reader.cancel(reason);
      },
    });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  }
}

interface Session {
  transport: Transport;
  activity: Activity;
  /** Everything a DELETE ends besides the transport (its upstream session). */
  ending: () => Promise<void>;
}

/** The open 2025 sessions by id, and the sweep that ends those idle for `idleMs`. */
export class IdleSessions {
  private readonly sessions = new Map<string, Session>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly idleMs: number,
    private readonly log: (line: string) => void,
  ) {
    this.timer = setInterval(() => void this.sweep(), Math.min(idleMs / 2, SWEEP_MAX_MS));
    this.timer.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  set(id: string, session: Session): void {
    this.sessions.set(id, session);
  }

  get(id: string): Session | undefined {
    return this.sessions.get(id);
  }

  /** Forgets the session (its client's DELETE, or expiry) and returns it. */
  take(id: string): Session | undefined {
    const session = this.sessions.get(id);
    this.sessions.delete(id);
    return session;
  }

  /** Ends every session idle for the idle time: as its client's DELETE would, its upstream session first. */
  async sweep(now = Date.now()): Promise<number> {
    const idle: Session[] = [];
    for (const [id, session] of this.sessions)
      if (session.activity.idleFor(now) >= this.idleMs) idle.push(this.take(id)!);
    if (idle.length === 0) return 0;
    const next = idle.values();
    const end = async () => {
      for (const session of next) {
        await session.ending().catch(() => undefined);
        await session.transport.close().catch(() => undefined);
      }
    };
    await Promise.all(Array.from({ length: Math.min(ENDING_AT_ONCE, idle.length) }, end));
    this.log(`ended ${idle.length} idle 2025 session${idle.length === 1 ? '' : 's'}`);
    return idle.length;
  }

  /** The gateway closes: its timer stops, and every session's transport is closed. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.allSettled(all.map((s) => s.transport.close()));
  }
}

/** Ends a client's own upstream session as SDK v2's client does (a DELETE, when the server gave an id). */
export async function terminated(client: Client | null): Promise<void> {
  const transport = client?.transport;
  if (transport instanceof StreamableHTTPClientTransport && transport.sessionId) await transport.terminateSession();
}
