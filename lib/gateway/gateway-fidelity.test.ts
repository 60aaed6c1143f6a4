// Pass-through fidelity: the real @modelcontextprotocol/server-everything (pinned) over stdio,
// the official SDK client in front of the gateway. Prompts, resources, progress, a sampling round
// trip from the server, logging notifications: as without the gateway. And bad input: a server
// command that does not exist, a client that disconnects mid-call, many concurrent calls.
import type { ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import {
  CreateMessageRequestSchema,
  LoggingMessageNotificationSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { cli } from '@/lib/auth/actor';
import { setPolicyRule } from '@/lib/server/policy/policy-rules';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { runStdio } from './stdio';
import { uniq } from '@/testing/factories';
import { consoleActors, recordsOf, testContext, type ConsoleActors, closedAfterEach } from '@/testing/gateway-fixtures';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

const EVERYTHING = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');

let actors: ConsoleActors;
beforeAll(async () => {
  actors = await consoleActors();
});
const open = closedAfterEach();

async function setUp(command = [process.execPath, EVERYTHING, 'stdio']) {
  const server = uniq('everything');
  await trustServer(cli, server);
  // Every tool of this server is let through without a reviewer (a grant is still redeemed for writes).
  await setPolicyRule(cli, { server, tool: null, requiredApprovals: 0 });
  const t = testContext(actors, server);
  const [clientSide, gatewaySide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'fidelity', version: '1.0.0' }, { capabilities: { sampling: {} } });
  const stdio = await runStdio(t.ctx, command, gatewaySide);
  open.push(async () => {
    await client.close().catch(() => undefined);
    await stdio.close();
    await t.ctx.reporter.close(2000);
  });
  return { ...t, server, client, stdio, connect: () => client.connect(clientSide) };
}

describe('gateway pass-through, server-everything over stdio', () => {
  it('prompts, resources, progress, sampling and logging arrive as the server sent them', async () => {
    const s = await setUp();
    const samplings: unknown[] = [];
    s.client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      samplings.push(request.params.messages);
      return { model: 'test-model', role: 'assistant', content: { type: 'text', text: 'sampled by the client' } };
    });
    const logs: string[] = [];
    s.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params.level));
    await s.connect();

    const prompts = await s.client.listPrompts();
    expect(prompts.prompts.map((p) => p.name)).toEqual(expect.arrayContaining(['args-prompt']));
    const prompt = await s.client.getPrompt({ name: 'args-prompt', arguments: { city: 'Lisbon', state: 'LX' } });
    expect(JSON.stringify(prompt.messages)).toContain('Lisbon');

    const resources = await s.client.listResources();
    expect(resources.resources.length).toBeGreaterThan(0);
    const first = await s.client.readResource({ uri: resources.resources[0].uri });
    expect(first.contents[0].uri).toBe(resources.resources[0].uri);

    const ref = uniq('req');
    const progress: number[] = [];
    const long = (await s.client.callTool(
      {
        name: 'trigger-long-running-operation',
        arguments: { duration: 0.3, steps: 3 },
        _meta: { 'countersign/requestRef': ref },
      },
      undefined,
      { onprogress: (p) => void progress.push(p.progress) },
    )) as CallToolResult;
    expect(long.isError).toBeFalsy();
    // In order. The SDK client runs notification handlers a microtask late and drops the progress
    // handler when the result arrives, so a last progress that shares a read with the result may
    // be dropped by the client itself, with or without the gateway.
    expect([
      [1, 2],
      [1, 2, 3],
    ]).toContainEqual(progress);

    const sampled = (await s.client.callTool({
      name: 'trigger-sampling-request',
      arguments: { prompt: 'say hi', maxTokens: 20 },
      _meta: { 'countersign/requestRef': ref },
    })) as CallToolResult;
    expect(JSON.stringify(sampled.content)).toContain('sampled by the client');
    expect(samplings).toHaveLength(1);

    await s.client.callTool({
      name: 'toggle-simulated-logging',
      arguments: {},
      _meta: { 'countersign/requestRef': ref },
    });
    await s.client.setLoggingLevel('debug');
    await vi.waitFor(() => expect(logs.length).toBeGreaterThan(0), { timeout: 15_000, interval: 100 });

    const records = await recordsOf(ref, s.ctx.reporter);
    expect(records.map((r) => [r.toolName, r.delivery])).toEqual([
      ['trigger-long-running-operation', 'completed'],
      ['trigger-sampling-request', 'completed'],
      ['toggle-simulated-logging', 'completed'],
    ]);
    // The write went through with a grant (auto-approved by the rule); the trusted reads without.
    expect(records[0].grantId).toBeNull();
    expect(records[1].grantId).toEqual(expect.any(String));
  }, 60_000);

  it('1,000 concurrent calls all answered, each recorded once', async () => {
    const s = await setUp();
    // One request reference for all of them: its budget of calls (default 200) raised to 1,000.
    await setPolicyRule(cli, { server: s.server, tool: null, requiredApprovals: 0, calls: 1000 });
    await s.connect();
    const ref = uniq('req');
    const calls = Array.from({ length: 1000 }, (_, i) =>
      s.client.callTool({ name: 'get-sum', arguments: { a: i, b: 1 }, _meta: { 'countersign/requestRef': ref } }),
    );
    const results = (await Promise.all(calls)) as CallToolResult[];
    results.forEach((r, i) => expect(JSON.stringify(r.content), String(i)).toContain(String(i + 1)));
    // Writes to the server's stdin wait for 'drain' one listener each while the pipe is full (the
    // SDK's StdioClientTransport; hence Node's MaxListenersExceededWarning here): every one is gone
    // once the pipe drained, none left behind.
    const stdin = (s.stdio.up as unknown as { _process?: ChildProcess })._process?.stdin;
    expect(stdin).toBeTruthy();
    expect(stdin!.listenerCount('drain')).toBe(0);
    await s.ctx.reporter.flush();
    await vi.waitFor(async () => expect((await recordsOf(ref, s.ctx.reporter)).length).toBe(1000), { timeout: 20_000 });
  }, 60_000);

  it('a client that disconnects mid-call: the call is recorded and the gateway closes cleanly', async () => {
    const s = await setUp();
    await s.connect();
    const ref = uniq('req');
    const pending = s.client
      .callTool({
        name: 'trigger-long-running-operation',
        arguments: { duration: 2, steps: 2 },
        _meta: { 'countersign/requestRef': ref },
      })
      .catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 300));
    await s.client.close();
    expect(await pending).toBeInstanceOf(Error);
    await vi.waitFor(
      async () => expect(await recordsOf(ref, s.ctx.reporter)).toMatchObject([{ delivery: 'unknown' }]),
      {
        timeout: 10_000,
      },
    );
  }, 30_000);

  it('a server command that does not exist: the gateway says so at start, nothing hangs', async () => {
    const t = testContext(actors, uniq('missing'));
    const [, gatewaySide] = InMemoryTransport.createLinkedPair();
    await expect(runStdio(t.ctx, ['/nonexistent/countersign-no-such-server'], gatewaySide)).rejects.toThrow(/ENOENT/);
    await t.ctx.reporter.close(100);
  }, 30_000);
});
