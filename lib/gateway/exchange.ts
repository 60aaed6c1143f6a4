// The server's refusal of a client's HTTP request (its 401 or 403, with WWW-Authenticate), sent back
// to that request unchanged (modern-exchange.ts `refusalFor`, http.ts). Held in memory for the
// request only: never stored, logged or reported.
export interface UpstreamHead {
  status: number;
  headers: Headers;
  body: string;
}
