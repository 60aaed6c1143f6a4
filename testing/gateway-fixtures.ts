// Set-up for the gateway tests (never imported by the app): the real console in-process (its
// route handlers behind a switchable fetch, on the real database), real keys and reviewers, an
// in-process gateway with an SDK client in front of it, and what the console stored.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { cli } from '@/lib/auth/actor';
import { createApiKey, createPersonalToken } from '@/lib/server/credentials/credentials';
import { db } from '@/lib/server/db/db';
import { OutcomeReporter } from '@/lib/mcp/reporter';
import { gatewayContext, type GatewayContext } from '@/lib/gateway/context';
import { serveModern } from '@/lib/gateway/stdio-modern';
import type { Transport as V2Transport } from '@modelcontextprotocol/server';
import { api, call } from './api-harness';
import { switchableConsole } from './console-fetch';
import { makeUser, uniq } from './factories';

export const CONSOLE_URL = 'http://countersign.test';

export interface ConsoleActors {
  key: string;
  reviewer: string;
  reviewer2: string;
}

export async function consoleActors(): Promise<ConsoleActors> {
  const key = await createApiKey(cli, {
    name: uniq('gw-key'),
    scopes: ['outcomes:write', 'approvals:request', 'grants:redeem'],
  });
  if (!key.ok) throw new Error('consoleActors: key');
  const token = async () => {
    const user = await makeUser('reviewer');
    const t = await createPersonalToken(cli, user.userId, 'gateway-tests');
    if (!t.ok) throw new Error('consoleActors: token');
    return t.value.secret;
  };
  return { key: key.value.secret, reviewer: await token(), reviewer2: await token() };
}

/** Overrides of a test's gateway context, and of the policy cache's lifetime it is made with. */
export type ContextOverrides = Partial<GatewayContext> & { policyTtlMs?: number };

export function testContext(actors: ConsoleActors, server: string, over: ContextOverrides = {}) {
  const console = switchableConsole();
  const endpoint = { url: CONSOLE_URL, apiKey: actors.key, fetch: console.fetch, requestTimeoutMs: 5000 };
  const logs: string[] = [];
  const ctx = gatewayContext({
    server,
    principal: 'user_gw',
    organization: 'acme',
    agent: 'gateway-test',
    approvalWaitMs: 3000,
    endpoint,
    reporter: new OutcomeReporter({ ...endpoint, flushIntervalMs: 20, backoff: { initialMs: 20, maxMs: 200 } }),
    log: (line) => logs.push(line),
    pollInitialMs: 50,
    progressIntervalMs: 100,
    ...over,
  });
  return { ctx, console, logs };
}

/** An SDK client linked in-process to the gateway's client side; `down` goes to runStdio. */
export function linkedClient(): { client: Client; down: InMemoryTransport; connect: () => Promise<void> } {
  const [clientSide, gatewaySide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'gateway-test-client', version: '1.0.0' });
  return { client, down: gatewaySide, connect: () => client.connect(clientSide) };
}

/** Decides the one pending approval of this request reference through the API, as a reviewer does. */
export async function decide(token: string, requestRef: string, decision: 'approve' | 'deny', timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pending = await db.approvalRequest.findFirst({
      where: { requestRef, status: 'pending' },
      select: { id: true },
      orderBy: { createdAt: 'desc' },
    });
    if (pending) {
      const read = await call(api.getApproval, { token, params: { id: pending.id } });
      const r = await call(api.decide, {
        token,
        params: { id: pending.id },
        body: { decision, reason: `${decision} in a gateway test`, version: read.json.version },
      });
      if (r.status !== 200) throw new Error(`decide: ${r.status} ${r.text}`);
      return pending.id;
    }
    if (Date.now() > deadline) throw new Error(`decide: no pending approval for ${requestRef}`);
    await new Promise((r) => setTimeout(r, 30));
  }
}

/** The approval requests staged for this request reference, oldest first, each with its grant. */
export function approvalsOf(requestRef: string) {
  return db.approvalRequest.findMany({
    where: { requestRef },
    orderBy: { createdAt: 'asc' },
    select: { id: true, status: true, grant: { select: { id: true, redeemedAt: true } } },
  });
}

/** The records the console stored for this request reference, oldest first. */
export async function recordsOf(requestRef: string, reporter?: OutcomeReporter) {
  await reporter?.flush();
  return db.outcomeRecord.findMany({
    where: { requestRef },
    orderBy: { occurredAt: 'asc' },
    select: { toolName: true, delivery: true, category: true, grantId: true, argsDigest: true, eventId: true },
  });
}

/** The records of this request reference in the order the console received them, with what a guard's refusal points to. */
export function recordLinksOf(requestRef: string) {
  return db.outcomeRecord.findMany({
    where: { requestRef },
    orderBy: [{ receivedAt: 'asc' }],
    select: { id: true, toolName: true, delivery: true, category: true, earlierRecordId: true },
  });
}

/** The `call.refused` webhook events of a request reference, their data as enqueued. */
export async function refusedEventsOf(requestRef: string) {
  const events = await db.webhookEvent.findMany({
    where: { type: 'call.refused', data: { path: ['requestRef'], equals: requestRef } },
  });
  return events.map((e) => e.data);
}

/** As recordsOf, with what the records of 2026-07-28 rounds are checked by: attempt, observation, classification. */
export async function recordDetailsOf(requestRef: string, reporter?: OutcomeReporter) {
  await reporter?.flush();
  return db.outcomeRecord.findMany({
    where: { requestRef },
    orderBy: { occurredAt: 'asc' },
    select: {
      eventId: true,
      toolName: true,
      attempt: true,
      observed: true,
      boundary: true,
      delivery: true,
      category: true,
      retry: true,
    },
  });
}

/**
 * An MCP server (never started on its own) whose `flood` tool sends `count` logging notifications
 * during the call before it answers, and whose `echo` read answers at once. Both read-only.
 */
export function floodServer(): McpServer {
  const server = new McpServer({ name: 'flood', version: '1.0.0' }, { capabilities: { logging: {} } });
  const readOnly = { readOnlyHint: true, openWorldHint: false };
  server.registerTool(
    'flood',
    {
      inputSchema: { count: z.number().int().min(0).max(1_000_000) },
      outputSchema: { sent: z.number() },
      annotations: readOnly,
    },
    async ({ count }, extra) => {
      for (let i = 0; i < count; i++) {
        await extra.sendNotification({
          method: 'notifications/message',
          params: { level: 'info', logger: 'flood', data: `line ${i} of ${count}` },
        });
        // Yield now and then, as a real server writing to a socket does, so other requests are served.
        if (i % 200 === 0) await new Promise((r) => setImmediate(r));
      }
      return { content: [{ type: 'text', text: `sent ${count}` }], structuredContent: { sent: count } };
    },
  );
  server.registerTool(
    'echo',
    { inputSchema: { text: z.string() }, outputSchema: { text: z.string() }, annotations: readOnly },
    async ({ text }) => ({ content: [{ type: 'text', text }], structuredContent: { text } }),
  );
  return server;
}

/** What a test opened, closed after each test: push a closer; every one runs, even when one fails. */
export function closedAfterEach(): (() => Promise<unknown>)[] {
  const open: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    await Promise.allSettled(open.splice(0).map((f) => f()));
  });
  return open;
}

/**
 * An SDK client → the gateway's stdio side in process (serveModern: SDK v2's serveStdio and the
 * factory) → `mcp`, over in-memory transports, all closed after the test through `open`.
 */
export async function clientThroughGateway(
  mcp: McpServer,
  ctx: GatewayContext,
  open: (() => Promise<unknown>)[],
  name = 'gateway-test-client',
): Promise<Client> {
  const [clientSide, downSide] = InMemoryTransport.createLinkedPair();
  const served = await gatewayInMemory(mcp, ctx, downSide);
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(clientSide);
  open.push(async () => {
    await client.close();
    await served.close();
    await mcp.close();
    await ctx.reporter.close(2000);
  });
  return client;
}

/** The gateway (serveModern) between the client's side `down` and `mcp`, in memory. */
export async function gatewayInMemory(mcp: McpServer, ctx: GatewayContext, down: InMemoryTransport) {
  const [upSide, serverSide] = InMemoryTransport.createLinkedPair();
  await mcp.connect(serverSide);
  const served = serveModern(ctx, down as unknown as V2Transport, upSide as unknown as V2Transport, () => undefined);
  await served.started;
  return served;
}

/** `makeServer()` over Streamable HTTP on 127.0.0.1 (a session per client, no auth, no Host check of its own). */
export async function serveOverHttp(makeServer: () => McpServer): Promise<{ url: URL; close: () => Promise<void> }> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const id = req.headers['mcp-session-id'];
    const known = typeof id === 'string' ? sessions.get(id) : undefined;
    if (known) return known.handleRequest(req, res);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (sid) => void sessions.set(sid, transport),
    });
    await makeServer().connect(transport);
    await transport.handleRequest(req, res);
  };
  const http = createServer((req, res) => void handle(req, res).catch(() => res.end()));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`),
    close: async () => {
      await Promise.allSettled([...sessions.values()].map((t) => t.close()));
      http.closeAllConnections();
      await new Promise((r) => http.close(r));
    },
  };
}
