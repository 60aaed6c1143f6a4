// A 2025 session's SSE events, kept so that a client whose stream broke can resume it with
// Last-Event-ID (docs/gateway.md "Resuming a stream"): SDK v2's session transport asks this store
// for what the client missed and sends it again, then carries on with the stream if the request is
// still running. One store per session, in memory, dropped with the session.
//
// Bounded twice, so that thousands of sessions stay cheap: at most `events` per session (the
// oldest go first), and a message is kept at most `ageMs` (a client reconnects within seconds, told
// when by the priming event's `retry`). A stream whose messages aged out keeps its last event id
// without the message, so a client that saw everything of a call still quiet (held for people, say)
// can come back to it; nothing after that id would have been replayed anyway.
import type { EventId, EventStore, JSONRPCMessage, StreamId } from '@modelcontextprotocol/server';

export interface EventLimits {
  /** Events kept per session, messages or not. */
  events: number;
  /** How long a message is kept for a replay. */
  ageMs: number;
}

export const EVENT_LIMITS: EventLimits = { events: 100, ageMs: 30_000 };

/** What a client that lost its stream is told to wait before it reconnects (the SSE `retry` field). */
export const RECONNECT_MS = 1000;

const PRIMING = /^id: [^\n]*\n(?:retry: \d+\n)?data: \n\n$/;
const decoder = new TextDecoder();

/** Whether an SSE chunk is a stream's priming event: an id and empty data, sent before anything else. */
export function isPrimingEvent(chunk: Uint8Array): boolean {
  return chunk.length < 256 && PRIMING.test(decoder.decode(chunk));
}

interface Stored {
  stream: StreamId;
  /** Null once aged out: only the id stays, as its stream's last. */
  message: JSONRPCMessage | null;
  at: number;
}

export class SessionEvents implements EventStore {
  // In the order stored: the replay order, and the oldest first out.
  private readonly events = new Map<EventId, Stored>();
  // Each stream's last event id, and the one whose message aged out while it was the last.
  private readonly last = new Map<StreamId, EventId>();
  private readonly kept = new Map<StreamId, EventId>();
  private seq = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly limits: EventLimits = EVENT_LIMITS,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** Events held, and how many of them still carry their message. */
  held(): { events: number; messages: number } {
    let messages = 0;
    for (const e of this.events.values()) if (e.message) messages++;
    return { events: this.events.size, messages };
  }

  async storeEvent(stream: StreamId, message: JSONRPCMessage): Promise<EventId> {
    const id = String(++this.seq);
    this.events.set(id, { stream, message, at: this.now() });
    this.last.set(stream, id);
    for (const oldest of this.events.keys()) {
      if (this.events.size <= this.limits.events) break;
      this.drop(oldest);
    }
    if (!this.timer) this.expireAfter(this.limits.ageMs);
    return id;
  }

  /** Undefined for an id this session never gave or no longer holds: SDK v2 answers 400. */
  async getStreamIdForEventId(id: EventId): Promise<StreamId | undefined> {
    return this.events.get(id)?.stream;
  }

  async replayEventsAfter(
    lastEventId: EventId,
    { send }: { send: (id: EventId, message: JSONRPCMessage) => Promise<void> },
  ): Promise<StreamId> {
    const from = this.events.get(lastEventId);
    if (!from) throw new Error('unknown event id');
    let after = false;
    // The live map: an event stored while the replay is sent is sent too.
    for (const [id, e] of this.events) {
      if (id === lastEventId) after = true;
      else if (after && e.stream === from.stream && e.message) await send(id, e.message);
    }
    return from.stream;
  }

  /**
   * Ages out the messages stored `ageMs` ago or earlier; runs on its own timer while any message is
   * held. An id stays only while everything after it on its stream can still be replayed.
   */
  expire(): void {
    this.timer = undefined;
    const cutoff = this.now() - this.limits.ageMs;
    for (const [id, e] of this.events) {
      if (!e.message) continue;
      if (e.at > cutoff) return this.expireAfter(e.at - cutoff);
      const kept = this.kept.get(e.stream);
      if (kept !== undefined) this.drop(kept);
      if (this.last.get(e.stream) !== id) this.drop(id);
      else {
        e.message = null;
        this.kept.set(e.stream, id);
      }
    }
  }

  private drop(id: EventId): void {
    const e = this.events.get(id);
    if (!e) return;
    this.events.delete(id);
    if (this.last.get(e.stream) === id) this.last.delete(e.stream);
    if (this.kept.get(e.stream) === id) this.kept.delete(e.stream);
  }

  // The timer holds the store weakly: a closed session's store goes with it.
  private expireAfter(ms: number): void {
    const store = new WeakRef(this);
    this.timer = setTimeout(() => store.deref()?.expire(), ms).unref();
  }
}
