// The guards through the gateway (issue #43; docs/design.md "Guards at the point of execution")
// against the REAL console in-process on the real database: SDK v2's client, in both eras, through
// the HTTP gateway in front of an SDK v2 server whose `post_entry` write commits and then, when
// asked, cuts the connection (the case in which 2026-07-28 clients must re-issue the request), and
// whose `read_balance` read fails while told to. What each refusal must say is written by hand from
// the design's table; the server's own counters say what reached it. And the same client over
// stdio in front of @modelcontextprotocol/server-filesystem from npm: a completed write repeated,
// a failed read retried at once.
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import {
  Client,
  InMemoryTransport,
  StreamableHTTPClientTransport,
  type CallToolResult,
} from '@modelcontextprotocol/client';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { cli } from '@/lib/auth/actor';
import { setPolicyRule } from '@/lib/server/policy/policy-rules';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { uniq } from '@/testing/factories';
import {
  closedAfterEach,
  consoleActors,
  recordLinksOf,
  refusedEventsOf,
  testContext,
  type ConsoleActors,
} from '@/testing/gateway-fixtures';
import { startV2HttpServer, type V2HttpServer } from '@/testing/mcp-v2-server';
import type { GatewayContext } from './context';
import { runHttp } from './http';
import { runStdio } from './stdio';

const FS_BIN = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/dist/index.js');

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

let actors: ConsoleActors;
beforeAll(async () => {
  actors = await consoleActors();
});
const open = closedAfterEach();

type Mode = 'legacy' | 'pinned';

/** The ledger server: what reached it, and switches for the next calls. */
function ledger() {
  const state = { entries: 0, reads: 0, dropNext: false, failReads: false, upstream: null as V2HttpServer | null };
  const build = () => {
    const server = new McpServer({ name: 'ledger', version: '1.0.0' });
    server.registerTool(
      'post_entry',
      {
        description: 'Posts one ledger entry. It is never undone, and must not be repeated for the same entry.',
        inputSchema: z.object({ amount: z.string() }),
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      },
      async ({ amount }) => {
        state.entries++;
        if (state.dropNext) {
          state.dropNext = false;
          // Committed, and then the connection is gone before the answer: the caller cannot know.
          setImmediate(() => state.upstream?.dropConnections());
          return new Promise<never>(() => undefined);
        }
        return { content: [{ type: 'text', text: `posted ${amount}` }] };
      },
    );
    server.registerTool(
      'read_balance',
      {
        description: 'Reads the balance of the ledger. It never changes anything.',
        inputSchema: z.object({ account: z.string() }),
        annotations: { readOnlyHint: true, openWorldHint: false },
      },
      async () => {
        state.reads++;
        if (state.failReads)
          return {
            isError: true,
            content: [{ type: 'text', text: 'ledger unavailable' }],
            structuredContent: { error: { category: 'unavailable' } },
          };
        return { content: [{ type: 'text', text: 'balance 10.00' }] };
      },
    );
    return server;
  };
  return { state, build };
}

/** A trusted server whose writes need no approval, behind `instances` gateways sharing one console. */
async function setUp(mode: Mode, instances = 1, over: Partial<GatewayContext> = {}) {
  const server = uniq('ledger');
  await trustServer(cli, server);
  await setPolicyRule(cli, { server, tool: null, requiredApprovals: 0 });
  const l = ledger();
  const upstream = await startV2HttpServer(0, '127.0.0.1', l.build);
  l.state.upstream = upstream;
  open.push(() => upstream.close());
  const gateways = [];
  for (let i = 0; i < instances; i++) {
    const t = testContext(actors, server, over);
    const g = await runHttp(t.ctx, new URL(upstream.url), '127.0.0.1', 0);
    const client = new Client(
      { name: 'guards-test-client', version: '1.0.0' },
      { versionNegotiation: { mode: mode === 'legacy' ? 'legacy' : { pin: '2026-07-28' } } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(g.url)));
    open.push(async () => {
      await client.close();
      await g.close();
      await t.ctx.reporter.close(2000);
    });
    gateways.push({ ...t, client });
  }
  return { server, ledger: l.state, gateways };
}

const meta = (ref: string, key?: string) => ({
  'countersign/requestRef': ref,
  ...(key ? { 'countersign/idempotencyKey': key } : {}),
});
const guardError = (r: CallToolResult) =>
  (r._meta as Record<string, unknown> | undefined)?.['countersign/error'] as Record<string, unknown> | undefined;

/** Calls a tool; an error the client throws (the connection cut) is answered as null. */
async function attempt(client: Client, name: string, args: Record<string, unknown>, m: Record<string, string>) {
  try {
    return (await client.callTool({ name, arguments: args, _meta: m }, { timeout: 5000 })) as CallToolResult;
  } catch {
    return null;
  }
}

async function eventually(check: () => Promise<boolean>, ms = 5000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('eventually: not within the time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

const recordsOf = recordLinksOf;

describe.each<Mode>(['legacy', 'pinned'])('guards through the gateway, SDK v2 client (%s)', (mode) => {
  it('a committed write whose answer was lost: the same call is refused outcome_unknown; its own idempotency key replays it', async () => {
    const { ledger, gateways } = await setUp(mode);
    const [{ client, ctx }] = gateways;
    const ref = `ref-${randomUUID()}`;
    ledger.dropNext = true;
    expect(await attempt(client, 'post_entry', { amount: '12.50' }, meta(ref, 'entry-1'))).toBeNull();
    expect(ledger.entries).toBe(1);

    // The client re-issues it, without the operation's key: not sent, naming the unknown.
    const again = await attempt(client, 'post_entry', { amount: '12.50' }, meta(ref));
    expect(again?.isError).toBe(true);
    await ctx.reporter.flush();
    const unknown = (await recordsOf(ref)).find((r) => r.delivery === 'unknown');
    expect(unknown).toBeDefined();
    expect(guardError(again!)).toEqual({
      category: 'outcome_unknown',
      retry: 'after_state_check',
      recordId: unknown!.id,
    });
    expect(ledger.entries).toBe(1);

    // The same operation's own key: the safe replay goes through, once the backoff after the
    // unknown attempt has passed (a refusal by the guards is no attempt: 1 s after the unknown).
    await new Promise((r) => setTimeout(r, 1100));
    const replay = await attempt(client, 'post_entry', { amount: '12.50' }, meta(ref, 'entry-1'));
    expect(replay?.isError).toBeFalsy();
    expect(ledger.entries).toBe(2);

    // The same key with other arguments names another operation.
    const other = await attempt(client, 'post_entry', { amount: '99.00' }, meta(ref, 'entry-1'));
    expect(guardError(other!)).toMatchObject({ category: 'idempotency_key_reused', retry: 'after_correction' });
    // And once it is done, the same call in the same request is already done.
    const done = await attempt(client, 'post_entry', { amount: '12.50' }, meta(ref, 'entry-1'));
    expect(guardError(done!)).toMatchObject({ category: 'already_done', retry: 'no' });
    expect(ledger.entries).toBe(2);

    // Each refusal is a record of its own: never sent, its category, pointing at the earlier record.
    await ctx.reporter.flush();
    const refused = (await recordsOf(ref)).filter((r) => r.delivery === 'never_sent');
    expect(refused.map((r) => r.category)).toEqual(['outcome_unknown', 'idempotency_key_reused', 'already_done']);
    expect(refused[0].earlierRecordId).toBe(unknown!.id);
  });

  it('a failing read retried at once is refused retry_too_soon; after the backoff it goes; past its budget, budget_exhausted', async () => {
    const { server, ledger, gateways } = await setUp(mode);
    await setPolicyRule(cli, {
      server,
      tool: 'read_balance',
      requiredApprovals: 0,
      failedAttempts: 2,
      backoffBaseMs: 200,
    });
    const [{ client }] = gateways;
    const ref = `ref-${randomUUID()}`;
    ledger.failReads = true;
    const first = await attempt(client, 'read_balance', { account: 'a' }, meta(ref));
    expect(first?.isError).toBe(true);
    expect(ledger.reads).toBe(1);
    const soon = await attempt(client, 'read_balance', { account: 'a' }, meta(ref));
    const error = guardError(soon!);
    expect(error).toMatchObject({ category: 'retry_too_soon', retry: 'backoff' });
    expect(error!.retryAfterMs).toBeGreaterThan(0);
    expect(error!.retryAfterMs).toBeLessThanOrEqual(200);
    expect(ledger.reads).toBe(1);

    await new Promise((r) => setTimeout(r, 250));
    expect((await attempt(client, 'read_balance', { account: 'a' }, meta(ref)))?.isError).toBe(true);
    expect(ledger.reads).toBe(2);
    await new Promise((r) => setTimeout(r, 450));
    const spent = await attempt(client, 'read_balance', { account: 'a' }, meta(ref));
    expect(guardError(spent!)).toMatchObject({ category: 'budget_exhausted', retry: 'no' });
    expect(ledger.reads).toBe(2);
  });

  it("a read refused by the gateway's read guards is recorded in the console, pointing to the earlier read, and sent as call.refused", async () => {
    const { server, ledger, gateways } = await setUp(mode);
    const [{ client, ctx }] = gateways;
    const ref = `ref-${randomUUID()}`;
    ledger.failReads = true;
    expect((await attempt(client, 'read_balance', { account: 'a' }, meta(ref)))?.isError).toBe(true);
    // The console has answered for the failed read: the gateway knows its id.
    await ctx.reporter.flush();
    const [failed] = await recordsOf(ref);
    const soon = await attempt(client, 'read_balance', { account: 'a' }, meta(ref));
    expect(guardError(soon!)).toMatchObject({ category: 'retry_too_soon', retry: 'backoff', recordId: failed.id });
    await ctx.reporter.flush();
    expect(await recordsOf(ref)).toEqual([
      expect.objectContaining({ id: failed.id, delivery: 'rejected' }),
      expect.objectContaining({ delivery: 'never_sent', category: 'retry_too_soon', earlierRecordId: failed.id }),
    ]);
    const refused = (await recordsOf(ref))[1];
    expect(await refusedEventsOf(ref)).toEqual([
      { category: 'retry_too_soon', server, tool: 'read_balance', requestRef: ref, recordId: refused.id },
    ]);
  });

  it('two gateway instances share the console: an unknown left through one is refused through the other', async () => {
    const { ledger, gateways } = await setUp(mode, 2);
    const [a, b] = gateways;
    const ref = `ref-${randomUUID()}`;
    ledger.dropNext = true;
    expect(await attempt(a.client, 'post_entry', { amount: '40.00' }, meta(ref))).toBeNull();
    // What the guards decide on is what the console holds: the first gateway's record of it.
    await eventually(async () => {
      await a.ctx.reporter.flush();
      return (await recordsOf(ref)).some((r) => r.delivery === 'unknown');
    });
    const again = await attempt(b.client, 'post_entry', { amount: '40.00' }, meta(ref));
    expect(guardError(again!)).toMatchObject({ category: 'outcome_unknown' });
    expect(ledger.entries).toBe(1);
  });

  it('the console down: a write fails closed, a trusted read goes through', async () => {
    const { ledger, gateways } = await setUp(mode);
    const [{ client, console }] = gateways;
    const ref = `ref-${randomUUID()}`;
    // The policy is known first (the gateway asks for it on the first call).
    expect((await attempt(client, 'read_balance', { account: 'a' }, meta(ref)))?.isError).toBeFalsy();
    console.down();
    const write = await attempt(client, 'post_entry', { amount: '1.00' }, meta(ref));
    expect(guardError(write!)).toMatchObject({ category: 'unavailable', retry: 'backoff' });
    expect(ledger.entries).toBe(0);
    expect((await attempt(client, 'read_balance', { account: 'b' }, meta(ref)))?.isError).toBeFalsy();
    expect(ledger.reads).toBe(2);
    console.up();
  });
});

describe.each<Mode>(['legacy', 'pinned'])('guards over stdio, server-filesystem, SDK v2 client (%s)', (mode) => {
  /** The gateway over stdio in front of server-filesystem on a fresh directory; its writes need no approval. */
  async function filesystem() {
    const dir = await mkdtemp(path.join(tmpdir(), 'cs-guards-'));
    const server = uniq('fs');
    await trustServer(cli, server);
    await setPolicyRule(cli, { server, tool: null, requiredApprovals: 0 });
    const t = testContext(actors, server);
    const [clientSide, gatewaySide] = InMemoryTransport.createLinkedPair();
    const g = await runStdio(t.ctx, [process.execPath, FS_BIN, dir], gatewaySide as unknown as Transport);
    const client = new Client(
      { name: 'guards-fs-client', version: '1.0.0' },
      { versionNegotiation: { mode: mode === 'legacy' ? 'legacy' : { pin: '2026-07-28' } } },
    );
    await client.connect(clientSide);
    open.push(async () => {
      await client.close();
      await g.close();
      await t.ctx.reporter.close(2000);
      await rm(dir, { recursive: true, force: true });
    });
    return { client, dir };
  }

  it('write_file done in this request: the same call again is already done, and does not overwrite; a key of its own writes', async () => {
    const { client, dir } = await filesystem();
    const ref = `ref-${randomUUID()}`;
    const file = path.join(dir, 'note.txt');
    const args = { path: file, content: 'approved content' };
    expect((await attempt(client, 'write_file', args, meta(ref)))?.isError).toBeFalsy();
    await writeFile(file, 'changed since');
    const again = await attempt(client, 'write_file', args, meta(ref));
    expect(guardError(again!)).toMatchObject({ category: 'already_done', retry: 'no' });
    expect(await readFile(file, 'utf8')).toBe('changed since');
    expect((await attempt(client, 'write_file', args, meta(ref, uniq('op'))))?.isError).toBeFalsy();
    expect(await readFile(file, 'utf8')).toBe('approved content');
  });

  it('read_text_file of a missing file, read again at once: too soon, with how long to wait', async () => {
    const { client, dir } = await filesystem();
    const ref = `ref-${randomUUID()}`;
    const args = { path: path.join(dir, 'missing.txt') };
    const first = await attempt(client, 'read_text_file', args, meta(ref));
    expect(first?.isError).toBe(true);
    expect(guardError(first!)).toBeUndefined(); // the server's own error
    const soon = await attempt(client, 'read_text_file', args, meta(ref));
    expect(guardError(soon!)).toMatchObject({ category: 'retry_too_soon', retry: 'backoff' });
  });
});
