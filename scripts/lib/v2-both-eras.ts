// An MCP server on SDK v2 in both eras as the SDK serves them, for the servers that tests and
// bench:gateway put behind the gateway: a 2026-07-28 request by itself (createMcpHandler,
// `legacy: 'reject'`, one instance per request), a 2025 client in a session of its own opened by
// its `initialize` (WebStandardStreamableHTTPServerTransport), 404 for a session it does not hold.
import { randomUUID } from 'node:crypto';
import {
  createMcpHandler,
  isInitializeRequest,
  WebStandardStreamableHTTPServerTransport,
  type McpHandlerRequestOptions,
  type McpServer,
  type WebStandardStreamableHTTPServerTransportOptions,
} from '@modelcontextprotocol/server';

export interface BothEras {
  /** For `toNodeHandler`: a body the caller already parsed comes as `parsedBody`. */
  fetch(request: Request, options?: McpHandlerRequestOptions): Promise<Response>;
  close(): Promise<void>;
}

export function bothEras(
  build: () => McpServer,
  /** How each 2025 session's transport answers (JSON, an event store), beside its id and bookkeeping. */
  session: Omit<WebStandardStreamableHTTPServerTransportOptions, 'sessionIdGenerator'> = {},
): BothEras {
  const modern = createMcpHandler(build, { legacy: 'reject' });
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  return {
    async fetch(request, options) {
      const id = request.headers.get('mcp-session-id');
      if (id !== null) {
        const transport = sessions.get(id);
        if (transport) return transport.handleRequest(request, options);
        return Response.json(
          { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } },
          { status: 404 },
        );
      }
      // A 2026-07-28 request names its method in a header: its body is the handler's to read.
      let given = options;
      if (given?.parsedBody === undefined && !request.headers.has('mcp-method'))
        given = { ...options, parsedBody: await request.json().catch(() => undefined) };
      if (!isInitializeRequest(given?.parsedBody)) return modern.fetch(request, given);
      const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
        ...session,
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (sid) => void sessions.set(sid, transport),
        onsessionclosed: (sid) => void sessions.delete(sid),
      });
      await build().connect(transport);
      return transport.handleRequest(request, given);
    },
    async close() {
      await Promise.allSettled([...sessions.values()].map((t) => t.close()));
      await modern.close();
    },
  };
}
