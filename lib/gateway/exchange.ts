// Streamable HTTP mode: which incoming HTTP request a send to the server belongs to, so that the
// server's 401/403 (and its WWW-Authenticate) go back to that request unchanged, and the client's
// Authorization header goes to the server unchanged. Held in memory for the request only: never
// stored, logged or reported.
import { AsyncLocalStorage } from 'node:async_hooks';

export interface UpstreamHead {
  status: number;
  headers: Headers;
  body: string;
}

export interface Exchange {
  authorization: string | null;
  /** Resolves with the server's refusal (401/403), or null once the server accepted or nothing was sent. */
  refusal: Promise<UpstreamHead | null>;
  settle(head: UpstreamHead | null): void;
}

export const exchanges = new AsyncLocalStorage<Exchange>();

export function newExchange(authorization: string | null): Exchange {
  let settle!: (head: UpstreamHead | null) => void;
  let settled = false;
  const refusal = new Promise<UpstreamHead | null>((resolve) => {
    settle = (head) => {
      if (settled) return;
      settled = true;
      resolve(head);
    };
  });
  return { authorization, refusal, settle };
}

/** The gateway answers this call itself (held for approval, or refused): the server is not asked now. */
export function settleLocally(): void {
  exchanges.getStore()?.settle(null);
}
