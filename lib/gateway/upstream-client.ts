// The gateway's side towards the server on SDK v2's own client (docs/gateway.md "Both eras"): the era is whatever the server offers (`versionNegotiation: auto` probes
// with server/discover and falls back to initialize), and the verdict is cached per upstream and
// per Authorization (the SDK's gateway guide: an advertisement is what the server answered to one
// credential), dated, so that later requests connect without a probe.
// - a 2026-07-28 server: one Client per client request, connected with the cached verdict (it
//   sends nothing until the request itself), so the client's Authorization and the server's
//   401/403 belong to that request alone;
// - a 2025 server: one shared session per Authorization, since its era has sessions. Its own
//   requests mid-call are put to the client whose call the request's stream belongs to
//   (held-calls.ts; `routedStream` below).
// Results pass through unvalidated (PASSTHROUGH): the client's own SDK validates what it gets.
import { createHash, randomUUID } from 'node:crypto';
import {
  Client,
  SdkError,
  SdkErrorCode,
  StreamableHTTPClientTransport,
  type DiscoverResult,
  type FetchLike,
  type PriorDiscovery,
  type RequestOptions,
  type StandardSchemaV1,
} from '@modelcontextprotocol/client';
import { answerServerRequests, SERVER_ASKS, type HeldCalls } from './held-calls';
import type { ModernExchange } from './modern-exchange';
import { dropOldest } from '../bounded';

/** How long a discovered era is trusted before the next connect probes again. */
const VERDICT_HORIZON_MS = 10 * 60_000;
/** The longest timer Node.js arms: the gateway imposes no timeout of its own (the client decides). */
export const NO_TIMEOUT_MS = 2_147_483_647;

/** A result schema that accepts what the server sent, as it sent it (no stripping of unknown members). */
export const PASSTHROUGH: StandardSchemaV1<unknown, Record<string, unknown>> = {
  '~standard': {
    version: 1,
    vendor: 'countersign-gateway',
    validate: (value) => ({ value: value as Record<string, unknown> }),
  },
};

export const GATEWAY_CLIENT_INFO = { name: 'countersign-gateway', version: '1.0.0' };

interface Verdict {
  prior: PriorDiscovery;
  storedAt: number;
}

export interface ListChanges {
  tools(): void;
  prompts(): void;
  resources(): void;
}

export interface Opened {
  client: Client;
  /** Done with it: a per-request client is closed, a shared session stays. */
  release(): void;
}

export class Upstream {
  private readonly verdicts = new Map<string, Verdict>();
  private readonly sessions = new Map<string, Promise<Client>>();
  // Per credential, the request finding out what later ones share (the era, a 2025 session).
  private readonly opening = new Map<string, Promise<Opened>>();
  private readonly bridged = new Map<string, boolean>();
  private watching?: Promise<void>;
  private watcher?: Client;

  constructor(
    readonly url: URL,
    private readonly log: (line: string) => void,
    /** The calls held open for their server's requests mid-call (held-calls.ts). */
    private readonly held?: HeldCalls,
  ) {}

  /**
   * Whether a 2025 client must be bridged: the server speaks 2026-07-28 and refuses the 2025
   * handshake. A server that serves both eras gets the 2025 client's session as it is (its own
   * upstream session): 2025 end to end. Asked once per credential.
   */
  async needsBridge(exchange: ModernExchange | undefined): Promise<boolean> {
    const key = credentialKey(exchange?.authorization ?? null);
    const known = this.bridged.get(key);
    if (known !== undefined) return known;
    const { client, release } = await this.open(exchange);
    const modern = client.getProtocolEra() === 'modern';
    release();
    let bridge = false;
    if (modern) {
      const legacy = newClient();
      try {
        await legacy.connect(
          new StreamableHTTPClientTransport(this.url, { fetch: exchangeFetch(undefined, exchange) }),
          {
            prior: { kind: 'legacy' },
          },
        );
      } catch {
        bridge = true;
      }
      await legacy.close().catch(() => undefined);
    }
    this.bridged.set(key, bridge);
    return bridge;
  }

  /**
   * What a 2026-07-28 server answered server/discover for this Authorization, while trusted
   * (undefined: not known, or the server speaks 2025).
   */
  discovered(authorization: string | null): DiscoverResult | undefined {
    const cached = this.verdicts.get(credentialKey(authorization));
    if (!cached || Date.now() - cached.storedAt >= VERDICT_HORIZON_MS) return undefined;
    return cached.prior.kind === 'modern' ? cached.prior.discover : undefined;
  }

  /**
   * A 2025 client's own session with the server (a 2025 server, or one serving both eras), opened
   * with that client's `initialize` (its clientInfo and capabilities): one upstream session per
   * client session, as without the gateway, so that the server's notifications outside a request
   * and its requests mid-call concern that client alone. Null when the server speaks only
   * 2026-07-28 (the client is then bridged through `open`).
   */
  async own(exchange: ModernExchange, as: Introduction | undefined): Promise<Client | null> {
    if (await this.needsBridge(exchange)) return null;
    // Its requests (elicitation, sampling, roots) are the session's own to answer (http-modern.ts).
    const client = newClient(as);
    const transport = new StreamableHTTPClientTransport(this.url, {
      fetch: exchangeFetch(exchange, exchange, undefined, true),
    });
    await client.connect(transport, { prior: { kind: 'legacy' } });
    return client;
  }

  /** A connected client for one client request (its Authorization, its refusal). */
  async open(exchange: ModernExchange | undefined): Promise<Opened> {
    const key = credentialKey(exchange?.authorization ?? null);
    const cached = this.verdicts.get(key);
    const prior = cached && Date.now() - cached.storedAt < VERDICT_HORIZON_MS ? cached.prior : undefined;
    if (prior?.kind === 'legacy') {
      const shared = this.sessions.get(key);
      if (shared) return { client: await shared, release: () => undefined };
    }
    if (prior?.kind === 'modern') return this.connect(exchange, key, prior);
    // Requests arriving together wait for the first: each would open a 2025 session, one kept.
    const first = this.opening.get(key);
    if (first) {
      await first.catch(() => undefined);
      return this.open(exchange);
    }
    const opening = this.connect(exchange, key, prior);
    this.opening.set(key, opening);
    try {
      return await opening;
    } finally {
      this.opening.delete(key);
    }
  }

  private async connect(
    exchange: ModernExchange | undefined,
    key: string,
    prior: PriorDiscovery | undefined,
  ): Promise<Opened> {
    const client = newClient();
    // The server's request id → the held call whose upstream stream carried it (routedStream).
    const routes = new Map<string | number, string>();
    if (this.held)
      answerServerRequests(client, this.held, (id) => {
        const to = routes.get(id);
        routes.delete(id);
        return to;
      });
    const transport = new StreamableHTTPClientTransport(this.url, { fetch: exchangeFetch(exchange, exchange, routes) });
    try {
      await client.connect(transport, prior ? { prior } : undefined);
    } catch (error) {
      // A modern verdict the server no longer honours: forgotten, and the era probed again once.
      if (!(prior && error instanceof SdkError && error.code === SdkErrorCode.EraNegotiationFailed)) throw error;
      this.verdicts.delete(key);
      return this.connect(exchange, key, undefined);
    }
    if (!prior) {
      const discover = client.getDiscoverResult();
      this.verdicts.set(key, {
        prior: discover ? { kind: 'modern', discover } : { kind: 'legacy' },
        storedAt: Date.now(),
      });
      this.log(`server speaks the ${discover ? '2026-07-28' : '2025'} era`);
    }
    if (client.getProtocolEra() === 'legacy') {
      // Its session serves every later request with the same Authorization.
      const shared = Promise.resolve(client);
      this.sessions.set(key, shared);
      client.onclose = () => {
        if (this.sessions.get(key) === shared) this.sessions.delete(key);
      };
      return { client, release: () => undefined };
    }
    return { client, release: () => void client.close().catch(() => undefined) };
  }

  /**
   * The server's list changes, followed once for the whole gateway (2026-07-28: one
   * subscriptions/listen of the gateway's own, opened with the first client's; a 2025 session
   * sends them unasked). Resolves once the server acknowledged the subscription.
   */
  watch(exchange: ModernExchange | undefined, on: ListChanges): Promise<void> {
    this.watching ??= this.follow(exchange, on).catch((error: unknown) => {
      this.watching = undefined;
      throw error;
    });
    return this.watching;
  }

  private async follow(exchange: ModernExchange | undefined, on: ListChanges): Promise<void> {
    const { client } = await this.open(exchange);
    this.watcher = client;
    client.setNotificationHandler('notifications/tools/list_changed', () => on.tools());
    client.setNotificationHandler('notifications/prompts/list_changed', () => on.prompts());
    client.setNotificationHandler('notifications/resources/list_changed', () => on.resources());
    if (client.getProtocolEra() === 'legacy') return;
    const capabilities = client.getServerCapabilities() ?? {};
    await client.listen({
      ...(capabilities.tools?.listChanged ? { toolsListChanged: true } : {}),
      ...(capabilities.prompts?.listChanged ? { promptsListChanged: true } : {}),
      ...(capabilities.resources?.listChanged ? { resourcesListChanged: true } : {}),
    });
    client.onclose = () => {
      this.watching = undefined;
      this.watcher = undefined;
    };
  }

  async close(): Promise<void> {
    const watcher = this.watcher;
    this.watcher = undefined;
    await watcher?.close().catch(() => undefined);
    const sessions = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.allSettled(sessions.map(async (s) => (await s).close()));
  }
}

/** Sends one request upstream as the client sent it, and resolves with the server's result as is. */
export function forward(
  client: Client,
  method: string,
  params: Record<string, unknown> | undefined,
  options: RequestOptions,
): Promise<Record<string, unknown>> {
  return client.request({ method, ...(params ? { params } : {}) } as never, PASSTHROUGH, {
    timeout: NO_TIMEOUT_MS,
    allowInputRequired: true,
    ...options,
  });
}

/** The client's side of a 2025 `initialize`: what the server is told of the client. */
export interface Introduction {
  clientInfo: { name: string; version: string };
  capabilities: Record<string, unknown>;
}

/** A 2025 `initialize`'s introduction of the client (undefined for any other message). */
export function introduction(m: unknown): Introduction | undefined {
  if (!isRecord(m) || m.method !== 'initialize' || !isRecord(m.params)) return undefined;
  const { clientInfo, capabilities } = m.params;
  if (!isRecord(clientInfo) || typeof clientInfo.name !== 'string' || typeof clientInfo.version !== 'string')
    return undefined;
  return {
    clientInfo: clientInfo as Introduction['clientInfo'],
    capabilities: isRecord(capabilities) ? capabilities : {},
  };
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A client towards the server. `as` a 2025 host's own initialize (stdio: one host, one server):
 * the server is told that host's identity and capabilities, as without the gateway, and asks only
 * what the host declared.
 */
export function newClient(as?: Introduction): Client {
  if (as) return new Client(as.clientInfo, { ...CLIENT_OPTIONS, capabilities: as.capabilities });
  return new Client(GATEWAY_CLIENT_INFO, CLIENT_OPTIONS);
}

const CLIENT_OPTIONS = {
  versionNegotiation: { mode: 'auto' },
  // The client's own rounds: the gateway relays them, it never answers them itself.
  inputRequired: { autoFulfill: false },
  // Towards a 2025 server, what the gateway's clients may be asked mid-call (a 2025 server asks
  // only a client that declared it): each request is then put to its call's client if that client
  // declared it, and refused otherwise (held-calls.ts). A 2026-07-28 server gets each client's
  // own capabilities in its request's envelope, which the client's `_meta` carries.
  capabilities: { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} },
} satisfies ConstructorParameters<typeof Client>[1];

// The client's Authorization on every request of this exchange. The server's 401/403 is kept for
// it, and so is any other error status it answered the client's own request with (not one of the
// gateway's own requests on its way: the probe, a catalog listing).
// A shared 2025 session's fetch was built for the request that opened it: a later request names
// its own exchange by a tag (exchangeHeaders, stripped here), so that its Authorization is sent
// and the server's refusal of it is kept for it, not for the first.
function exchangeFetch(
  exchange: ModernExchange | undefined,
  credential = exchange,
  routes?: Map<string | number, string>,
  /** A client's own 2025 session: its notifications on a request's stream are marked (routedStream). */
  marks = false,
): FetchLike {
  // The SDK client's ids of the calls the lean path handed on, and the ids the server knows them by (bounded).
  const handedIds = new Map<unknown, string>();
  return async (input, init) => {
    const headers = new Headers(init?.headers);
    const tag = headers.get(EXCHANGE_HEADER);
    headers.delete(EXCHANGE_HEADER);
    const held = headers.get(HELD_HEADER);
    headers.delete(HELD_HEADER);
    const mine = (tag ? tagged.get(tag)?.deref() : undefined) ?? exchange;
    // SDK v2's client drops an Authorization given per request (a header its transport owns): the
    // request's own is set here, the credential the fetch was built with for a request without one.
    const authorization = mine?.authorization ?? credential?.authorization;
    if (authorization && !headers.has('authorization')) headers.set('authorization', authorization);
    // The call the lean path handed on (a 2025 request has no Mcp-Method header: its body names it).
    const handed = mine?.handed;
    const replay =
      handed?.replay && (headers.get('mcp-method') ?? requestOf(init?.body)?.method) === 'tools/call'
        ? handed.replay
        : undefined;
    let body = init?.body;
    if (replay) {
      handed!.replay = undefined;
      if (handed!.upId !== undefined) handedIds.set(requestOf(body)?.id, handed!.upId);
      dropOldest(handedIds, 1000);
    } else if (handedIds.size) body = cancelOfHanded(body, handedIds);
    const fetched = replay
      ? await replay(requestOf(init?.body)?.id)
      : await fetch(input, { ...init, headers, ...(body !== init?.body ? { body } : {}) });
    if (headers.get('mcp-method') === 'subscriptions/listen') return foldedListen(fetched);
    const marked = marks ? tag : null;
    const response = (held && routes) || marked ? routedStream(fetched, held, routes ?? null, marked) : fetched;
    if (!mine || mine.refusal || response.status < 400) return response;
    const auth = response.status === 401 || response.status === 403;
    // A client's server/discover is answered by the gateway; upstream, that method is only the era
    // probe, whose other failures say the server speaks 2025 (the client then falls back to it).
    const method = headers.get('mcp-method') ?? undefined;
    if (auth || (method === mine.method && method !== 'server/discover')) {
      mine.refusal = { status: response.status, headers: response.headers, body: await response.clone().text() };
    }
    return response;
  };
}

/**
 * A 2025 client's `notifications/cancelled` of a call the lean path handed on names the call by the
 * SDK client's id: the server knows it by the lean path's (2026-07-28 cancels by closing the stream).
 */
function cancelOfHanded(body: FetchBody, handedIds: Map<unknown, string>): FetchBody {
  if (typeof body !== 'string' || !body.includes('notifications/cancelled')) return body;
  const message = requestOf(body) as { method?: unknown; params?: { requestId?: unknown } } | undefined;
  const upId = message?.method === 'notifications/cancelled' ? handedIds.get(message.params?.requestId) : undefined;
  if (upId === undefined) return body;
  handedIds.delete(message!.params!.requestId);
  return JSON.stringify({ ...message, params: { ...message!.params, requestId: upId } });
}

type FetchBody = RequestInit['body'];

/** The JSON-RPC request the SDK client sends (a string body: how SDK v2's transport sends one). */
function requestOf(body: unknown): { id?: unknown; method?: unknown } | undefined {
  try {
    const message: unknown = typeof body === 'string' ? JSON.parse(body) : undefined;
    return isRecord(message) ? message : undefined;
  } catch {
    return undefined;
  }
}

const EXCHANGE_HEADER = 'x-countersign-exchange';
/** Names the held call a request is (held-calls.ts) to the upstream fetch; never sent. */
export const HELD_HEADER = 'x-countersign-held';
const tagged = new Map<string, WeakRef<ModernExchange>>();
const untag = new FinalizationRegistry<string>((tag) => tagged.delete(tag));
const tags = new WeakMap<ModernExchange, string>();

/**
 * The headers of one client request sent upstream (RequestOptions.headers): its own
 * Authorization, and the tag by which the upstream fetch finds its exchange (never sent: only
 * this process knows it). An exchange is forgotten when it is collected.
 */
export function exchangeHeaders(exchange: ModernExchange): Record<string, string> {
  let tag = tags.get(exchange);
  if (!tag) {
    tag = randomUUID();
    tags.set(exchange, tag);
    tagged.set(tag, new WeakRef(exchange));
    untag.register(exchange, tag);
  }
  return { ...(exchange.authorization ? { authorization: exchange.authorization } : {}), [EXCHANGE_HEADER]: tag };
}

// Never the credential itself: a digest names the cache entry (and a held call's owner: held-calls.ts).
export const credentialKey = (authorization: string | null) =>
  authorization ? createHash('sha256').update(authorization).digest('base64url') : '';

const LIST_CHANGED = /"method"\s*:\s*"notifications\/(tools|prompts|resources)\/list_changed"/;

/**
 * The server's subscriptions/listen stream with its list changes folded before the SDK parses
 * them: of the events that arrived in one read, only the first list_changed of each kind is kept
 * (a list_changed says only "list again", and the kept one is delivered at the same moment as
 * the ones dropped, so nothing is lost). Every other event passes as it came. Without this, a
 * server that sends 50,000 changes costs the gateway 50,000 parses and dispatches by SDK v2's
 * client, during which other requests wait; with it, a few per read. An event split across
 * reads is held until its end arrives (at most one event's text is held).
 */
export function foldedListen(response: Response): Response {
  if (!response.body || !response.headers.get('content-type')?.includes('text/event-stream')) return response;
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let held = '';
  const body = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        held += decoder.decode(chunk, { stream: true });
        const events = held.split(/\r?\n\r?\n/);
        held = events.pop() ?? '';
        const seen = new Set<string>();
        let out = '';
        for (const event of events) {
          const kind = LIST_CHANGED.exec(event)?.[1];
          if (kind !== undefined) {
            if (seen.has(kind)) continue;
            seen.add(kind);
          }
          out += `${event}\n\n`;
        }
        if (out) controller.enqueue(encoder.encode(out));
      },
      flush(controller) {
        held += decoder.decode();
        if (held) controller.enqueue(encoder.encode(held));
      },
    }),
  );
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/**
 * A client request's upstream stream. A 2025 server sends what concerns a request on that
 * request's stream (its `relatedRequestId`); the SDK's client keeps no trace of which stream a
 * message came on, so it is noted here before the SDK parses the event:
 * - a held call's (held-calls.ts): each request of the server is noted as the call's (`routes`),
 *   for the gateway's handler to look up;
 * - a request of a client's own 2025 session (`tag`, exchangeHeaders): each of the server's
 *   requests, and each notification other than progress (which has its own token), carries the
 *   exchange's tag in `_meta`, for the session to send it on the client's request's stream
 *   (`relatedExchange`, which takes the tag off).
 * Events pass as they came otherwise; an event split across reads is handled once it is whole.
 */
function routedStream(
  response: Response,
  held: string | null,
  routes: Map<string | number, string> | null,
  tag: string | null,
): Response {
  if (!response.body || !response.headers.get('content-type')?.includes('text/event-stream')) return response;
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let text = '';
  const body = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        text += decoder.decode(chunk, { stream: true });
        const events = text.split(/\r?\n\r?\n/);
        text = events.pop() ?? '';
        let out = '';
        for (const event of events) {
          const data = event
            .split(/\r?\n/)
            .filter((line) => line.startsWith('data:'))
            .map((line) => line.slice(5).trimStart())
            .join('\n');
          const message = routable(data);
          if (held && routes && message?.kind === 'ask') routes.set(message.id, held);
          if (tag && message) {
            const params = isRecord(message.message.params) ? message.message.params : {};
            const meta = isRecord(params._meta) ? params._meta : {};
            const marked = { ...message.message, params: { ...params, _meta: { ...meta, [STREAM_META]: tag } } };
            const kept = event.split(/\r?\n/).filter((line) => !line.startsWith('data:'));
            out += `${[...kept, `data: ${JSON.stringify(marked)}`].join('\n')}\n\n`;
          } else out += `${event}\n\n`;
        }
        // Not marking: the chunk as it came (its partial event is kept in `text` only to be read).
        if (!tag) controller.enqueue(chunk);
        else if (out) controller.enqueue(encoder.encode(out));
      },
      flush(controller) {
        if (!tag) return;
        text += decoder.decode();
        if (text) controller.enqueue(encoder.encode(text));
      },
    }),
  );
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

const STREAM_META = 'countersign/upstreamStream';

/**
 * The exchange whose upstream stream a notification came on (routedStream), and the
 * notification as the server sent it (the mark taken off).
 */
export function relatedExchange<N extends { method: string; params?: Record<string, unknown> | undefined }>(
  notification: N,
): { related?: ModernExchange; sent: N } {
  const meta = notification.params?._meta;
  if (!isRecord(meta) || typeof meta[STREAM_META] !== 'string') return { sent: notification };
  const { [STREAM_META]: tag, ...rest } = meta;
  const params = { ...notification.params };
  if (Object.keys(rest).length) params._meta = rest;
  else delete params._meta;
  return { related: tagged.get(tag as string)?.deref(), sent: { ...notification, params } };
}

/**
 * A request the gateway's handlers route (held-calls.ts: only those are looked up, and so
 * forgotten again), or a notification other than progress; undefined for anything else.
 */
function routable(
  data: string,
):
  | { kind: 'ask'; id: string | number; message: { method: string; params?: unknown } }
  | { kind: 'notification'; message: { method: string; params?: unknown } }
  | undefined {
  if (!data.includes('"method"')) return undefined;
  try {
    const message: unknown = JSON.parse(data);
    if (!isRecord(message) || typeof message.method !== 'string') return undefined;
    const { method, id } = message;
    if (id === undefined)
      return method === 'notifications/progress'
        ? undefined
        : { kind: 'notification', message: message as { method: string } };
    if (!(SERVER_ASKS as readonly string[]).includes(method)) return undefined;
    return typeof id === 'string' || typeof id === 'number'
      ? { kind: 'ask', id, message: message as { method: string } }
      : undefined;
  } catch {
    return undefined;
  }
}
