// List changes told to a gateway's clients, one mechanism for every leg: over HTTP to the clients
// following them on subscriptions/listen (http-modern.ts), over stdio to the host (stdio-modern.ts),
// whether the server sent them unasked (2025) or on the gateway's own subscription (2026-07-28).
/** Within this long of a list change told, further ones of its kind are folded into one. */
export const COALESCE_MS = 250;

/**
 * A kind of list change, told to the clients that follow it (every open subscriptions/listen
 * stream, whose queues the SDK does not bound) at most once per `ms`. A list_changed
 * notification carries nothing but "this list changed, list it again", so the rule loses nothing:
 * the first change of a burst is told at once, every further one within the window is dropped,
 * and if any was dropped one more is told when the window ends (so the last change is never
 * lost). A server that floods the gateway's one subscription with 50,000 changes costs each
 * client a few notifications, and the gateway one pending flag per kind.
 */
export function coalesced(tell: () => void, ms = COALESCE_MS): { (): void; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  let pending = false;
  const tick = () => {
    if (!pending) return void (timer = undefined);
    pending = false;
    tell();
    timer = setTimeout(tick, ms).unref();
  };
  const told = () => {
    if (timer) return void (pending = true);
    tell();
    timer = setTimeout(tick, ms).unref();
  };
  told.cancel = () => {
    clearTimeout(timer);
    timer = undefined;
    pending = false;
  };
  return told;
}
