// The lib/mcp wrapper against a real MCP server (scripts/demo-mcp-server.ts) through the real SDK,
// over InMemoryTransport and over Streamable HTTP on 127.0.0.1, with the fake Countersign
// (testing/fake-countersign.ts, checked against the console's handlers) as the console. The
// server is SDK v1's (2025 era); the client SDK v2's, as an integrator's.
import { Client, StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  createDemoMcpServer,
  createDemoStore,
  startDemoMcpServer,
  DEMO_SERVER_NAME,
  type DemoStore,
} from '../scripts/demo-mcp-server';
import { observingFetch } from '@/lib/mcp/observe';
import { withCountersign, type CountersignClient, type GuardedCallResult } from '@/lib/mcp/countersign-client';
import { fakeCountersign, type Decision } from './fake-countersign';

export const SLOW_MS = 400;
export type Token = 'full' | 'ordersOnly' | 'bad';

interface Harness {
  store: DemoStore;
  connectFor(client: Client, token: Token): () => Promise<void>;
  loseConnection(): void;
  close(): Promise<void>;
}

export const harnesses: Record<'in-memory' | 'streamable-http', () => Promise<Harness>> = {
  'in-memory': async () => {
    const store = createDemoStore();
    const links: { server: McpServer; transport: InMemoryTransport }[] = [];
    return {
      store,
      connectFor: (client) => async () => {
        const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
        const server = createDemoMcpServer(store, { slowMs: SLOW_MS });
        links.push({ server, transport: serverSide });
        await server.connect(serverSide);
        await client.connect(clientSide as unknown as Transport);
      },
      loseConnection: () => void links.at(-1)?.transport.close(),
      close: async () => {
        for (const { server } of links) await server.close();
      },
    };
  },
  'streamable-http': async () => {
    const demo = await startDemoMcpServer({ slowMs: SLOW_MS });
    const token = (t: Token) => (t === 'bad' ? 'demo_not_a_token' : demo.tokens[t]);
    return {
      store: demo.store,
      connectFor: (client, t) => () =>
        client.connect(
          new StreamableHTTPClientTransport(demo.url, {
            fetch: observingFetch(),
            requestInit: { headers: { authorization: `Bearer ${token(t)}` } },
          }),
        ),
      loseConnection: () => demo.dropConnections(),
      close: () => demo.close(),
    };
  },
};

const cleanup: (() => Promise<unknown>)[] = [];
/** Closes every client and harness set up so far (call it in afterEach). */
export async function cleanUp() {
  while (cleanup.length) await cleanup.pop()!().catch(() => {});
}

export async function setup(
  kind: keyof typeof harnesses,
  decide?: (a: { body: { tool: { name: string } } }) => Decision,
  guard?: NonNullable<Parameters<typeof fakeCountersign>[0]>['guard'],
) {
  const harness = await harnesses[kind]();
  const countersign = fakeCountersign({ decide, guard, trustedServers: [DEMO_SERVER_NAME] });
  cleanup.push(() => harness.close());
  const wrap = (token: Token = 'full'): CountersignClient => {
    const client = new Client({ name: 'integration-agent', version: '1.0.0' });
    cleanup.push(() => client.close());
    return withCountersign(client, {
      url: 'http://countersign.test',
      apiKey: 'cs_live_fake',
      fetch: countersign.fetch,
      server: DEMO_SERVER_NAME,
      trustedServer: true,
      organization: 'acme',
      principal: 'user_193',
      agent: 'integration-agent',
      connect: harness.connectFor(client, token),
      lostConnectionGraceMs: 100,
      reporterOptions: { flushIntervalMs: 10 },
      approval: { pollInitialMs: 5, pollMaxMs: 20, maxWaitMs: 5000 },
    });
  };
  return { harness, countersign, wrap };
}

export const call = (summary: string, more: Partial<Parameters<CountersignClient['callTool']>[1]> = {}) => ({
  requestRef: 'req_integration',
  summary,
  ...more,
});
export const verdict = (r: GuardedCallResult) => {
  const { boundary, delivery, category, retry } = r.classification;
  return { boundary, delivery, category, retry };
};

export async function until(check: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}
