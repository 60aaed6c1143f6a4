// A 2026-07-28 client's `tools/call` to a 2025 server, held open upstream while the server asks the
// client something mid-call (docs/gateway.md "Server requests mid-call"). A 2025 server asks by
// sending its own request (`elicitation/create`, `sampling/createMessage`, `roots/list`) and
// answers the call only once it has its answer; a 2026-07-28 client is asked only by ending its
// request with an `input_required` round, and answers in its retry. So the upstream call outlives
// the client's request: it is held here, with its server's pending requests. A round mirrors them
// as input requests, its requestState names the held call and the round (round-state.ts), and the
// retry's `inputResponses` answer them; then the retry waits for the call's result, or the next
// request of the server (another round).
// - Routing: a 2025 session is shared by every client with the same credential, so a server's
//   request goes to the call it belongs to, never to another client's: the `route` given to
//   `answerServerRequests` names it (over HTTP, the call whose upstream stream carried the request,
//   sent there for its `relatedRequestId`: upstream-client.ts; over stdio, the one call in flight).
//   A request that names no call, or names one whose client did not declare the capability, is
//   refused to the server as a client without that capability would (method not found).
// - Bounds: at most MAX_ROUNDS rounds per call (further requests of the server are refused to it),
//   and between a round and its retry the call is held only for a while (modern-call.ts holds it in
//   open-calls.ts, which then cancels it here and records it as left at its round, or, when the
//   server ended it in the meantime, as the server's outcome).
// - In memory: a gateway restarted between a round and its retry has lost the call; the retry's
//   state names a call that is not here and gets the invalid-state error.
import { randomUUID } from 'node:crypto';
import { CLIENT_CAPABILITIES_META_KEY, ProtocolError, type Client, type Progress } from '@modelcontextprotocol/client';
import type { ClientCapabilities, InputRequests, ServerContext } from '@modelcontextprotocol/server';
import { taskAsker } from './task-records';

/** Rounds of one call, as many as the SDK's legacy shim gives a bridged 2025 client. */
export const MAX_ROUNDS = 8;
/** How long a call is held upstream for its client's retry after a round (then cancelled). */
export const HOLD_MS = 5 * 60_000;

const METHOD_NOT_FOUND = -32601;
/** The requests a 2025 server may send its client mid-call, which become rounds. */
export const SERVER_ASKS = ['elicitation/create', 'sampling/createMessage', 'roots/list'] as const;
export type AskMethod = (typeof SERVER_ASKS)[number];
/** The client capability each of them needs. */
export const KIND: Record<AskMethod, string> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
};

interface Ask {
  key: string;
  method: AskMethod;
  params: Record<string, unknown> | undefined;
  answer(result: Record<string, unknown>): void;
  refuse(error: Error): void;
}

/** What a client's request of a held call gets next. */
export type Next =
  | { done: Record<string, unknown> }
  | { failed: unknown }
  | { asks: InputRequests; round: number }
  /** The client's request was cancelled: so was the call, upstream. */
  | { cancelled: true };

/** How the server ended the call: its result, or its error. */
export type Ended = { done: Record<string, unknown> } | { failed: unknown };

export class HeldCall<T = unknown> {
  readonly id = randomUUID();
  /** Rounds put to the client so far; a retry answers the last one. */
  round = 0;
  private asked = 0;
  /** The server's requests not put to the client yet. */
  private readonly waiting: Ask[] = [];
  /** Those put to it in the last round, by key, until its retry answers them. */
  private out = new Map<string, Ask>();
  private ended?: Ended;
  private endAt?: number;
  private wake?: () => void;
  private attached = false;
  private readonly upstream = new AbortController();
  private progress?: (progress: Progress) => void;
  private capabilities?: ClientCapabilities;

  constructor(
    private readonly registry: HeldCalls,
    /** Whose call it is (a digest of the credential): only a retry of the same owner resumes it. */
    readonly owner: string,
    /** What the first request knew of the call (its record needs it at the end). */
    readonly call: T,
  ) {}

  /** The signal for the upstream request: aborted when the call is cancelled. */
  get signal(): AbortSignal {
    return this.upstream.signal;
  }

  /** The server's progress, relayed to the request attached at the time (there is none between rounds). */
  relayProgress = (progress: Progress): void => this.progress?.(progress);

  /** Runs the upstream call; its end is delivered to whichever request of the client is attached. */
  run(call: Promise<Record<string, unknown>>): void {
    call.then(
      (done) => this.end({ done }),
      (failed: unknown) => this.end({ failed }),
    );
  }

  /**
   * A retry with this call's state: its answers go to the server's requests of the last round (an
   * answer left out puts that request in the next round again). False when the state is not the
   * last round's, or another request of the client is attached already (a replayed state).
   */
  resume(round: number | undefined, responses: Record<string, unknown> | undefined): boolean {
    if (this.attached || round !== this.round || this.upstream.signal.aborted) return false;
    this.attached = true;
    const out = this.out;
    this.out = new Map();
    for (const [key, ask] of out) {
      const response = responses?.[key];
      if (isRecord(response)) ask.answer(response);
      else this.waiting.unshift(ask);
    }
    return true;
  }

  /**
   * Attaches a request of the client (its cancel, progress and capabilities) and waits for what
   * comes next: the call's end, or the server's requests, put to the client as a round.
   */
  async next(ctx: ServerContext, onprogress: ((p: Progress) => void) | undefined, declared?: ClientCapabilities) {
    this.attached = true;
    this.progress = onprogress;
    const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
    this.capabilities = (envelope?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined) ?? declared;
    const signal = ctx.mcpReq.signal;
    const onAbort = () => this.wake?.();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        const next = this.take();
        if (next) return next;
        if (signal.aborted) {
          this.cancel();
          return { cancelled: true } as const;
        }
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.attached = false;
      this.progress = undefined;
    }
  }

  /** The server's request: answered with the client's answer, once its retry brings it. */
  ask(method: AskMethod, params: Record<string, unknown> | undefined, signal: AbortSignal) {
    return new Promise<Record<string, unknown>>((resolve, reject) => {
      if (this.ended || this.upstream.signal.aborted)
        return reject(new ProtocolError(METHOD_NOT_FOUND, 'The call this request belongs to has ended.'));
      if (this.round >= MAX_ROUNDS)
        return reject(
          new ProtocolError(METHOD_NOT_FOUND, `The client was asked ${MAX_ROUNDS} times in this call already.`),
        );
      const ask: Ask = { key: `${KIND[method]}-${++this.asked}`, method, params, answer: resolve, refuse: reject };
      this.waiting.push(ask);
      // The server gave up on its request (its own timeout, or cancel): not asked, or its answer dropped.
      signal.addEventListener('abort', () => this.forget(ask, signal.reason), { once: true });
      this.wake?.();
    });
  }

  /** How the server ended the call, once it did (whether or not a request of the client took it). */
  get outcome(): Ended | undefined {
    return this.ended;
  }

  /** When the server ended the call (ms since the epoch), once it did. */
  get endedAt(): number | undefined {
    return this.endAt;
  }

  /** Cancels the call upstream (its client went away, or never came back): its server's requests are refused. */
  cancel(): void {
    this.upstream.abort();
    const error = new ProtocolError(METHOD_NOT_FOUND, 'The client of this call is gone.');
    for (const ask of [...this.waiting.splice(0), ...this.out.values()]) ask.refuse(error);
    this.out.clear();
    this.registry.drop(this);
    this.wake?.();
  }

  private take(): Next | undefined {
    if (this.ended) {
      this.registry.drop(this);
      return this.ended;
    }
    const asks: InputRequests = {};
    for (const ask of this.waiting.splice(0)) {
      if (!declares(this.capabilities, ask)) {
        ask.refuse(new ProtocolError(METHOD_NOT_FOUND, `The client did not declare ${KIND[ask.method]}.`));
        continue;
      }
      this.out.set(ask.key, ask);
      asks[ask.key] = mirror(ask);
    }
    if (!this.out.size) return undefined;
    this.round += 1;
    return { asks, round: this.round };
  }

  private end(ended: Ended): void {
    this.ended = ended;
    this.endAt = Date.now();
    // Requests of the server still unanswered are moot: the call they were for has ended.
    for (const ask of [...this.waiting.splice(0), ...this.out.values()])
      ask.refuse(new ProtocolError(METHOD_NOT_FOUND, 'The call this request belongs to has ended.'));
    this.out.clear();
    this.wake?.();
  }

  private forget(ask: Ask, reason: unknown): void {
    const i = this.waiting.indexOf(ask);
    if (i >= 0) this.waiting.splice(i, 1);
    this.out.delete(ask.key);
    ask.refuse(reason instanceof Error ? reason : new Error('cancelled'));
  }
}

/** The calls held for their clients, by id (their requestState names them). */
export class HeldCalls {
  private readonly calls = new Map<string, HeldCall>();

  start<T>(owner: string, call: T): HeldCall<T> {
    const held = new HeldCall<T>(this, owner, call);
    this.calls.set(held.id, held as HeldCall);
    return held;
  }

  get(id: string): HeldCall | undefined {
    return this.calls.get(id);
  }

  drop(held: HeldCall<unknown>): void {
    this.calls.delete(held.id);
  }

  /** The one call in flight (stdio: one host, no stream per request to tell calls apart), if only one is. */
  only(): string | undefined {
    return this.calls.size === 1 ? this.calls.keys().next().value : undefined;
  }

  cancelAll(): void {
    for (const held of [...this.calls.values()]) held.cancel();
  }
}

/**
 * The gateway's client towards a 2025 server answers the server's own requests by asking the
 * client whose call `route` names (the server's request id in, a held call's id out). Only the
 * `methods` its client declared (a client declaring none has no handler: the SDK refuses them).
 */
export function answerServerRequests(
  client: Client,
  held: HeldCalls,
  route: (requestId: string | number) => string | undefined,
  methods: readonly AskMethod[] = SERVER_ASKS,
): void {
  for (const method of methods)
    client.setRequestHandler(method, (request, ctx) => {
      // A task's request, while its client waits on tasks/result for it: asked on that request (task-records.ts).
      const asker = taskAsker(client, request.params);
      if (asker) return asker(method, { signal: ctx.mcpReq.signal }) as never;
      const id = route(ctx.mcpReq.id);
      const call = id === undefined ? undefined : held.get(id);
      if (!call)
        throw new ProtocolError(METHOD_NOT_FOUND, `No call of a client through the gateway can answer ${method}.`);
      return call.ask(method, request.params as Record<string, unknown> | undefined, ctx.mcpReq.signal) as never;
    });
}

/**
 * The server's request as an input request: the same method and params, but for a URL-mode
 * elicitation's `elicitationId`, which 2026-07-28 does not have (the round's key correlates it).
 */
function mirror(ask: Ask): InputRequests[string] {
  let params = ask.params;
  if (params && 'elicitationId' in params) {
    const { elicitationId: _dropped, ...rest } = params;
    params = rest;
  }
  return { method: ask.method, ...(params !== undefined ? { params } : {}) } as InputRequests[string];
}

/** Whether the client declared what the server asks for (a form elicitation: any elicitation capability). */
function declares(capabilities: ClientCapabilities | undefined, ask: Ask): boolean {
  if (ask.method === 'sampling/createMessage') return capabilities?.sampling !== undefined;
  if (ask.method === 'roots/list') return capabilities?.roots !== undefined;
  const elicitation = capabilities?.elicitation as Record<string, unknown> | undefined;
  if (!elicitation) return false;
  if (ask.params?.mode === 'url') return elicitation.url !== undefined;
  return elicitation.url === undefined || elicitation.form !== undefined;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
