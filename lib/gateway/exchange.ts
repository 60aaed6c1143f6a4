// Streamable HTTP mode: which incoming HTTP request a send to the server belongs to, so that the
// server's 401/403 (and its WWW-Authenticate) go back to that request unchanged, and the client's
// Authorization header goes to the server unchanged. Held in memory for the request only: never
// stored, logged or reported.
//
// Passed along explicitly with the message (http.ts → the relay → call.ts → the upstream), never
// through AsyncLocalStorage: its first use turns on Node's promise hooks for the whole process,
// a cost on every promise of every call (bench:gateway measures the gateway's CPU per call).
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';

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

/** What a message from the client carries beside it: the HTTP exchange it came in (HTTP mode only). */
export interface FromClient extends MessageExtraInfo {
  exchange?: Exchange;
}

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

// The SDK's server transport hands each message of a POST to onmessage with the `authInfo` it was
// given for that POST, as given: the exchange rides there through the SDK's path. Nothing of the
// client's credentials is put in it (the token stays empty); it never leaves the process.
export function carrying(exchange: Exchange): AuthInfo {
  return { token: '', clientId: '', scopes: [], extra: { exchange } };
}

export function carried(extra: MessageExtraInfo | undefined): Exchange | undefined {
  return extra?.authInfo?.extra?.exchange as Exchange | undefined;
}
