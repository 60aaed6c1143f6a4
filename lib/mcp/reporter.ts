// Sends outcome records to Countersign (`POST /api/v1/outcomes`) in the background. The tool call
// never waits for it and never sees its failures: `enqueue` only appends to a bounded buffer.
//
// - Batches: up to `batchSize` records, sent when that many are waiting or `flushIntervalMs` after
//   the first one arrived.
// - Retries what lib/http-retry.ts calls retryable (408, 425, 429, 5xx), network failures and 401/403
//   (which an operator can fix by restoring the key) with growing, jittered backoff, honouring
//   Retry-After. A batch that fails that way goes back to the front, so records keep their order.
//   Resending a batch whose answer was lost is harmless: the server answers a known eventId as a
//   duplicate.
// - A 422 names the refused records (`records.N.…`): those are dropped and counted, the rest resent.
//   A 413 halves the batch size. Any other 4xx drops the batch (counted): resending cannot help.
//   What each answer means: reporter-batch.ts.
// - Bounded: past `maxBuffered` records the oldest are dropped and counted.
// - `flush()` sends what is buffered now; `close()` flushes with retries until a deadline. Timers
//   are unref'd, so call `close()` before the process exits.
import type { Outcome } from '../outcomes/schemas';
import { backoffDelay } from '../backoff';
import { sleep, type CountersignEndpoint } from './countersign-http';
import { postBatch } from './reporter-batch';
import { dropOldest } from '../bounded';

export interface ReporterOptions extends CountersignEndpoint {
  /** Records per request (1..1000, default 100). */
  batchSize?: number;
  /** How long the first buffered record may wait for companions (default 1000 ms). */
  flushIntervalMs?: number;
  /** Records kept in memory at most; past it the oldest are dropped (default 10 000). */
  maxBuffered?: number;
  backoff?: { initialMs?: number; maxMs?: number };
  /** Told about every failed send and every drop; its own errors are ignored. */
  onEvent?: (event: ReporterEvent) => void;
  random?: () => number;
}

export type ReporterEvent =
  | { kind: 'send_failed'; status: number | null; code: string | null; records: number; retryInMs: number }
  | { kind: 'rejected'; status: number; code: string | null; records: number }
  | { kind: 'dropped'; records: number };

export interface ReporterStats {
  /** Waiting to be sent, including a batch in flight. */
  buffered: number;
  /** Accepted by the server (new or duplicate). */
  sent: number;
  duplicates: number;
  /** Dropped because the buffer was full. */
  dropped: number;
  /** Refused by the server for good (422 and other non-retryable answers). */
  rejected: number;
  failedAttempts: number;
}

export interface FlushResult {
  ok: boolean;
  buffered: number;
}

export class OutcomeReporter {
  private readonly batchSizeMax: number;
  private batchSize: number;
  private readonly flushIntervalMs: number;
  private readonly maxBuffered: number;
  private readonly initialMs: number;
  private readonly maxMs: number;
  private buffer: Outcome[] = [];
  /** The stored ids of sent records, by eventId (for the state check: lib/mcp/retry.ts). */
  private readonly ids = new Map<string, string>();
  private later: (() => Outcome)[] = [];
  private laterScheduled = false;
  private soon = false;
  private inflight: Outcome[] = [];
  private sending: Promise<'ok' | 'failed' | 'empty'> | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private timerDue = 0;
  private failures = 0;
  private closed = false;
  private readonly counters = { sent: 0, duplicates: 0, dropped: 0, rejected: 0, failedAttempts: 0 };

  constructor(private readonly options: ReporterOptions) {
    this.batchSizeMax = clamp(options.batchSize ?? 100, 1, 1000);
    this.batchSize = this.batchSizeMax;
    this.flushIntervalMs = Math.max(0, options.flushIntervalMs ?? 1000);
    this.maxBuffered = Math.max(1, options.maxBuffered ?? 10_000);
    this.initialMs = Math.max(1, options.backoff?.initialMs ?? 500);
    this.maxMs = Math.max(this.initialMs, options.backoff?.maxMs ?? 30_000);
  }

  /** Buffers a record for sending. Returns at once and never throws. */
  enqueue(record: Outcome): void {
    try {
      if (this.closed) {
        this.drop(1);
        return;
      }
      this.buffer.push(record);
      this.enforceBound();
      // While backing off, the retry timer is already set; otherwise send a full batch now.
      if (this.failures === 0) this.schedule(this.buffer.length >= this.batchSize ? 0 : this.flushIntervalMs);
    } catch {
      // Reporting must never break the tool call.
    }
  }

  /**
   * Buffers the record `build` makes, made after the current I/O (setImmediate) so that building
   * it (classification and the like) is off the path of the call it records. `flush()`, `close()`
   * and `stats()` count and make pending ones first. Returns at once and never throws. `soon`:
   * sent as soon as it is made, not after the flush interval (a write's record, which the next
   * guard check must find in the console).
   */
  enqueueLater(build: () => Outcome, soon = false): void {
    this.later.push(build);
    this.soon ||= soon;
    if (this.laterScheduled) return;
    this.laterScheduled = true;
    setImmediate(() => this.makeLater());
  }

  /**
   * Makes the records enqueued with `enqueueLater` now, rather than after the current I/O: for a
   * decision that must see them (the gateway's read guards, when the next call came first).
   */
  makePending(): void {
    if (this.later.length) this.makeLater();
  }

  private makeLater(): void {
    this.laterScheduled = false;
    const builds = this.later;
    this.later = [];
    for (const build of builds) {
      let record: Outcome;
      try {
        record = build();
      } catch {
        continue; // reporting must never break the tool call
      }
      this.enqueue(record);
    }
    if (this.soon && this.buffer.length && this.failures === 0) this.schedule(0);
    this.soon = false;
  }

  stats(): ReporterStats {
    return { buffered: this.buffer.length + this.inflight.length + this.later.length, ...this.counters };
  }

  /**
   * The records not yet answered by Countersign (buffered or in flight), oldest first: what a
   * question to the console about earlier calls sends along (lib/gateway/guard.ts). They stay
   * queued; the console takes a later copy of one as a duplicate.
   */
  pending(): Outcome[] {
    this.makeLater();
    return [...this.inflight, ...this.buffer];
  }

  /** The id Countersign stored a sent record under, once its batch was answered. */
  idOf(eventId: string): string | undefined {
    return this.ids.get(eventId);
  }

  private remember(eventId: string, id: string): void {
    this.ids.set(eventId, id);
    // Bounded: only recent records are ever checked.
    dropOldest(this.ids, 10_000);
  }

  /** Sends everything buffered now, ignoring any backoff wait; stops at the first failed attempt. */
  async flush(): Promise<FlushResult> {
    this.makeLater();
    this.clearTimer();
    for (;;) {
      const outcome = await this.sendNext();
      if (outcome === 'empty' && !this.sending) break;
      if (outcome === 'failed') break;
    }
    if (this.failures > 0) this.schedule(this.retryDelay(null));
    const buffered = this.stats().buffered;
    return { ok: buffered === 0, buffered };
  }

  /** Stops taking records and flushes, retrying with backoff until `timeoutMs` (default 5 s). */
  async close(timeoutMs = 5000): Promise<FlushResult> {
    this.makeLater();
    this.closed = true;
    const deadline = Date.now() + timeoutMs;
    let result = await this.flush();
    while (!result.ok && Date.now() < deadline) {
      await sleep(Math.min(this.retryDelay(null), Math.max(0, deadline - Date.now())));
      result = await this.flush();
    }
    this.clearTimer();
    return result;
  }

  private schedule(delay: number): void {
    const due = Date.now() + delay;
    if (this.timer && this.timerDue <= due) return;
    this.clearTimer();
    this.timerDue = due;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.sendNext().then((outcome) => this.afterBackgroundSend(outcome));
    }, delay);
    this.timer.unref?.();
  }

  private afterBackgroundSend(outcome: 'ok' | 'failed' | 'empty'): void {
    if (outcome === 'failed') this.schedule(this.retryDelay(null));
    else if (this.buffer.length > 0) this.schedule(this.buffer.length >= this.batchSize ? 0 : this.flushIntervalMs);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  // One request at a time; a second caller waits for the one in flight.
  private sendNext(): Promise<'ok' | 'failed' | 'empty'> {
    if (this.sending) return this.sending;
    if (this.buffer.length === 0) return Promise.resolve('empty');
    this.inflight = this.buffer.splice(0, this.batchSize);
    this.sending = this.post(this.inflight).finally(() => {
      this.sending = null;
    });
    return this.sending;
  }

  private async post(batch: Outcome[]): Promise<'ok' | 'failed'> {
    const answer = await postBatch(this.options, batch);
    switch (answer.kind) {
      case 'accepted':
        for (const { eventId, id } of answer.ids) this.remember(eventId, id);
        this.counters.sent += batch.length;
        this.counters.duplicates += answer.duplicates;
        this.inflight = [];
        this.failures = 0;
        // A success after a 413 lets the batch grow back.
        this.batchSize = Math.min(this.batchSizeMax, this.batchSize * 2);
        return 'ok';
      case 'too_large':
        this.batchSize = Math.max(1, Math.floor(batch.length / 2));
        this.requeue(batch);
        return 'ok';
      case 'partly_refused':
        this.reject(answer.status, answer.code, answer.refused.size);
        this.requeue(batch.filter((_, i) => !answer.refused.has(i)));
        return 'ok';
      case 'retry': {
        this.failures++;
        this.counters.failedAttempts++;
        this.requeue(batch);
        const retryInMs = this.retryDelay(answer.retryAfterMs);
        this.emit({ kind: 'send_failed', status: answer.status, code: answer.code, records: batch.length, retryInMs });
        return 'failed';
      }
      case 'refused':
        this.reject(answer.status, answer.code, batch.length);
        this.inflight = [];
        return 'ok';
    }
  }

  private requeue(batch: Outcome[]): void {
    this.inflight = [];
    this.buffer.unshift(...batch);
    this.enforceBound();
  }

  private reject(status: number, code: string | null, records: number): void {
    this.counters.rejected += records;
    this.emit({ kind: 'rejected', status, code, records });
  }

  private enforceBound(): void {
    const over = this.buffer.length + this.inflight.length - this.maxBuffered;
    if (over > 0) this.drop(this.buffer.splice(0, Math.min(over, this.buffer.length)).length);
  }

  private drop(records: number): void {
    this.counters.dropped += records;
    this.emit({ kind: 'dropped', records });
  }

  private retryDelay(retryAfterMs: number | null): number {
    const computed = backoffDelay(Math.max(1, this.failures), {
      initialMs: this.initialMs,
      maxMs: this.maxMs,
      random: this.options.random,
    });
    return retryAfterMs == null ? computed : Math.min(this.maxMs, Math.max(computed, retryAfterMs));
  }

  private emit(event: ReporterEvent): void {
    try {
      this.options.onEvent?.(event);
    } catch {
      // A faulty listener must not break reporting.
    }
  }
}

export function createReporter(options: ReporterOptions): OutcomeReporter {
  return new OutcomeReporter(options);
}

const clamp = (n: number, min: number, max: number) => Math.min(max, Math.max(min, Math.floor(n)));
