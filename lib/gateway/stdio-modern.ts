// stdio mode, every host: SDK v2's serveStdio serves the host with the same factory as the HTTP
// side (modern-server.ts: the same policy, approval gate, records), pinned to the era the host's
// first message opens, in front of the child through one SDK v2 client, in the era the child
// offers (`versionNegotiation: auto`, probed on the child itself: ChildServer).
// - Raw params: the SDK lifts the envelope, the retry's `inputResponses` and `requestState` out
//   of a request's params before a handler runs; the server must get them as the host sent them.
//   Over HTTP the parsed body carries them (modern-exchange.ts); here `Recording` keeps each
//   incoming request's params by id before the SDK sees it, until its answer goes out.
// - List changes: the child's (sent unasked by a 2025 server, or on the gateway's own
//   subscriptions/listen to a 2026-07-28 one) reach the host through the instance's
//   notifications, which serveStdio puts on the host's own subscriptions; coalesced per kind as
//   over HTTP (list-changes.ts), so a child that floods them costs the host a few.
// - serveStdio is given `legacy: 'serve'`: a 2025 host (its `initialize`, or a host that probes
//   with server/discover and then sends a 2025 initialize after all) is served by a 2025
//   instance of the same factory.
// - A 2025 child's own requests mid-call (held-calls.ts): stdio carries no stream per request to
//   tell which call one belongs to, so it is put to the host's one call in flight, and refused
//   while the host has several.
// - A 2025 child that exits on the probe (some 2025 servers end on any request before
//   `initialize`): the child is started once more (`again`) and spoken to in 2025 without a probe.
//   One that then dies on (or refuses) its 2025 `initialize` is not started a third time: the
//   host's request is answered with an error naming the cause, and the gateway stops once that
//   answer is out.
import {
  type JSONRPCMessage,
  type Notification,
  type Server,
  type ServerContext,
  type Transport,
  type TransportSendOptions,
} from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import type { Client, PriorDiscovery } from '@modelcontextprotocol/client';
import type { GatewayContext } from './context';
import { answerServerRequests, HeldCalls, KIND, SERVER_ASKS } from './held-calls';
import { coalesced } from './list-changes';
import { modernExchange, type ModernExchange } from './modern-exchange';
import { modernFactory, ToolCatalog, type ModernGateway } from './modern-server';
import { OpenCalls } from './open-calls';
import { roundStateCodec, TTL_SECONDS } from './round-state';
import { introduction, newClient, type Introduction, type Opened } from './upstream-client';
import { dropOldest } from '../bounded';

/** Requests kept at most while unanswered (a cancelled one is never answered): the oldest go first. */
const MAX_KEPT = 10_000;

type Id = string | number;

/** The host's transport as serveStdio gets it, keeping each incoming request's params by id. */
export class Recording implements Transport {
  private readonly kept = new Map<Id, ModernExchange>();
  private begun?: Promise<void>;
  /** The host's 2025 `initialize`, when that was how it opened the connection. */
  opening?: Introduction;
  /** Why the child cannot be reached, once that is final: said in the host's error, then the gateway stops. */
  failure?: string;
  private first = true;
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;

  constructor(
    private readonly down: Transport,
    /** Called once the host's side closed, after serveStdio was told. */
    private readonly ended: () => void,
  ) {}

  /** Once: serveStdio starts it, and the gateway waits for the same start. */
  start(): Promise<void> {
    return (this.begun ??= this.begin());
  }

  private async begin(): Promise<void> {
    this.down.onmessage = (message) => {
      const m = message as Record<string, unknown>;
      if (this.first) {
        this.first = false;
        this.opening = introduction(m);
      }
      if (typeof m.method === 'string' && (typeof m.id === 'string' || typeof m.id === 'number')) {
        this.kept.set(m.id, modernExchange(null, m, new Headers()));
        dropOldest(this.kept, MAX_KEPT);
      }
      this.onmessage?.(message);
    };
    this.down.onclose = () => {
      this.kept.clear();
      this.onclose?.();
      this.ended();
    };
    this.down.onerror = (error) => this.onerror?.(error);
    await this.down.start();
  }

  /** The exchange of the request the SDK is handling (its id is the host's). */
  of(ctx: ServerContext): ModernExchange | undefined {
    return this.kept.get(ctx.mcpReq.id as Id);
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const m = message as Record<string, unknown>;
    if (typeof m.method !== 'string' && (typeof m.id === 'string' || typeof m.id === 'number')) this.kept.delete(m.id);
    const failure = this.failure;
    const error = typeof m.error === 'object' && m.error !== null ? (m.error as Record<string, unknown>) : undefined;
    if (failure === undefined || !error) return this.down.send(message, options);
    // serveStdio answers a request its factory failed with a bare internal error: the cause is added.
    const explained = { ...m, error: { ...error, message: `${String(error.message)}: ${failure}` } };
    await this.down.send(explained as JSONRPCMessage, options).catch(() => undefined);
    this.ended();
  }

  close(): Promise<void> {
    return this.down.close();
  }
}

/**
 * The child as the factory's upstream: one SDK v2 client for the whole connection (stdio has one
 * process and one pipe), connected with the first request's instance, shared by every request.
 */
export class ChildUpstream {
  private connected?: Promise<Client>;
  /** What to tell the host when the child's lists change. */
  changes?: { tools(): void; prompts(): void; resources(): void };
  /** Any other notification of the child's own (a 2025 server's logging, resource updates). */
  notified?: (notification: Notification) => void;

  constructor(
    private child: Transport,
    private readonly log: (line: string) => void,
    private readonly onclose: () => void,
    private readonly held: HeldCalls,
    /** How the host introduced itself (read once the host's first message came). */
    private readonly introduced: () => Introduction | undefined,
    /** Told why the child cannot be reached, when that is final (the gateway stops once the host knows). */
    private readonly failed: (cause: string) => void,
    /** The child started anew, for one that died on the probe (none: its death ends the connection). */
    private readonly again?: () => Promise<Transport>,
  ) {}

  async open(): Promise<Opened> {
    this.connected ??= this.connect();
    return { client: await this.connected, release: () => undefined };
  }

  private async connect(): Promise<Client> {
    const introduced = this.introduced();
    const first = await this.attempt(this.child, introduced, undefined);
    if (first.client) return this.ready(first.client);
    if (!first.died || !this.again) throw first.error;
    // A 2025 server that exits on a request before `initialize`: started again, and spoken to in
    // 2025 at once (the era is known: a server of 2026-07-28 answers server/discover).
    this.log('the server exited on the 2026-07-28 probe (server/discover): starting it again, in the 2025 era');
    const child = await this.again().catch((error: unknown) => {
      this.failed('the server exited on the 2026-07-28 probe (server/discover) and could not be started again');
      throw error;
    });
    this.child = child;
    const second = await this.attempt(child, introduced, { kind: 'legacy' });
    if (second.client) return this.ready(second.client);
    const cause = second.died
      ? 'the server exited on the 2026-07-28 probe (server/discover), and again on its 2025 initialize'
      : 'the server exited on the 2026-07-28 probe (server/discover), and refused its 2025 initialize';
    this.log(`${cause}: stopping`);
    this.failed(cause);
    throw second.error;
  }

  /**
   * One connect of a client to `child`. While it lasts, the child's end (its process exiting) is
   * kept back from the gateway when the child can be started again: it is then this connect's
   * outcome (`died`) rather than the end of the connection.
   */
  private async attempt(
    child: Transport,
    introduced: Introduction | undefined,
    prior: PriorDiscovery | undefined,
  ): Promise<{ client: Client; died?: never; error?: never } | { client?: never; died: boolean; error: unknown }> {
    const ended = child.onclose;
    let connecting = true;
    let died = false;
    if (this.again)
      child.onclose = () => {
        if (connecting) died = true;
        else ended?.();
      };
    const client = this.client(introduced);
    try {
      await client.connect(child, prior ? { prior } : undefined);
      return { client };
    } catch (error) {
      return { died, error };
    } finally {
      connecting = false;
    }
  }

  private client(introduced: Introduction | undefined): Client {
    const client = newClient(introduced);
    client.fallbackNotificationHandler = async (notification) => this.notified?.(notification);
    const declared = introduced?.capabilities;
    answerServerRequests(
      client,
      this.held,
      () => this.held.only(),
      declared ? SERVER_ASKS.filter((method) => declared[KIND[method]] !== undefined) : SERVER_ASKS,
    );
    client.setNotificationHandler('notifications/tools/list_changed', () => this.changes?.tools());
    client.setNotificationHandler('notifications/prompts/list_changed', () => this.changes?.prompts());
    client.setNotificationHandler('notifications/resources/list_changed', () => this.changes?.resources());
    return client;
  }

  /** A connected client, said in the log and following the child's list changes. */
  private ready(client: Client): Client {
    // Only now: a child that ends while a connect is under way is that connect's outcome (attempt).
    client.onclose = this.onclose;
    const modern = client.getProtocolEra() === 'modern';
    this.log(`server speaks the ${modern ? '2026-07-28' : '2025'} era`);
    const capabilities = client.getServerCapabilities() ?? {};
    // A 2026-07-28 server sends list changes only on a subscription: the gateway's own, for the connection.
    if (
      modern &&
      (capabilities.tools?.listChanged || capabilities.prompts?.listChanged || capabilities.resources?.listChanged)
    )
      void client
        .listen({
          ...(capabilities.tools?.listChanged ? { toolsListChanged: true } : {}),
          ...(capabilities.prompts?.listChanged ? { promptsListChanged: true } : {}),
          ...(capabilities.resources?.listChanged ? { resourcesListChanged: true } : {}),
        })
        .catch((error: unknown) =>
          this.log(`could not follow the server's list changes: ${error instanceof Error ? error.name : 'Error'}`),
        );
    return client;
  }

  async close(): Promise<void> {
    const connected = this.connected;
    if (!connected) return;
    await (await connected.catch(() => null))?.close().catch(() => undefined);
  }
}

export interface ModernStdio {
  /** Once the host's transport started. */
  started: Promise<void>;
  close(): Promise<void>;
}

/**
 * Serves the host `down`, of either era, in front of `child` (ChildServer; in tests, an in-memory
 * server). `again` starts the child anew, for one that exits on the probe.
 */
export function serveModern(
  ctx: GatewayContext,
  down: Transport,
  child: Transport,
  onclose: () => void,
  again?: () => Promise<Transport>,
): ModernStdio {
  const wire = new Recording(down, onclose);
  const held = new HeldCalls();
  const failed = (cause: string) => (wire.failure = cause);
  const upstream = new ChildUpstream(child, ctx.log, onclose, held, () => wire.opening, failed, again);
  const g: ModernGateway = {
    ctx,
    upstream,
    held,
    catalog: new ToolCatalog(),
    codec: roundStateCodec(ctx.endpoint.apiKey, ctx),
    open: new OpenCalls(ctx.reporter, ctx.roundAbandonMs ?? TTL_SECONDS * 1000),
    exchangeOf: (c) => wire.of(c),
  };
  const factory = modernFactory(g);
  // serveStdio pins one instance per connection (two when a probe is discarded: the latest serves).
  let instance: Server | undefined;
  let legacy = false;
  const tell = (send: (s: Server) => Promise<void>) => {
    if (instance) void send(instance).catch(() => undefined);
  };
  const told = {
    tools: coalesced(() => tell((s) => s.sendToolListChanged())),
    prompts: coalesced(() => tell((s) => s.sendPromptListChanged())),
    resources: coalesced(() => tell((s) => s.sendResourceListChanged())),
  };
  // The host learns of a tool hidden or shown again as of any change of the list.
  g.hiddenChanged = told.tools;
  upstream.changes = {
    tools: () => {
      g.catalog.loaded = false;
      told.tools();
    },
    prompts: told.prompts,
    resources: told.resources,
  };
  // A 2025 host gets the child's other notifications as its session would without the gateway; a
  // 2026-07-28 host's era has none outside a request (those of a request reach it with it).
  upstream.notified = (notification) => {
    if (legacy) tell((s) => s.notification(notification));
  };
  const handle = serveStdio(
    async (options) => {
      const server = (await factory(options)) as Server;
      instance = server;
      legacy = options.era === 'legacy';
      return server;
    },
    {
      legacy: 'serve',
      transport: wire,
      onerror: (error) => ctx.log(`stdio: ${error.name}: ${error.message.slice(0, 200)}`),
    },
  );
  return {
    // serveStdio started the host's transport: the same start, to wait for and to fail with.
    started: wire.start(),
    async close() {
      for (const kind of Object.values(told)) kind.cancel();
      await handle.close();
      await upstream.close();
      // Calls still waiting for their client's retry: recorded as left at their round (and cancelled).
      g.open.flush();
      held.cancelAll();
    },
  };
}
