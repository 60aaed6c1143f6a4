// An MCP server on SDK v2 for tests (never part of the app) that serves both eras with the
// conformance suite's test tools, resources and prompts (testing/mcp-v2-tools.ts,
// mcp-v2-rounds.ts, mcp-v2-resources.ts). Over HTTP, 2026-07-28 requests go to createMcpHandler
// (a fresh instance per request) and 2025 clients get a session of their own, as the SDK's
// docs route them with isLegacyRequest, since only a session carries the server's own requests
// (elicitation, sampling) that 2025 scenarios expect; Host and Origin must be loopback names.
// Over stdio, serveStdio pins each connection's era.
//   npx tsx testing/mcp-v2-server.ts http [--port 3100]   prints http://127.0.0.1:PORT/mcp
//   npx tsx testing/mcp-v2-server.ts stdio [--modern-only]   (--modern-only: refuses a 2025 opening)
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import {
  CLIENT_CAPABILITIES_META_KEY,
  createMcpHandler,
  isInitializeRequest,
  isLegacyRequest,
  legacyStatelessFallback,
  McpServer,
  WebStandardStreamableHTTPServerTransport,
  type ClientCapabilities,
  type EventStore,
  type JSONRPCMessage,
  type McpHandlerRequestOptions,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { localhostHostValidation, localhostOriginValidation, toNodeHandler } from '@modelcontextprotocol/node';
import { registerContentTools } from './mcp-v2-tools';
import { registerRoundTools, stateCodec, type ListChanges } from './mcp-v2-rounds';
import { registerPrompts, registerResources } from './mcp-v2-resources';

export const V2_SERVER_NAME = 'countersign-v2-test-server';
export type Era = 'legacy' | 'modern';

/**
 * One instance. `changes` publishes list changes; without it the instance announces them itself
 * (a 2025 session, or stdio, where serveStdio routes them onto subscriptions/listen).
 */
export function buildV2Server(era: Era, changes?: ListChanges): McpServer {
  const server = new McpServer(
    { name: V2_SERVER_NAME, version: '1.0.0' },
    {
      capabilities: {
        tools: { listChanged: true },
        prompts: { listChanged: true },
        // resources/subscribe is a 2025 method: the 2026 era has subscriptions/listen instead.
        resources: era === 'legacy' ? { listChanged: true, subscribe: true } : { listChanged: true },
        logging: {},
      },
      requestState: { verify: stateCodec.verify },
    },
  );
  const announce: ListChanges = changes ?? {
    tools: () => server.sendToolListChanged(),
    prompts: () => server.sendPromptListChanged(),
  };
  registerContentTools(server);
  // A 2026 request declares its client's capabilities itself; a 2025 session did so at initialize.
  const declared = (ctx: ServerContext) =>
    ((ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as
      ClientCapabilities | undefined) ?? server.server.getClientCapabilities();
  registerRoundTools(server, announce, declared);
  registerResources(server);
  registerPrompts(server);
  if (era === 'legacy') {
    // The suite only checks that both verbs answer {}; the set is this session's.
    const subscribed = new Set<string>();
    server.server.setRequestHandler('resources/subscribe', (request) => {
      subscribed.add(request.params.uri);
      return {};
    });
    server.server.setRequestHandler('resources/unsubscribe', (request) => {
      subscribed.delete(request.params.uri);
      return {};
    });
  }
  return server;
}

export interface V2HttpServer {
  url: string;
  /** The 2025 sessions open now. */
  sessions: () => number;
  /** Cuts every open connection, as a server that crashed or a network that failed does. */
  dropConnections(): void;
  close(): Promise<void>;
}

/** The session's SSE events in memory, so a client that reconnects with Last-Event-ID gets what it missed. */
export function memoryEventStore(): EventStore {
  const events: { id: string; stream: string; message: JSONRPCMessage }[] = [];
  return {
    storeEvent: async (stream, message) => {
      const id = `${stream}:${events.length}`;
      events.push({ id, stream, message });
      return id;
    },
    getStreamIdForEventId: async (id) => events.find((e) => e.id === id)?.stream,
    replayEventsAfter: async (lastEventId, { send }) => {
      const at = events.findIndex((e) => e.id === lastEventId);
      if (at < 0) throw new Error(`unknown event id ${lastEventId}`);
      const stream = events[at].stream;
      for (const e of events.slice(at + 1)) if (e.stream === stream) await send(e.id, e.message);
      return stream;
    },
  };
}

const jsonError = (status: number, code: number, message: string) =>
  Response.json({ jsonrpc: '2.0', error: { code, message }, id: null }, { status });

/** `build`: the instances it serves (default buildV2Server; a test may serve tools of its own). */
export async function startV2HttpServer(
  port = 0,
  host = '127.0.0.1',
  build: (era: Era, changes?: ListChanges) => McpServer = buildV2Server,
): Promise<V2HttpServer> {
  const modern = createMcpHandler(
    ({ era }) =>
      build(era, { tools: () => modern.notify.toolsChanged(), prompts: () => modern.notify.promptsChanged() }),
    { legacy: 'reject' },
  );
  const stateless = legacyStatelessFallback(() => build('legacy'));
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();

  async function legacySession(request: Request, body: unknown): Promise<Response> {
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      eventStore: memoryEventStore(),
      retryInterval: 100,
      onsessioninitialized: (id) => void sessions.set(id, transport),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await build('legacy').connect(transport);
    return transport.handleRequest(request, { parsedBody: body });
  }

  const route = {
    async fetch(request: Request, options?: McpHandlerRequestOptions): Promise<Response> {
      const id = request.headers.get('mcp-session-id');
      if (id) {
        const transport = sessions.get(id);
        return transport ? transport.handleRequest(request) : jsonError(404, -32001, 'Session not found');
      }
      if (request.method === 'POST' && (await isLegacyRequest(request))) {
        const body: unknown = await request
          .clone()
          .json()
          .catch(() => undefined);
        return isInitializeRequest(body) ? legacySession(request, body) : stateless(request, options);
      }
      return modern.fetch(request, options);
    },
  };
  const node = toNodeHandler(route);
  const validHost = localhostHostValidation();
  const validOrigin = localhostOriginValidation();
  const http = createServer((req, res) => {
    if (!validHost(req, res) || !validOrigin(req, res)) return;
    void node(req, res);
  });
  await new Promise<void>((resolve) => http.listen(port, host, resolve));
  const { port: bound } = http.address() as AddressInfo;
  return {
    url: `http://${host}:${bound}/mcp`,
    sessions: () => sessions.size,
    dropConnections: () => http.closeAllConnections(),
    close: async () => {
      await Promise.allSettled([...sessions.values()].map((t) => t.close()));
      await modern.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

async function main(args: string[]) {
  if (args[0] === 'stdio') {
    const modernOnly = args.includes('--modern-only');
    const handle = serveStdio(({ era }) => buildV2Server(era), { legacy: modernOnly ? 'reject' : 'serve' });
    process.on('SIGTERM', () => void handle.close());
    console.error(`${V2_SERVER_NAME}: serving ${modernOnly ? 'only 2026-07-28' : 'both eras'} on stdio`);
    return;
  }
  if (args[0] !== 'http') {
    console.error('usage: tsx testing/mcp-v2-server.ts http [--port N] | stdio [--modern-only]');
    process.exit(2);
  }
  const at = args.indexOf('--port');
  const server = await startV2HttpServer(at >= 0 ? Number(args[at + 1]) : 0);
  console.log(server.url);
  const stop = () => void server.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) void main(process.argv.slice(2));
