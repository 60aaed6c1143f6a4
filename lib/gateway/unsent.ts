// A call on its way through the gateway is stoppable until it is forwarded (call.ts enforced()):
// each await on its way registers it, so the client's notifications/cancelled can abort it.
import type { Id } from './call';

/** One call's registration in `unsent`, made by its first await on the way (see call.ts enforced()). */
export class Unsent {
  private controller: AbortController | null = null;

  constructor(
    private readonly calls: Map<Id, AbortController>,
    private readonly id: Id,
  ) {}

  /** Registers the call (once); its signal is aborted when the client cancels it. */
  signal(): AbortSignal {
    if (!this.controller) this.calls.set(this.id, (this.controller = new AbortController()));
    return this.controller.signal;
  }

  /** Forwarded, or answered by the gateway: no longer the gateway's to stop. */
  release(): void {
    if (this.controller && this.calls.get(this.id) === this.controller) this.calls.delete(this.id);
  }
}
