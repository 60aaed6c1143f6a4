// The 2026-07-28 calls the gateway last answered with an `input_required` round and whose client
// has not come back yet (modern-call.ts). A call is recorded once, when it ends: answered, refused,
// failed or cancelled. A call whose client never sends the retry never ends by itself, so the
// round it was left at is held here as its record-to-be: posted when the round's requestState can
// no longer be used (its TTL), when the gateway closes, or when too many are held (the oldest
// first), and dropped when the client comes back with the state (the retry records the call).
// A call still running upstream between its rounds (held-calls.ts) is held for a shorter time,
// and cancelled upstream when it is posted: nobody is left to answer its server (a call its server
// ended meanwhile is recorded as that end instead).
// In memory, as the reporter's own buffer is: a gateway killed outright loses both.
import type { Outcome } from '../outcomes/schemas';
import type { OutcomeReporter } from '../mcp/reporter';

/** At most this many abandoned-looking calls are held; beyond, the oldest is recorded at once. */
const MAX_OPEN = 10_000;

export class OpenCalls {
  private readonly open = new Map<
    string,
    { build: () => Outcome; timer: NodeJS.Timeout; posted?: () => boolean | void }
  >();

  constructor(
    private readonly reporter: OutcomeReporter,
    /** How long after its last round a call counts as abandoned. */
    private readonly abandonAfterMs: number,
    private readonly max = MAX_OPEN,
  ) {}

  /**
   * The call `id` was answered with a round: `build` makes its record if it is never retried,
   * after `afterMs` (default: the abandonment time), when `posted` is also called; `posted`
   * returns true when it recorded the call itself (then `build` is not used).
   */
  hold(id: string, build: () => Outcome, options: { afterMs?: number; posted?: () => boolean | void } = {}): void {
    this.take(id);
    const timer = setTimeout(() => this.post(id), options.afterMs ?? this.abandonAfterMs);
    timer.unref();
    this.open.set(id, { build, timer, posted: options.posted });
    while (this.open.size > this.max) this.post(this.open.keys().next().value as string);
  }

  /** The client came back with the call's state: the retry records it. */
  take(id: string): void {
    const held = this.open.get(id);
    if (!held) return;
    clearTimeout(held.timer);
    this.open.delete(id);
  }

  /** The gateway closes: every call still waiting for its client is recorded as left at its round. */
  flush(): void {
    for (const id of [...this.open.keys()]) this.post(id);
  }

  get size(): number {
    return this.open.size;
  }

  private post(id: string): void {
    const held = this.open.get(id);
    if (!held) return;
    clearTimeout(held.timer);
    this.open.delete(id);
    if (held.posted?.() !== true) this.reporter.enqueueLater(held.build);
  }
}
