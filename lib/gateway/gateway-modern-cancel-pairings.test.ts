// Cancellation of a forwarded call on the SDK v2 paths that gateway-modern-cancel.test.ts does not
// cover (docs/gateway.md "Cancellation"): a 2026-07-28 host over stdio (its
// `notifications/cancelled` through serveStdio) in front of a 2026-07-28 child and of a 2025
// child; a bridged 2025 session (a 2025 client in front of a 2026-07-28-only server); a 2026-07-28
// client over HTTP in front of a 2025 server, behind the gateway's one shared session. In each, two
// transfers run at once and one is cancelled: the server sees that one cancelled, its record says
// cancelled with its outcome unknown (DESIGN.md: a write cancelled after it was sent), and the
// other runs to its end, answered and recorded completed / ok. Servers: testing/mcp-cancel-servers.ts;
// clients: SDK v2's own; the real console recording.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { cli } from '@/lib/auth/actor';
import { setPolicyRule } from '@/lib/server/policy/policy-rules';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { uniq } from '@/testing/factories';
import { closedAfterEach, consoleActors, recordsOf, testContext, type ConsoleActors } from '@/testing/gateway-fixtures';
import { cancelV1Server, cancelV2Server, noteIn, type Seen, type TransferState } from '@/testing/mcp-cancel-servers';
import { startLegacyHttp } from '@/testing/mcp-legacy-http';
import { stdioGateway, tsxCommand } from '@/testing/stdio-gateway';
import type { OutcomeReporter } from '../mcp/reporter';
import { runHttp } from './http';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

let actors: ConsoleActors;
beforeAll(async () => {
  actors = await consoleActors();
});
const open = closedAfterEach();

async function trusted() {
  const server = uniq('v2-cancel-pair');
  await trustServer(cli, server);
  await setPolicyRule(cli, { server, tool: null, requiredApprovals: 0 });
  return testContext(actors, server);
}

async function overHttp(upstream: string) {
  const t = await trusted();
  const gateway = await runHttp(t.ctx, new URL(upstream), '127.0.0.1', 0);
  open.push(async () => {
    await gateway.close();
    await t.ctx.reporter.close(2000);
  });
  return { url: gateway.url, reporter: t.ctx.reporter };
}

function sdkClient(mode: 'legacy' | { pin: '2026-07-28' }): Client {
  const c = new Client({ name: 'cancel-pairs-client', version: '1.0.0' }, { versionNegotiation: { mode } });
  open.push(() => c.close());
  return c;
}

interface Pairing {
  /** Who calls: clients that may share nothing but the gateway (one client may serve both calls). */
  kept: Client;
  cancelled: Client;
  /** What the server saw of transfer `id`. */
  state(id: string): TransferState | undefined;
  reporter: OutcomeReporter;
}

/**
 * Starts a long transfer and a short one at once; once the server runs both, cancels the long one.
 * Then: the server saw it cancelled, the short one finished and was answered, and the records say so.
 */
async function cancelOneOfTwo(p: Pairing) {
  const ref = uniq('req');
  const controller = new AbortController();
  const cancelled = p.cancelled
    .callTool(
      { name: 'transfer', arguments: { id: 'long', ms: 10_000 }, _meta: { 'countersign/requestRef': `${ref}-long` } },
      { signal: controller.signal, timeout: 30_000 },
    )
    .then(
      (answered) => ({ answered }),
      (error: unknown) => ({ error }),
    );
  const kept = p.kept.callTool(
    { name: 'transfer', arguments: { id: 'short', ms: 3000 }, _meta: { 'countersign/requestRef': `${ref}-short` } },
    { timeout: 30_000 },
  );
  await vi.waitFor(
    () => {
      expect(p.state('long')).toBe('running');
      expect(p.state('short')).toBe('running');
    },
    { timeout: 10_000, interval: 20 },
  );
  controller.abort('the user gave up');
  expect(await cancelled).toMatchObject({ error: expect.anything() });
  await vi.waitFor(() => expect(p.state('long')).toBe('cancelled'), { timeout: 5000, interval: 20 });
  // The other call in flight is not disturbed: it runs to its end and is answered.
  expect(p.state('short')).toBe('running');
  expect((await kept).content).toEqual([{ type: 'text', text: 'transfer short done' }]);
  expect(p.state('short')).toBe('finished');
  const records = await vi.waitFor(
    async () => {
      const found = [
        ...(await recordsOf(`${ref}-long`, p.reporter)).map((r) => ['long', r.delivery, r.category]),
        ...(await recordsOf(`${ref}-short`)).map((r) => ['short', r.delivery, r.category]),
      ];
      expect(found).toHaveLength(2);
      return found;
    },
    { timeout: 5000, interval: 50 },
  );
  // DESIGN.md's table: cancelled after send → unknown / cancelled; a result → completed / ok.
  expect(records).toEqual([
    ['long', 'unknown', 'cancelled'],
    ['short', 'completed', 'ok'],
  ]);
}

describe.each(['v2', 'v1'] as const)('a 2026-07-28 host over stdio, in front of the %s child', (sdk) => {
  it("cancels one of two calls with notifications/cancelled: the child sees it, the other goes on; records as DESIGN.md's table", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cancel-pairs-'));
    open.push(async () => rmSync(dir, { recursive: true, force: true }));
    const log = path.join(dir, 'seen.jsonl');
    const { hostSide, ctx } = await stdioGateway(actors, tsxCommand('mcp-cancel-servers.ts', 'stdio', sdk, log), open);
    const host = sdkClient({ pin: '2026-07-28' });
    await host.connect(hostSide);
    const state = (id: string) => {
      let last: TransferState | undefined;
      let text = '';
      try {
        text = readFileSync(log, 'utf8');
      } catch {
        return undefined;
      }
      for (const line of text.split('\n').filter(Boolean)) {
        const e = JSON.parse(line) as { id: string; state: TransferState };
        if (e.id === id) last = e.state;
      }
      return last;
    };
    await cancelOneOfTwo({ kept: host, cancelled: host, state, reporter: ctx.reporter });
  }, 30_000);
});

describe('a bridged 2025 session (a 2025 client in front of a 2026-07-28-only server)', () => {
  it('cancels one of two calls with notifications/cancelled: the server sees it, the other goes on; records as the table', async () => {
    const seen: Seen = new Map();
    const handler = createMcpHandler(() => cancelV2Server(noteIn(seen)), { legacy: 'reject' });
    const node = toNodeHandler(handler);
    const http = createServer((req, res) => void node(req, res));
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    open.push(async () => {
      await handler.close();
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    });
    const g = await overHttp(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
    const c = sdkClient('legacy');
    await c.connect(new StreamableHTTPClientTransport(new URL(g.url)));
    expect(c.getProtocolEra()).toBe('legacy');
    await cancelOneOfTwo({ kept: c, cancelled: c, state: (id) => seen.get(id), reporter: g.reporter });
  }, 30_000);
});

describe('a 2026-07-28 client over HTTP, in front of a 2025 server behind the shared session', () => {
  it("cancels its call: the server gets notifications/cancelled, another client's call on the same session goes on; records as the table", async () => {
    const seen: Seen = new Map();
    const { url } = await startLegacyHttp(() => cancelV1Server(noteIn(seen)), open);
    const g = await overHttp(url);
    const a = sdkClient({ pin: '2026-07-28' });
    const b = sdkClient({ pin: '2026-07-28' });
    await a.connect(new StreamableHTTPClientTransport(new URL(g.url)));
    await b.connect(new StreamableHTTPClientTransport(new URL(g.url)));
    await cancelOneOfTwo({ kept: b, cancelled: a, state: (id) => seen.get(id), reporter: g.reporter });
  }, 30_000);
});
