// What a reviewer sees of a call the gateway holds (docs/design.md "What a reviewer sees: what will
// run"): the gateway in front of the real @modelcontextprotocol/server-filesystem over stdio, and
// in front of an in-process server, the real console (route handlers in-process on the real
// database) staging, showing and deciding, read by a reviewer with a personal token through
// `GET /api/v1/approvals/{id}`.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolResultSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { cli } from '@/lib/auth/actor';
import { setPolicyRule } from '@/lib/server/policy/policy-rules';
import { trustServer } from '@/lib/server/policy/trusted-servers';
import { argsDigest } from '@/lib/mcp/digest';
import { runStdio } from './stdio';
import { api, call } from '@/testing/api-harness';
import { uniq } from '@/testing/factories';
import {
  approvalsOf,
  clientThroughGateway,
  closedAfterEach,
  consoleActors,
  linkedClient,
  recordsOf,
  testContext,
  type ConsoleActors,
} from '@/testing/gateway-fixtures';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

const FS_BIN = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/dist/index.js');

let actors: ConsoleActors;
beforeAll(async () => {
  actors = await consoleActors();
});
const open = closedAfterEach();

/** The id of the pending approval request of this request reference, once the gateway staged it. */
async function pendingApproval(requestRef: string): Promise<string> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const found = (await approvalsOf(requestRef)).find((a) => a.status === 'pending');
    if (found) return found.id;
    if (Date.now() > deadline) throw new Error(`no pending approval for ${requestRef}`);
    await new Promise((r) => setTimeout(r, 30));
  }
}

/** The request as a reviewer reads it. */
async function asReviewer(id: string) {
  const read = await call(api.getApproval, { token: actors.reviewer, params: { id } });
  expect(read.status, read.text).toBe(200);
  return read.json;
}

async function decideAs(id: string, decision: 'approve' | 'deny', version: number) {
  const r = await call(api.decide, {
    token: actors.reviewer,
    params: { id },
    body: { decision, reason: `${decision} after reading the arguments`, version },
  });
  expect(r.status, r.text).toBe(200);
}

const csError = (r: CallToolResult) => (r._meta as Record<string, unknown> | undefined)?.['countersign/error'];

describe('gateway, server-filesystem: the reviewer sees what will run', () => {
  it('a held write_file shows its path and content as sent (masked only where the masker masks); approved, it runs once; then the arguments are erased', async () => {
    // Spaces keep each run of the path short: the masker takes a long run of path characters with
    // a random-looking part (mkdtemp's suffix) for a token, and would mask the whole path.
    const dir = await mkdtemp(join(tmpdir(), 'countersign gateway args '));
    const server = uniq('fs-mcp');
    await trustServer(cli, server);
    await setPolicyRule(cli, { server, tool: 'write_file', requiredApprovals: 1 });
    const t = testContext(actors, server, { approvalWaitMs: 15_000 });
    const { client, down, connect } = linkedClient();
    const stdio = await runStdio(t.ctx, [process.execPath, FS_BIN, dir], down);
    await connect();
    open.push(async () => {
      await client.close();
      await stdio.close();
      await t.ctx.reporter.close(2000);
      await rm(dir, { recursive: true, force: true });
    });

    const file = join(dir, 'refund-4411 (approved).md');
    const content =
      'Refund of 12500.00 EUR on order 4411 — not 12.50.\n  Indented line, tab:\there.\nQuestions: ops@example.com\n';
    const args = { path: file, content };
    const ref = uniq('req');
    const declared = (await client.listTools()).tools.find((tool) => tool.name === 'write_file')?.description;
    const pending = client.callTool(
      { name: 'write_file', arguments: args, _meta: { 'countersign/requestRef': ref } },
      undefined,
      { timeout: 20_000 },
    ) as Promise<CallToolResult>;

    const id = await pendingApproval(ref);
    const seen = await asReviewer(id);
    expect(seen).toMatchObject({
      status: 'pending',
      requiredApprovals: 1,
      argsDigest: argsDigest(args),
      arguments: {
        path: file,
        // Written out by hand: the address is personal data, masked; everything else exactly as sent.
        content:
          'Refund of 12500.00 EUR on order 4411 — not 12.50.\n  Indented line, tab:\there.\nQuestions: [masked:email]\n',
      },
      argumentsNote: null,
      tool: { name: 'write_file' },
    });
    expect(Object.keys(seen.arguments)).toEqual(['path', 'content']);
    // The description as the server declared it in tools/list.
    expect(seen.tool.description).toMatch(/^Create a new file or completely overwrite an existing file/);
    expect(seen.tool.description).toBe(declared);
    await expect(readFile(file, 'utf8')).rejects.toThrow(); // held: not written yet

    await decideAs(id, 'approve', seen.version);
    const result = await pending;
    expect(result.isError).toBeFalsy();
    expect(await readFile(file, 'utf8')).toBe(content);
    // Ran once: one record, completed with the one grant, redeemed once.
    const records = await recordsOf(ref, t.ctx.reporter);
    expect(records).toMatchObject([{ toolName: 'write_file', delivery: 'completed', argsDigest: argsDigest(args) }]);
    const approvals = await approvalsOf(ref);
    expect(approvals).toMatchObject([{ id, status: 'redeemed', grant: { redeemedAt: expect.any(Date) } }]);
    expect(records[0].grantId).toBe(approvals[0].grant?.id);

    const after = await asReviewer(id);
    expect(after).toMatchObject({ status: 'redeemed', arguments: null, argsDigest: argsDigest(args) });
    expect(after.argumentsNote).toMatch(/^erased when its grant was redeemed at \d{4}-\d\d-\d\dT/);
  });
});

describe('gateway, an in-process server: what the approval request carries', () => {
  // Its description is longer than the console keeps, with an emoji across the cut.
  const LONG = `${'a'.repeat(8190)}😀${'b'.repeat(1000)}`;

  async function setUp() {
    const mcp = new McpServer({ name: 'deployer', version: '1.0.0' });
    mcp.registerTool(
      'deploy',
      {
        description: LONG,
        inputSchema: { service: z.string(), api_key: z.string(), replicas: z.number() },
        annotations: { readOnlyHint: false, destructiveHint: true },
      },
      async ({ service }) => ({ content: [{ type: 'text', text: `deployed ${service}` }] }),
    );
    const server = uniq('deployer');
    await trustServer(cli, server);
    await setPolicyRule(cli, { server, tool: 'deploy', requiredApprovals: 1 });
    const t = testContext(actors, server, { approvalWaitMs: 10_000 });
    const client = await clientThroughGateway(mcp, t.ctx, open, 'arguments-test');
    return { ...t, client };
  }

  it("a secret-named argument is masked whole; the description is cut at the console's limit; denied, the arguments are erased", async () => {
    const s = await setUp();
    const ref = uniq('req');
    const args = { service: 'billing', api_key: 'k-4411-not-for-reviewers', replicas: 3 };
    const pending = s.client.callTool({
      name: 'deploy',
      arguments: args,
      _meta: { 'countersign/requestRef': ref },
    }) as Promise<CallToolResult>;
    const id = await pendingApproval(ref);
    const seen = await asReviewer(id);
    expect(seen.arguments).toEqual({ service: 'billing', api_key: '[masked:secret]', replicas: 3 });
    expect(seen.tool.description).toBe(`${'a'.repeat(8190)}…`);
    await decideAs(id, 'deny', seen.version);
    expect(csError(await pending)).toMatchObject({ category: 'denied', retry: 'no' });
    const after = await asReviewer(id);
    expect(after).toMatchObject({ status: 'denied', arguments: null });
    expect(after.argumentsNote).toMatch(/^erased when denied at \d{4}-/);
  });

  it('arguments over 64 KiB: the console refuses to stage them, and the call is refused unsent', async () => {
    const s = await setUp();
    const ref = uniq('req');
    const r = (await s.client.callTool({
      name: 'deploy',
      arguments: { service: 'x'.repeat(70_000), api_key: 'k', replicas: 1 },
      _meta: { 'countersign/requestRef': ref },
    })) as CallToolResult;
    expect(r.isError).toBe(true);
    expect(JSON.stringify(r.content)).toContain('arguments_too_large');
    expect(await approvalsOf(ref)).toEqual([]);
    expect(await recordsOf(ref, s.ctx.reporter)).toMatchObject([{ toolName: 'deploy', delivery: 'never_sent' }]);
  });

  it('arguments that are not an object are never staged nor sent: the invalid-params error', async () => {
    const s = await setUp();
    const ref = uniq('req');
    // SDK v2's server checks a request's params before the gateway's handler runs, and answers a
    // malformed one with JSON-RPC -32602 (InvalidParams), as a server on SDK v2 answers it directly.
    const error = await s.client
      .request(
        {
          method: 'tools/call',
          params: { name: 'deploy', arguments: 'billing', _meta: { 'countersign/requestRef': ref } },
        } as never,
        CallToolResultSchema,
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32602);
    expect(await approvalsOf(ref)).toEqual([]);
    expect(await recordsOf(ref, s.ctx.reporter)).toEqual([]);
  });
});
